package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A scenario file's changes, change_rate and stale_allowed keys run a changing world as the
// flags do: the changes file taken from the scenario's directory (and its policy files from
// the changes file's), every answer judged; a flag given overrides its key.
func TestChangesFromScenarioFile(t *testing.T) {
	dir := t.TempDir()
	policySwapChanges(t, dir)
	scenario := filepath.Join(dir, "s.yaml")
	yaml := "changes: policy.jsonl\nchange_rate: 2/s\nstale_allowed: 250ms\nload: {workers: 2, duration: 2s, warmup: 0s}\nworkloads: [rbac]\ntargets: [opa/inproc]\nfloor: false\n"
	if err := os.WriteFile(scenario, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		rate float64
	}{{"keys", nil, 2}, {"flag over key", []string{"--change-rate", "4/s"}, 4}} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "-f", scenario, "--no-progress"}, c.args...)
			doc, _ := runOK(t, filepath.Join(t.TempDir(), "r.json"), args...)
			r := doc.Runs[len(doc.Runs)-1]
			ch := r.Changes
			if ch == nil || ch.Applied != 2 || ch.RatePS != c.rate || ch.AllowedStaleMS != 250 {
				t.Fatalf("changes %+v: want both applied at %v/s, 250 ms allowed stale", ch, c.rate)
			}
			if a := ch.Answers; a["wrong"]+a["stale"]+a["stale_beyond_promise"] != 0 || a["fresh"] != r.Summary.OK || r.Summary.OK == 0 {
				t.Errorf("answers %v of %d ok", a, r.Summary.OK)
			}
		})
	}
}

// A bad change key exits 2 before any load naming the scenario file, the line and the key; a
// stream the run cannot carry names the changes key's line.
func TestChangesScenarioKeysRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ yaml, want string }{
		{"changes: builtin\nchange_rate: often\n", `s.yaml:2: change_rate "often"`},
		{"changes: builtin\nstale_allowed: -2s\n", "s.yaml:2: stale_allowed -2s"},
		{"changes: builtin\nrepeat: 2\n", "s.yaml:1: changes with repeat 2"},
		{"changes: missing.jsonl\n", "missing.jsonl"},
	} {
		scenario := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(scenario, []byte(c.yaml+"workloads: [rbac]\ntargets: [opa/inproc]\nfloor: false\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := run(t, "run", "-f", scenario, "--no-progress", "-o", filepath.Join(dir, "r.json"))
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.yaml, code, stderr, exitUsage, c.want)
		}
	}
}
