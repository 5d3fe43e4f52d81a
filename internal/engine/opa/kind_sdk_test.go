package opa

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// opa/sdk reads a user's files as opa run does: loose Rego in v0 syntax with a data file whose
// name is not data.json (merged at the root, not under its name), and a bundle directory with its
// roots, each served to the SDK as a bundle; every input is decided right.
func TestSDKReadsUserFilesAsOPARunDoes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	inputs := write("inputs.jsonl", `{"input": {"user": "alice"}, "expect": true}`+"\n"+`{"input": {"user": "bob"}, "expect": false}`+"\n")
	roles := write("roles.json", `{"roles": {"alice": "admin", "bob": "viewer"}}`)
	v0 := write("v0.rego", "package authz\n\ndefault allow = false\n\nallow {\n\tdata.roles[input.user] == \"admin\"\n}\n")
	write("bundle/.manifest", `{"roots": ["authz"], "revision": "r1"}`)
	write("bundle/authz/policy.rego", "package authz\n\ndefault allow := false\n\nallow if data.authz.roles[input.user] == \"admin\"\n")
	write("bundle/authz/data.json", `{"roles": {"alice": "admin", "bob": "viewer"}}`)
	for _, tc := range []struct {
		name string
		spec workload.UserSpec
	}{
		{"v0 with a data file", workload.UserSpec{Policies: []string{v0}, Data: []string{roles}, Inputs: inputs, V0Compatible: true}},
		{"a bundle directory", workload.UserSpec{Policies: []string{filepath.Join(dir, "bundle")}, Inputs: inputs}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := workload.FromFiles(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			tg := startTarget(t, "opa/sdk", kinds.Common{TempDir: t.TempDir()}, &SDKConfig{}, w)
			if classes, outs := decideAll(t, w, tg.Worker()); classes["ok"] != len(w.Inputs) {
				t.Fatalf("classes %v, want %d ok; first: %+v", classes, len(w.Inputs), outs[0])
			}
			if info := tg.Info(); info.Mode != "sdk" || info.DecisionLogs != nil {
				t.Errorf("info %+v: want mode sdk, no decision logs", info)
			}
		})
	}
}
