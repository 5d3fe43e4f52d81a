package outputs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// File is an output being written: a temporary file beside its destination, renamed over it by
// Commit, so that the destination holds the whole file or what it held before, never part of
// one (a full disk, a crash). A destination that is a device or a FIFO is written into instead:
// renaming a file over it would replace it, and as root, /dev/null with it.
type File struct {
	*os.File
	dest    string
	inPlace bool
	// keep: Commit refuses to replace a file that came to be at dest while this one was written.
	keep bool
}

// Create starts writing the output at path, creating the directories missing above it. With
// replace (--force), Commit replaces what is there; without, a file that another process put at
// path since it was checked is left as it is, and Commit fails with fs.ErrExist.
func Create(path string, replace bool) (*File, error) { return create(path, !replace) }

func create(path string, keep bool) (*File, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &File{File: f, dest: path, inPlace: true}, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := createTemp(dir, filepath.Base(path))
	if err != nil {
		return nil, err
	}
	return &File{File: f, dest: path, keep: keep}, nil
}

// Commit puts the file in place: synced to disk, then renamed over the destination (without
// replace, given the name only where no file is). The
// temporary file is gone whether or not it succeeds.
func (f *File) Commit() error {
	if f.inPlace {
		return f.Close()
	}
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
	case f.keep:
		err = linkNew(f.Name(), f.dest)
	default:
		err = os.Rename(f.Name(), f.dest)
	}
	os.Remove(f.Name()) // gone after a rename; the spare name after a link
	return err
}

// linkNew gives the file at tmp the name dest, unless dest exists: a hard link is made only
// where no file is, in one step. A file system without hard links falls back to a rename after
// a look, which leaves a moment for another process.
func linkNew(tmp, dest string) error {
	err := os.Link(tmp, dest)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, serr := os.Lstat(dest); serr == nil {
		return &fs.PathError{Op: "write", Path: dest, Err: fs.ErrExist}
	}
	return os.Rename(tmp, dest)
}

// Abort drops what was written; the destination is left as it was.
func (f *File) Abort() {
	f.Close()
	if !f.inPlace {
		os.Remove(f.Name())
	}
}

// Write writes what write produces to path, whole or not at all, replacing a file there only
// with replace (see Create).
func Write(path string, replace bool, write func(io.Writer) error) error {
	f, err := Create(path, replace)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// FreeName is path when no file is there, else the first of path-2, path-3, … (before the
// extension) that is free: for names a command chooses itself, such as a result named after
// the second it was started in.
func FreeName(path string) string {
	ext := filepath.Ext(path)
	stem := strings.TrimSuffix(path, ext)
	for n := 2; ; n++ {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) || n > 10000 {
			return path
		}
		path = fmt.Sprintf("%s-%d%s", stem, n, ext)
	}
}

// createTemp creates a new file in dir to be renamed into place. Unlike os.CreateTemp, whose
// files are 0600, it asks for 0666 and lets the user's umask decide, as for any file a command
// writes (0644 as usual). The name starts with a dot and says whose it is.
func createTemp(dir, base string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, fmt.Sprintf(".authzbench-%s-%d-%d.tmp", base, os.Getpid(), rand.Uint32()))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil || !errors.Is(err, os.ErrExist) || try == 100 {
			return f, err
		}
	}
}
