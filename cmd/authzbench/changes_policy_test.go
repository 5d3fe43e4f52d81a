package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

// policySwapChanges writes a changes file of two policy replacements of rbac's module: one that
// allows nobody (every input rbac allows flips to deny), then rbac's own module back. The
// .rego files lie beside it and are named relative to it.
func policySwapChanges(t *testing.T, dir string) string {
	t.Helper()
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"deny.rego":       []byte("package authzbench.rbac\n\ndefault allow := false\n"),
		"rbac-again.rego": w.Policies[0].Content,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	denied, allowed := map[string]string{}, map[string]string{}
	for i, in := range w.Inputs {
		if in.Expect == workload.ExpectAllow {
			denied[strconv.Itoa(i+1)] = "deny"
			allowed[strconv.Itoa(i+1)] = "allow"
		}
	}
	if len(denied) == 0 {
		t.Fatal("rbac allows no input: the swap would flip nothing")
	}
	var b strings.Builder
	for _, line := range []map[string]any{
		{"write": map[string]string{"policy": "deny.rego"}, "expect": denied},
		{"write": map[string]string{"policy": "rbac-again.rego", "replaces": "rbac.rego"}, "expect": allowed},
	} {
		text, err := json.Marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(text)
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, "policy.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A policy replacement as a change, on OPA's server (a policy PUT), in process (the store's
// policy upserted, the query prepared again) and through the SDK (its store's policy upserted):
// the swap flips every input rbac allows and the
// module put back flips them again; every answer is judged, none wrong, and none stale (OPA
// compiles and commits before it answers, so a check sent after the acknowledgement sees it).
func TestChangesOPAPolicyReplacement(t *testing.T) {
	for _, target := range []string{"opa/server", "opa/inproc", "opa/sdk"} {
		t.Run(target, func(t *testing.T) {
			dir := t.TempDir()
			changes := policySwapChanges(t, dir)
			doc, _ := runOK(t, filepath.Join(dir, "r.json"), "run", "--target", target, "--workload", "rbac", "--changes", changes,
				"--change-rate", "2/s", "--workers", "4", "--duration", "2s", "--warmup", "0s", "--no-progress")
			r := doc.Runs[0]
			c := r.Changes
			if c == nil || c.Applied != 2 || c.Visible == 0 {
				t.Fatalf("changes %+v: want both replacements applied and seen", c)
			}
			if c.Answers["stale"] != 0 || c.Answers["stale_beyond_promise"] != 0 || c.Answers["wrong"] != 0 || r.Summary.WrongDecision != 0 {
				t.Errorf("answers %v, wrong decisions %d: a check sent after OPA acknowledged a policy must decide by it", c.Answers, r.Summary.WrongDecision)
			}
			if c.Answers["fresh"] != r.Summary.OK || r.Summary.OK == 0 {
				t.Errorf("%d fresh of %d ok decisions: every answer is judged", c.Answers["fresh"], r.Summary.OK)
			}
			if c.NewEnemyWindowUS == nil || c.NewEnemyWindowUS.Max != 0 {
				t.Errorf("new-enemy window %+v: want none missed after its acknowledgement", c.NewEnemyWindowUS)
			}
			if w := r.Operations[0]; w.OK != 2 || w.Errors != 0 {
				t.Errorf("writes %+v", w)
			}
		})
	}
}

// A policy replacement whose file does not parse, or whose module OPA would refuse, is refused
// before any load, exit 2, naming the changes file's line and the .rego file.
func TestChangesOPAPolicyRefusedBeforeLoad(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.rego"), []byte("package authzbench.rbac\n\nallow if {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "undefined.rego"), []byte("package authzbench.rbac\n\nallow if no_such_function(1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changes := filepath.Join(dir, "bad.jsonl")
	lines := `{"write": {"policy": "broken.rego"}, "expect": {}}
{"write": {"policy": "undefined.rego"}, "expect": {}}
`
	if err := os.WriteFile(changes, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	code, _, stderr := run(t, "run", "--target", "opa/server", "--workload", "rbac", "--changes", changes,
		"--duration", "1s", "--warmup", "0s", "--no-progress", "-o", out)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitUsage, stderr)
	}
	for _, want := range []string{"bad.jsonl:1: target opa/server", "broken.rego", "bad.jsonl:2: target opa/server", "undefined.rego", "no_such_function"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q: want %q", stderr, want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a result was written for a run refused before any load")
	}
}
