package scenario

import (
	"path/filepath"
	"time"

	"github.com/authzbench/authzbench/internal/change"
)

// Changes are a scenario file's changes, change_rate and stale_allowed keys: the world changing
// during the run (docs/changes.md), as the flags of the same names give it; a flag given
// overrides its key. The stream itself is read against the workload it changes once the
// workloads are built, as --changes is.
type Changes struct {
	// File is "builtin", "builtin-policy" or the changes file, from the scenario's directory; ""
	// for none.
	File string
	// Rate is change_rate as written ("10/s"), checked; "" when not given.
	Rate string
	// StaleAllowed is stale_allowed; nil when not given.
	StaleAllowed *time.Duration
	// Line is the changes key's line, for a message about the stream.
	Line int
}

// builtinChanges is the changes key's word for the workload's own stream;
// builtinPolicyChanges for its own stream of policy replacements.
const (
	builtinChanges       = "builtin"
	builtinPolicyChanges = "builtin-policy"
)

// readChanges checks the file's change keys: a rate that is not one, a negative stale_allowed,
// either without changes; each refused by its line.
func readChanges(f *file, baseDir string, bad func(line int, format string, args ...any)) Changes {
	var c Changes
	if f.Changes.Set {
		c.File, c.Line = f.Changes.V, f.Changes.Line
		switch {
		case c.File == "":
			bad(f.Changes.Line, "changes: want builtin (the workload's own stream), builtin-policy (its policy replaced) or a changes file")
		case c.File != builtinChanges && c.File != builtinPolicyChanges && !filepath.IsAbs(c.File) && baseDir != "":
			c.File = filepath.Join(baseDir, c.File)
		}
	}
	if f.ChangeRate.Set {
		if _, err := change.ParseRate(f.ChangeRate.V); err != nil {
			bad(f.ChangeRate.Line, "change_rate %v", err)
		}
		c.Rate = f.ChangeRate.V
		if !f.Changes.Set {
			bad(f.ChangeRate.Line, "change_rate applies to a run with changes: give changes too")
		}
	}
	if f.StaleAllowed.Set {
		if f.StaleAllowed.V < 0 {
			bad(f.StaleAllowed.Line, "stale_allowed %s: want 0 or more", f.StaleAllowed.V)
		}
		d := f.StaleAllowed.V
		c.StaleAllowed = &d
		if !f.Changes.Set {
			bad(f.StaleAllowed.Line, "stale_allowed applies to a run with changes: give changes too")
		}
	}
	return c
}
