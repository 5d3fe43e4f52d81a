package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// slimOPA is OPA's command line alone, cmd/authzbench-opa, as opa/cli looks for it beside
// authzbench.
const slimOPA = "authzbench-opa"

// opa/cli runs one OPA process a decision, so the process's start-up is the figure: authzbench
// itself as OPA pays every linked engine's package inits first (about 40 ms an eval where the
// opa binary takes 13), so the slim authzbench-opa beside authzbench is run where there is
// one, and where there is none the user is told, once for the whole run, what the figures hold.
func TestOPACLIRunsTheSlimOPABesideOrSaysWhy(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--target", "opa/cli", "--workload", "nop,rbac", "--warmup", "0s", "--requests", "3", "--no-progress"}
	const warning = "opa/cli ran authzbench itself as opa"

	doc, _ := runOK(t, filepath.Join(t.TempDir(), "self.json"), args...)
	_, _, stderr := run(t, append(args, "-o", filepath.Join(t.TempDir(), "self2.json"))...)
	if n := strings.Count(stderr, warning); n != 1 {
		t.Errorf("said %d times that opa/cli ran authzbench itself, want once for the run:\n%s", n, stderr)
	}
	if cmd := doc.Runs[0].SUT.Command; len(cmd) < 2 || cmd[0] != self || cmd[1] != "opa" {
		t.Errorf("sut command %q: want this executable with opa", cmd)
	}

	// The slim OPA beside: here a script running this test binary as OPA (its TestMain
	// dispatches "opa"), so the test needs no second build.
	slim := filepath.Join(filepath.Dir(self), slimOPA)
	if _, err := os.Stat(slim); err == nil {
		t.Fatalf("%s exists already", slim)
	}
	if err := os.WriteFile(slim, []byte("#!/bin/sh\nexec '"+self+"' opa \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(slim)
	code, _, stderr := run(t, append(args, "-o", filepath.Join(t.TempDir(), "slim.json"))...)
	if code != 0 || strings.Contains(stderr, warning) {
		t.Errorf("with %s beside: exit %d, stderr %s; want 0 and no warning", slimOPA, code, stderr)
	}
	doc, _ = runOK(t, filepath.Join(t.TempDir(), "slim2.json"), args...)
	if cmd := doc.Runs[0].SUT.Command; len(cmd) < 2 || cmd[0] != slim || cmd[1] != "eval" {
		t.Errorf("sut command %q: want %s eval ...", cmd, slim)
	}
}
