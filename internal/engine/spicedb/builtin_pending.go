package spicedb

import "github.com/authzbench/authzbench/internal/workload"

// TEMPORARY, until the SpiceDB versions of the built-in workloads land on this branch (they are
// written in parallel, in builtin*.go of this package, with these signatures): the merge
// replaces this file. Until then no built-in workload has a SpiceDB version, and the spicedb
// targets run users' files alone.

// BuiltinFixture is the SpiceDB version of the built-in workload w, Assertions[i] the check of
// w.Inputs[i]; nil, with no error, for a workload with none.
func BuiltinFixture(w *workload.Workload) (*Fixture, error) { return nil, nil }

// HasBuiltin reports whether the built-in workload w has a SpiceDB version.
func HasBuiltin(w *workload.Workload) bool { return false }

// WhyNot says why the workload w has no SpiceDB version; empty when it has one, or nothing is
// known to say.
func WhyNot(w *workload.Workload) string { return "" }

// Differences says what the SpiceDB version of the built-in workload w is handed, or does
// differently, for the ‡ rows; empty when nothing.
func Differences(w *workload.Workload) string { return "" }
