package spicedb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeServer writes an executable script called name in dir that answers `version` with line.
func fakeServer(t *testing.T, dir, name, line string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho '"+line+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// The server to start is the one given, else authzbench-spicedb beside authzbench, else on
// PATH; with none, the error says where it looked.
func TestFindServerOrder(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh for the fake servers")
	}
	beside, onPath, given := t.TempDir(), t.TempDir(), t.TempDir()
	fakeServer(t, onPath, ServerProgram, "spicedb v1.0.0-path")
	t.Setenv("PATH", onPath)
	ctx := context.Background()

	c, err := findServer(ctx, "", beside)
	if err != nil || c.Version != "v1.0.0-path" || c.Found != "on PATH" {
		t.Errorf("nothing beside: %+v, %v; want the one on PATH", c, err)
	}
	fakeServer(t, beside, ServerProgram, "spicedb v1.0.0-beside")
	if c, err = findServer(ctx, "", beside); err != nil || c.Version != "v1.0.0-beside" || c.Found != "beside authzbench" {
		t.Errorf("one beside: %+v, %v; want it before PATH's", c, err)
	}
	bin := fakeServer(t, given, "spicedb", "spicedb v1.56.2")
	if c, err = findServer(ctx, bin, beside); err != nil || c.Version != "v1.56.2" || c.Path != bin {
		t.Errorf("one given: %+v, %v; want it before any other", c, err)
	}
	wrong := fakeServer(t, given, "opa", "Version: 1.22.2")
	if _, err = findServer(ctx, wrong, beside); err == nil || !strings.Contains(err.Error(), "is not a SpiceDB server binary") {
		t.Errorf("a binary that is not SpiceDB's: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = findServer(ctx, "", t.TempDir())
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "or on PATH") {
		t.Errorf("none: %v; want ErrNoServer saying where it looked", err)
	}
}
