package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// rbac's own stream through each in-process engine and Cedar's server: every answer is judged,
// none wrong, and none stale (in process a write acknowledged is committed or swapped in, and
// the Cedar server swaps before it answers): a check sent after the acknowledgement sees it.
func TestChangesLocalEnginesNeverStaleAfterAck(t *testing.T) {
	for _, target := range []string{"opa/inproc", "opa/sdk", "cedar/inproc", "cedar/server", "casbin/inproc", "casbin/server"} {
		t.Run(target, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			doc, _ := runOK(t, out, "run", "--target", target, "--workload", "rbac", "--changes", "builtin", "--change-rate", "20/s",
				"--workers", "4", "--duration", "2s", "--warmup", "0s", "--no-progress")
			r := doc.Runs[0]
			c := r.Changes
			if c == nil || c.Applied < 10 {
				t.Fatalf("changes %+v: want at least 10 applied in 2s at 20/s", c)
			}
			if c.Answers["stale"] != 0 || c.Answers["stale_beyond_promise"] != 0 || c.Answers["wrong"] != 0 || r.Summary.WrongDecision != 0 {
				t.Errorf("answers %v, wrong decisions %d: a check sent after a write was acknowledged must see it", c.Answers, r.Summary.WrongDecision)
			}
			if c.Answers["fresh"] != r.Summary.OK || r.Summary.OK == 0 {
				t.Errorf("%d fresh of %d ok decisions: every answer is judged", c.Answers["fresh"], r.Summary.OK)
			}
			if c.Visible == 0 || c.NewEnemyWindowUS == nil || c.NewEnemyWindowUS.Max != 0 {
				t.Errorf("visible %d, new-enemy window %+v: want changes seen and none missed after its acknowledgement", c.Visible, c.NewEnemyWindowUS)
			}
			if w := r.Operations[0]; w.OK != uint64(c.Applied) || w.Errors != 0 {
				t.Errorf("writes %+v", w)
			}
		})
	}
}

// engineChanges writes rbac's first n built-in changes as a changes file of the engine's own
// write form, one "write" a line with the decisions it sets.
func engineChanges(t *testing.T, dir, eng string, n int) string {
	t.Helper()
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	made, err := workload.BuiltinChanges(w, n)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range made {
		form, err := engine.WriteFor(eng, w, c)
		if err != nil {
			t.Fatal(err)
		}
		expect := map[string]string{}
		for i, allow := range c.Sets {
			expect[strconv.Itoa(i+1)] = map[bool]string{true: "allow", false: "deny"}[allow]
		}
		line, err := json.Marshal(map[string]any{"write": form, "expect": expect})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, eng+".jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A changes file of the engine's own writes (a JSON Patch of OPA's data, an update of Cedar's
// entities, Casbin's role links) runs as the built-in stream does: every change applied, every
// answer judged, none stale or wrong.
func TestChangesFileOfEngineWrites(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ target, engine string }{{"opa/inproc", "opa"}, {"cedar/inproc", "cedar"}, {"casbin/inproc", "casbin"}} {
		t.Run(c.target, func(t *testing.T) {
			changes := engineChanges(t, dir, c.engine, 6)
			doc, _ := runOK(t, filepath.Join(dir, c.engine+".json"), "run", "--target", c.target, "--workload", "rbac", "--changes", changes,
				"--change-rate", "10/s", "--workers", "2", "--duration", "2s", "--warmup", "0s", "--no-progress")
			r := doc.Runs[0]
			if r.Changes == nil || r.Changes.Applied != 6 || r.Changes.Visible == 0 {
				t.Fatalf("changes %+v: want all 6 applied and some seen", r.Changes)
			}
			if a := r.Changes.Answers; a["stale"]+a["stale_beyond_promise"]+a["wrong"] != 0 || a["fresh"] != r.Summary.OK {
				t.Errorf("answers %v of %d ok", a, r.Summary.OK)
			}
		})
	}
}

// A changes file whose writes its targets cannot take, or a target whose settings refuse
// writes, is refused before any load, exit 2, naming the file and line or the flag.
func TestChangesEngineWritesRefusedBeforeLoad(t *testing.T) {
	dir := t.TempDir()
	opaFile := engineChanges(t, dir, "opa", 2)
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"write": [{"op": "replace", "path": "/rbac/users/u-1/roles", "value": []}], "expect": {}}
{"write": [{"op": "move", "from": "/a", "path": "/b"}], "expect": {}}
{"request": {"path": "/grant"}, "expect": {}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"a bad patch and a request", []string{"--target", "opa/inproc", "--changes", bad}, []string{`bad.jsonl:2: "write" for target opa/inproc: operation 1: op "move"`, `bad.jsonl:3: target opa/inproc takes its engine's own writes`}},
		{"OPA's patches to Cedar", []string{"--target", "cedar/inproc", "--changes", opaFile}, []string{`opa.jsonl:1: "write" for target cedar/inproc: not an update`}},
		{"a Cedar server of replicas", []string{"--target", "cedar/server", "--replicas", "2", "--changes", "builtin"}, []string{"--changes: target cedar/server: cedar/server with 2 replicas"}},
		{"writes to the http target", []string{"--target", "http", "--url", "http://127.0.0.1:1/check", "--decision-path", "/allow", "--changes", opaFile}, []string{`opa.jsonl:1: target http sends each change's "request"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, append(append([]string{"run", "--workload", "rbac"}, c.args...), "--no-progress", "-o", out)...)
			for _, want := range c.want {
				if code != 2 || !strings.Contains(stderr, want) {
					t.Errorf("exit %d, stderr %s; want 2 and %q", code, stderr, want)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a result was written")
			}
		})
	}
}
