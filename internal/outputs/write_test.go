package outputs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A write that fails, at any point, leaves the destination as it was and no temporary file:
// a disk that fills after 8 KiB of a page does not leave 8 KiB of it under the name asked for.
func TestWriteIsWholeOrNothing(t *testing.T) {
	noSpace := func(w io.Writer) error {
		w.Write(bytes.Repeat([]byte("x"), 8<<10))
		return syscall.ENOSPC
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, path string)
		write func(io.Writer) error
		fails bool
		want  string // the destination's content afterwards; "" for none
	}{
		{"new file", nil, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, false, "new"},
		{"replaces a file", func(t *testing.T, p string) { os.WriteFile(p, []byte("old"), 0o644) },
			func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, false, "new"},
		{"the disk fills: no file", nil, noSpace, true, ""},
		{"the disk fills: the old file stays", func(t *testing.T, p string) { os.WriteFile(p, []byte("old"), 0o644) }, noSpace, true, "old"},
		{"the rename fails: a directory took the name", func(t *testing.T, p string) { os.MkdirAll(filepath.Join(p, "x"), 0o755) },
			func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out")
			if tc.setup != nil {
				tc.setup(t, path)
			}
			err := Write(path, true, tc.write)
			if (err != nil) != tc.fails {
				t.Fatalf("err %v, want failure %t", err, tc.fails)
			}
			if strings.Contains(tc.name, "disk fills") && !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("err %v: want the write's own error, ENOSPC", err)
			}
			if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
				b, _ := os.ReadFile(path)
				if string(b) != tc.want {
					t.Errorf("%s holds %d bytes %.10q, want %q", path, len(b), b, tc.want)
				}
			} else if tc.want != "" {
				t.Errorf("%s: %v, want %q", path, err, tc.want)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".authzbench-") {
					t.Errorf("temporary file left behind: %s", e.Name())
				}
			}
		})
	}
}

// Without replace, a file another process put at the destination while the output was being
// written stays, and the write says so; a name the command chooses itself moves aside instead.
func TestWriteNeverReplacesWithoutBeingAsked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	f, err := Create(path, false)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "ours")
	os.WriteFile(path, []byte("theirs"), 0o644)
	if err := f.Commit(); !errors.Is(err, fs.ErrExist) {
		t.Errorf("commit over a file that came meanwhile: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "theirs" {
		t.Errorf("%s holds %q, want the other process's file", path, b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in %s, want only r.json", len(entries), dir)
	}
	os.WriteFile(filepath.Join(dir, "r-2.json"), nil, 0o644)
	if got := FreeName(path); got != filepath.Join(dir, "r-3.json") {
		t.Errorf("FreeName %s, want r-3.json", got)
	}
	if got := FreeName(filepath.Join(dir, "new.json")); got != filepath.Join(dir, "new.json") {
		t.Errorf("FreeName of a free name %s", got)
	}
}
