package scenario

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
)

// A scenario's changes, change_rate and stale_allowed keys say what the flags of the same names
// say, a changes file taken from the scenario's directory; version_path is the http target's
// option, as its flag is.
func TestChangesKeys(t *testing.T) {
	yaml := "changes: changes.jsonl\nchange_rate: 5/s\nstale_allowed: 1500ms\nworkloads: [rbac]\ntargets:\n" +
		"  - target: http\n    options: {url: http://127.0.0.1:8080/check, decision_path: /allow, version_path: /version}\n"
	s, err := Parse("dir/s.yaml", []byte(yaml), "dir")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Changes
	if c.File != filepath.Join("dir", "changes.jsonl") || c.Rate != "5/s" || c.StaleAllowed == nil || *c.StaleAllowed != 1500*time.Millisecond || c.Line != 1 {
		t.Errorf("changes %+v", c)
	}
	if h, ok := s.Targets[0].Config.(*kinds.HTTPConfig); !ok || h.VersionPath != "/version" {
		t.Errorf("http settings %#v: want version_path /version", s.Targets[0].Config)
	}
	s, err = Parse("s.yaml", []byte("changes: builtin\nworkloads: [rbac]\ntargets: [opa/inproc]\n"), "dir")
	if err != nil || s.Changes.File != "builtin" || s.Changes.Rate != "" || s.Changes.StaleAllowed != nil {
		t.Errorf("changes: builtin: %+v %v", s.Changes, err)
	}
	// builtin-policy is a word too, not a file beside the scenario.
	s, err = Parse("s.yaml", []byte("changes: builtin-policy\nworkloads: [rbac]\ntargets: [opa/inproc]\n"), "dir")
	if err != nil || s.Changes.File != "builtin-policy" {
		t.Errorf("changes: builtin-policy: %+v %v", s.Changes, err)
	}
	if s, err := Parse("s.yaml", []byte("workloads: [rbac]\ntargets: [opa/inproc]\n"), ""); err != nil || s.Changes.File != "" {
		t.Errorf("no changes: %+v %v", s.Changes, err)
	}
}

// A bad change key is refused naming the file, its line and the key, every one at once.
func TestChangesKeysRefused(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"changes: builtin\nchange_rate: fast\n", `s.yaml:2: change_rate "fast": want changes a second`},
		{"changes: builtin\nchange_rate: 0/s\n", `s.yaml:2: change_rate "0/s"`},
		{"changes: builtin\nstale_allowed: -1s\n", "s.yaml:2: stale_allowed -1s: want 0 or more"},
		{"changes: builtin\nstale_allowed: soon\n", "s.yaml:2"},
		{"change_rate: 10/s\n", "s.yaml:1: change_rate applies to a run with changes"},
		{"stale_allowed: 1s\n", "s.yaml:1: stale_allowed applies to a run with changes"},
		{"changes: \"\"\n", "s.yaml:1: changes: want builtin"},
		{"changes: builtin\nchange_rte: 10/s\n", `s.yaml:2: unknown field "change_rte"`},
		{"changes: builtin\ntargets:\n  - target: http\n    options: {url: http://127.0.0.1:1/, version_path: version}\n", "version_path"},
	} {
		yaml := c.yaml + "workloads: [rbac]\n"
		if !strings.Contains(c.yaml, "targets:") {
			yaml += "targets: [opa/inproc]\n"
		}
		if _, err := Parse("s.yaml", []byte(yaml), ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
}
