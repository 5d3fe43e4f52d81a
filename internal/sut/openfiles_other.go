//go:build !unix

package sut

import "math"

// RaiseOpenFiles has no limit to raise here.
func RaiseOpenFiles() error { return nil }

// OpenFilesLimit: no per-process limit this program can read; nothing is refused.
func OpenFilesLimit() (soft, hard uint64, err error) { return math.MaxUint64, math.MaxUint64, nil }
