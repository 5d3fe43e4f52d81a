package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// profile prints the policy's lines hottest first, in either format, and refuses what it
// cannot profile with exit 2, naming the flag.
func TestProfileCommand(t *testing.T) {
	code, out, stderr := run(t, "profile", "--workload", "rbac", "--top", "3")
	if code != 0 || !strings.Contains(out, "rbac.rego:") || !strings.Contains(out, "SHARE") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if rows := strings.Count(out, "rbac.rego:") + strings.Count(out, "(the query"); rows != 3 {
		t.Errorf("--top 3 printed %d rows:\n%s", rows, out)
	}
	code, out, stderr = run(t, "profile", "--workload", "nop", "--format", "json")
	var rep struct {
		Workload    string `json:"workload"`
		Evaluations int    `json:"evaluations"`
		Lines       []struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"lines"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Workload != "nop" || rep.Evaluations != 1000 || len(rep.Lines) == 0 {
		t.Errorf("json: exit %d, %+v\n%s\n%s", code, rep, out, stderr)
	}

	dir := t.TempDir()
	policy := filepath.Join(dir, "p.rego")
	inputs := filepath.Join(dir, "in.jsonl")
	os.WriteFile(policy, []byte("package p\n\nallow if input.x == 1\n"), 0o644)
	os.WriteFile(inputs, []byte("{\"input\": {\"x\": 1}, \"expect\": true}\n{\"input\": {\"x\": 2}, \"expect\": true}\n"), 0o644)
	code, out, stderr = run(t, "profile", "--policy", policy, "--inputs", inputs)
	if code != exitFailed || !strings.Contains(out, "p.rego:3") || !strings.Contains(stderr, "1 of 2 evaluations") {
		t.Errorf("a wrong decision: exit %d, want %d\n%s\n%s", code, exitFailed, out, stderr)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"profile"}, "give --workload"},
		{[]string{"profile", "--workload", "rbca"}, `--workload: unknown workload "rbca"`},
		{[]string{"profile", "--workload", "rbac", "--format", "xml"}, `--format "xml"`},
		{[]string{"profile", "--workload", "rbac", "--top", "-1"}, "--top"},
		{[]string{"profile", "--workload", "rbac", "--policy", policy, "--inputs", inputs}, "not both"},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
