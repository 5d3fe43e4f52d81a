package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// --http2 is refused where it cannot apply, naming the flags, with the usage exit status.
func TestHTTP2FlagConflicts(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no reuse", []string{"run", "--workload", "rbac", "--http2", "--no-reuse"}, "--http2 multiplexes requests over kept connections; it does not go with --no-reuse"},
		{"no REST target", []string{"run", "--target", "opa/inproc", "--workload", "rbac", "--http2"}, "--http2 applies to the opa/server, cedar/server and http targets, and none is selected"},
		{"connections without http2", []string{"run", "--workload", "rbac", "--http2-connections", "2"}, "--http2-connections sets the HTTP/2 connections the workers share"},
		{"negative connections", []string{"run", "--workload", "rbac", "--http2", "--http2-connections", "-1"}, "--http2-connections -1: want 1 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

// A run with --http2 against the OPA server authzbench starts decides over h2c, and the result
// and the table say so.
func TestHTTP2RunIsRecorded(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	doc, stdout := runOK(t, out, "run", "--target", "opa/server", "--workload", "rbac", "--http2", "--http2-connections", "2",
		"--workers", "4", "--requests", "400", "--warmup", "0s", "--no-progress")
	if len(doc.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(doc.Runs))
	}
	r := doc.Runs[0]
	if !r.SUT.HTTP2 || r.SUT.Connections != 2 || r.Summary.OK != 400 || r.Summary.Errors != 0 {
		t.Errorf("sut http2 %v connections %d, ok %d errors %d; want true, 2, 400, 0", r.SUT.HTTP2, r.SUT.Connections, r.Summary.OK, r.Summary.Errors)
	}
	if !strings.Contains(strings.Join(r.SUT.Command, " "), "--h2c") {
		t.Errorf("command %q: want OPA started with --h2c", r.SUT.Command)
	}
	if !strings.Contains(stdout, "opa/server h2c 2conns") {
		t.Errorf("table does not name the run opa/server h2c 2conns:\n%s", stdout)
	}
}
