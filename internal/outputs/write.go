package outputs

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// File is an output being written: a temporary file beside its destination, renamed over it by
// Commit, so that the destination holds the whole file or what it held before, never part of
// one (a full disk, a crash). A destination that is a device or a FIFO is written into instead:
// renaming a file over it would replace it, and as root, /dev/null with it.
type File struct {
	*os.File
	dest    string
	inPlace bool
}

// Create starts writing the output at path, creating the directories missing above it.
func Create(path string) (*File, error) {
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
	return &File{File: f, dest: path}, nil
}

// Commit puts the file in place: synced to disk, then renamed over the destination. The
// temporary file is gone whether or not it succeeds.
func (f *File) Commit() error {
	if f.inPlace {
		return f.Close()
	}
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), f.dest)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// Abort drops what was written; the destination is left as it was.
func (f *File) Abort() {
	f.Close()
	if !f.inPlace {
		os.Remove(f.Name())
	}
}

// WriteFile writes what write produces to path, whole or not at all (see File).
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
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
