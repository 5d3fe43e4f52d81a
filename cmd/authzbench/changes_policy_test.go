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

// Casbin's policy replacement as a changes file's line, in process and on its server: rbac's
// policy with every p rule left out (no role grants an action) and then the whole policy back;
// every answer judged, none wrong, none stale. A policy file with a line Casbin refuses exits 2
// before any load, naming the changes file's line and the policy file's.
func TestChangesCasbinPolicyReplacement(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	casbinFiles := t.TempDir()
	code, _, stderr := run(t, "workloads", "export", "rbac", casbinFiles)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	policy, err := os.ReadFile(filepath.Join(casbinFiles, "rbac.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, line := range strings.Split(string(policy), "\n") {
		if !strings.HasPrefix(line, "p,") {
			links = append(links, line)
		}
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"no-grants.csv": strings.Join(links, "\n"),
		"again.csv":     string(policy),
		"bad.csv":       "p, editor, document, read\ng, user-001\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What rbac's reference model decides with no role granting anything.
	m := *w.Model.(*workload.RBACData)
	m.Roles = map[string]map[string][]string{}
	denied, back := map[string]string{}, map[string]string{}
	for i, in := range w.Inputs {
		allow, _ := m.Decide(in.Model.(workload.RBACInput))
		if was := in.Expect == workload.ExpectAllow; allow != was {
			denied[strconv.Itoa(i+1)] = map[bool]string{true: "allow", false: "deny"}[allow]
			back[strconv.Itoa(i+1)] = map[bool]string{true: "allow", false: "deny"}[was]
		}
	}
	if len(denied) == 0 {
		t.Fatal("no input flips without the role grants: the test shows nothing")
	}
	writeLines := func(name string, lines ...map[string]any) string {
		var b strings.Builder
		for _, l := range lines {
			text, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(text)
			b.WriteByte('\n')
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := writeLines("policy.jsonl",
		map[string]any{"write": map[string]string{"policy": "no-grants.csv"}, "expect": denied},
		map[string]any{"write": map[string]string{"policy": "again.csv"}, "expect": back})
	for _, target := range []string{"casbin/inproc", "casbin/server"} {
		t.Run(target, func(t *testing.T) {
			doc, _ := runOK(t, filepath.Join(t.TempDir(), "r.json"), "run", "--target", target, "--workload", "rbac", "--changes", good,
				"--change-rate", "2/s", "--workers", "4", "--duration", "2s", "--warmup", "0s", "--no-progress")
			r := doc.Runs[0]
			c := r.Changes
			if c == nil || c.Applied != 2 || c.Visible == 0 {
				t.Fatalf("changes %+v: want both replacements applied and seen", c)
			}
			if c.Answers["stale"] != 0 || c.Answers["stale_beyond_promise"] != 0 || c.Answers["wrong"] != 0 || r.Summary.WrongDecision != 0 {
				t.Errorf("answers %v, wrong decisions %d: a check sent after Casbin acknowledged a policy must decide by it", c.Answers, r.Summary.WrongDecision)
			}
			if c.Answers["fresh"] != r.Summary.OK || r.Summary.OK == 0 {
				t.Errorf("%d fresh of %d ok decisions: every answer is judged", c.Answers["fresh"], r.Summary.OK)
			}
		})
	}
	bad := writeLines("bad.jsonl",
		map[string]any{"write": map[string]string{"policy": "again.csv"}, "expect": map[string]string{}},
		map[string]any{"write": map[string]string{"policy": "bad.csv"}, "expect": map[string]string{}})
	out := filepath.Join(dir, "r.json")
	code, _, stderr = run(t, "run", "--target", "casbin/inproc", "--workload", "rbac", "--changes", bad,
		"--duration", "1s", "--warmup", "0s", "--no-progress", "-o", out)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitUsage, stderr)
	}
	for _, want := range []string{"bad.jsonl:2: target casbin/inproc", "bad.csv:2: casbin refuses the policy line"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q: want %q", stderr, want)
		}
	}
	if strings.Contains(stderr, "bad.jsonl:1") {
		t.Errorf("stderr %q: the good line is named", stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a result was written for a run refused before any load")
	}
}

// rbac's built-in policy stream (--changes builtin-policy) through every target of the engines
// that take it: a role's grant withdrawn and the whole policy put back, written in each engine's
// language (a Rego module put, Cedar's policies swapped, Casbin's policy reloaded); every
// answer is judged, none wrong, and none stale (each acknowledges once the policy is in place).
// An engine that takes no policy replacement is refused before any load, exit 2.
func TestChangesBuiltinPolicyStream(t *testing.T) {
	for _, target := range []string{"opa/inproc", "opa/sdk", "opa/server", "cedar/inproc", "cedar/server", "casbin/inproc", "casbin/server"} {
		t.Run(target, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			doc, _ := runOK(t, out, "run", "--target", target, "--workload", "rbac", "--changes", "builtin-policy", "--change-rate", "10/s",
				"--workers", "4", "--duration", "2s", "--warmup", "0s", "--no-progress")
			r := doc.Runs[0]
			c := r.Changes
			if c == nil || c.Applied < 5 || c.Source != "rbac's built-in policy stream" {
				t.Fatalf("changes %+v: want at least 5 of rbac's policy changes applied in 2s at 10/s", c)
			}
			if c.Answers["stale"] != 0 || c.Answers["stale_beyond_promise"] != 0 || c.Answers["wrong"] != 0 || r.Summary.WrongDecision != 0 {
				t.Errorf("answers %v, wrong decisions %d: a check sent after a policy was acknowledged must decide by it", c.Answers, r.Summary.WrongDecision)
			}
			if c.Answers["fresh"] != r.Summary.OK || r.Summary.OK == 0 {
				t.Errorf("%d fresh of %d ok decisions: every answer is judged", c.Answers["fresh"], r.Summary.OK)
			}
			if c.Visible == 0 {
				t.Errorf("visible %d: no policy change was seen in any answer", c.Visible)
			}
			if w := r.Operations[0]; w.OK != uint64(c.Applied) || w.Errors != 0 {
				t.Errorf("writes %+v", w)
			}
		})
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--target", "spicedb/inproc", "--workload", "rbac"}, []string{"--changes builtin-policy: target spicedb/inproc", "no built-in policy replacement", "opa"}},
		{[]string{"--target", "http", "--url", "http://127.0.0.1:1/check", "--decision-path", "/allow", "--workload", "rbac"}, []string{"--changes builtin-policy: target http"}},
		{[]string{"--target", "opa/inproc", "--workload", "api"}, []string{"--changes builtin-policy", "no built-in policy stream", "rbac"}},
	} {
		t.Run("refused "+strings.Join(c.args, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			code, _, stderr := run(t, append([]string{"run", "--changes", "builtin-policy", "--duration", "1s", "--warmup", "0s", "--no-progress", "-o", out}, c.args...)...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %s", code, exitUsage, stderr)
			}
			for _, want := range c.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q: want %q", stderr, want)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a result was written for a run refused before any load")
			}
		})
	}
}
