// Package outputs keeps the files a command writes from replacing a measurement: a Plan names
// every file a command will write and every file it reads, and is checked before any load; File
// and WriteFile put each output in place whole or not at all. It decides where files may go and
// how they are written, not what is in them (the result, report and profile packages say that).
package outputs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Plan is what one command will write, each output with the flag that named it, and what it
// reads. The zero value is an empty plan.
type Plan struct {
	// Force lets an output replace a file that already exists (the --force flag).
	Force   bool
	outputs []named
	inputs  []named
	stores  []named
}

// named is a path with what named it: a flag ("--html") or a description ("RESULT.json").
type named struct{ by, path string }

// Output adds a file the command will write, named by flag; an empty path is no output.
func (p *Plan) Output(flag, path string) {
	if path != "" {
		p.outputs = append(p.outputs, named{flag, path})
	}
}

// Input adds files the command reads, named by what gave them; empty paths are skipped.
func (p *Plan) Input(by string, paths ...string) {
	for _, path := range paths {
		if path != "" {
			p.inputs = append(p.inputs, named{by, path})
		}
	}
}

// Store adds a database the command adds to (a history file): it may exist, since it is added
// to rather than replaced, but it is never one of the command's other outputs or inputs, which
// it would overwrite or be overwritten by. An empty path is none.
func (p *Plan) Store(flag, path string) {
	if path != "" {
		p.stores = append(p.stores, named{flag, path})
	}
}

// Check finds, before any load, every output that could not be written, that shares its file
// with another output or with an input, or that would replace an existing file without Force.
// A device or a FIFO (/dev/null, /dev/stdout) replaces nothing: it is written into, and may be
// named more than once. Every problem is reported, not only the first.
func (p *Plan) Check() error {
	var errs []error
	for i, o := range p.outputs {
		special, err := checkWritable(o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if special {
			continue
		}
		for _, earlier := range p.outputs[:i] {
			if sameFile(o.path, earlier.path) {
				errs = append(errs, fmt.Errorf("%s %s and %s %s are one file: each output needs its own, or one would replace the other",
					earlier.by, earlier.path, o.by, o.path))
			}
		}
		input := false
		for _, in := range p.inputs {
			if sameFile(o.path, in.path) {
				errs = append(errs, fmt.Errorf("%s %s is %s, which this command reads (%s): an output never replaces an input",
					o.by, o.path, in.path, in.by))
				input = true
			}
		}
		if _, err := os.Stat(o.path); err == nil && !p.Force && !input {
			errs = append(errs, fmt.Errorf("%s %s already exists: name a new file, or give --force to replace it", o.by, o.path))
		}
	}
	for _, st := range p.stores {
		if fi, err := os.Stat(st.path); err == nil && fi.IsDir() {
			errs = append(errs, fmt.Errorf("%s %s is a directory: name a file (%s)", st.by, st.path, filepath.Join(st.path, "history.db")))
			continue
		}
		for _, o := range p.outputs {
			if sameFile(st.path, o.path) {
				errs = append(errs, fmt.Errorf("%s %s and %s %s are one file: the database is never another output", st.by, st.path, o.by, o.path))
			}
		}
		for _, in := range p.inputs {
			if sameFile(st.path, in.path) {
				errs = append(errs, fmt.Errorf("%s %s is %s, which this command reads (%s): the database is never an input file", st.by, st.path, in.path, in.by))
			}
		}
	}
	return errors.Join(errs...)
}

// checkWritable finds an output no file could be written to: a directory, a path under a
// file, or a place that cannot be created or written. special is true for a device or a FIFO,
// which is written into.
func checkWritable(o named) (special bool, err error) {
	if fi, err := os.Stat(o.path); err == nil {
		if fi.IsDir() {
			return false, fmt.Errorf("%s %s is a directory: name a file (%s)", o.by, o.path, filepath.Join(o.path, "result.json"))
		}
		if !fi.Mode().IsRegular() {
			return true, nil
		}
	}
	// The nearest directory that exists must be one, and must take a new file: the writers
	// create what is missing below it.
	dir := filepath.Dir(o.path)
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return false, fmt.Errorf("%s %s: %s is not a directory", o.by, o.path, dir)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return false, fmt.Errorf("%s %s: %w", o.by, o.path, err)
		}
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
	}
	probe, err := createTemp(dir, "write-check")
	if err != nil {
		return false, fmt.Errorf("%s %s: cannot write in %s: %w", o.by, o.path, dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return false, nil
}

// sameFile reports whether two paths name one file: the same file on disk when both exist (a
// hard link, a symbolic link, ./r.json and r.json), else the same place once the directories
// that exist are resolved.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	return place(a) == place(b)
}

// place is where path would be created: its absolute path, with the part of it that exists
// resolved through symbolic links.
func place(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for dir := abs; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		up := filepath.Dir(dir)
		if up == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = up
	}
}
