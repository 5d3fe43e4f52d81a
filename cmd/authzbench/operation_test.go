package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// --operation that cannot be carried out is refused before any load, exit 2, naming the flag:
// an unknown operation, a target that answers checks only, a workload without list queries, a
// run whose world changes.
func TestOperationRefusedBeforeLoad(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	args := func(target, wl string, more ...string) []string {
		return append([]string{"run", "--target", target, "--workload", wl, "--no-progress", "-o", out}, more...)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown", args("openfga/inproc", "rbac", "--operation", "lists"), `--operation: unknown operation "lists"; known: check, list-objects, list-users, batch-check`},
		{"users, checks only", args("cedar/inproc", "rbac", "--operation", "list-users"), "--operation list-users: target cedar/inproc answers checks only"},
		{"checks only", args("opa/inproc", "rbac", "--operation", "list-objects"), "--operation list-objects: target opa/inproc answers checks only"},
		{"spicedb in process", args("spicedb/inproc", "rbac", "--operation", "list-objects"), "spicedb/inproc answers checks only (SpiceDB's pkg/embedded has Check alone)"},
		{"no list queries", args("openfga/inproc", "docshare-10", "--operation", "list-objects"), "--operation list-objects: workload docshare-10 has no list queries yet"},
		{"under changes", args("opa/server", "rbac", "--operation", "list-objects", "--changes", "builtin"), "--operation list-objects with --changes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %s; want 2 and %q", code, stderr, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a result was written")
			}
		})
	}
}

// A list-objects, a list-users and a batch-check run over OpenFGA in process: every answer as
// the reference model has it, the result and the table naming the operation.
func TestOperationListRuns(t *testing.T) {
	for _, op := range []string{"list-objects", "list-users", "batch-check"} {
		t.Run(op, func(t *testing.T) { listRun(t, op) })
	}
}

func listRun(t *testing.T, op string) {
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := run(t, "run", "--target", "openfga/inproc", "--workload", "rbac", "--operation", op,
		"--workers", "1", "--warmup", "0s", "--requests", "60", "--no-progress", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc result.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Runs[0]
	if s := r.Summary; r.Operation != op || s.Requests != 60 || s.OK != 60 || s.WrongDecision != 0 || s.Errors != 0 {
		t.Errorf("operation %q, summary %+v: want 60 %s answers, all ok", r.Operation, s, op)
	}
	if !strings.Contains(stdout, "openfga/inproc "+op) {
		t.Errorf("the table does not name the operation:\n%s", stdout)
	}
}
