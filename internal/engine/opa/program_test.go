package opa

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/authzbench/authzbench/internal/engine/opa/opacli"
)

// The slim OPA is taken only where it can run: an executable file of its name beside the
// executable, not a folder of that name, nor a file that may not be executed.
func TestBesideTakesOnlyAnExecutableFile(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "authzbench")
	slim := filepath.Join(dir, opacli.Command)
	if _, ok := BesideExecutable(exe); ok {
		t.Error("found an OPA beside where there is none")
	}
	if err := os.WriteFile(slim, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := BesideExecutable(exe); ok {
		t.Error("took a file that may not be executed")
	}
	if err := os.Chmod(slim, 0o755); err != nil {
		t.Fatal(err)
	}
	if o, ok := BesideExecutable(exe); !ok || o.Path != slim || len(o.Prefix) != 0 {
		t.Errorf("BesideExecutable = %+v, %v; want %s, run as opa is", o, ok, slim)
	}
	if err := os.Remove(slim); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(slim, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok := BesideExecutable(exe); ok {
		t.Error("took a folder")
	}
}
