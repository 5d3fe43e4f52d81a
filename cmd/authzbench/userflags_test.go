package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

// A problem with a setting of the user's workload names the setting where the user gave it: the
// flag on the command line, the key in a scenario file, never a flag the user did not type.
func TestWorkloadSettingErrorsNameWhereTheyCameFrom(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"p.rego":         "package p\nallow := true\n",
		"in.jsonl":       `{"input": {}, "expect": true}` + "\n",
		"requests.jsonl": `{"principal": {"type": "User", "id": "a"}, "action": {"type": "Action", "id": "view"}, "resource": {"type": "Doc", "id": "d"}}` + "\n",
		"no-inputs.yaml": "workloads:\n  - name: mine\n    policy: [p.rego]\ntargets: [opa/inproc]\n",
		"query.yaml":     "workloads:\n  - name: mine\n    policy: [p.rego]\n    inputs: in.jsonl\n    query: p.allow\ntargets: [opa/inproc]\n",
		"undefined.yaml": "workloads:\n  - name: mine\n    policy: [p.rego]\n    inputs: in.jsonl\n    undefined_as: maybe\ntargets: [opa/inproc]\n",
		"cedar.yaml":     "workloads:\n  - name: mine\n    requests: requests.jsonl\ntargets: [cedar/inproc]\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, tc := range []struct {
		name string
		args []string
		want string
		not  string // a flag the message must not name
	}{
		{"--inputs missing", []string{"run", "--target", "opa/inproc", "--policy", p("p.rego")},
			`a user workload needs --inputs FILE.jsonl (one {"input": ..., "expect": true|false} per line), or --cedar-requests FILE.jsonl for Cedar`, ""},
		{"--query outside data", []string{"run", "--target", "opa/inproc", "--policy", p("p.rego"), "--inputs", p("in.jsonl"), "--query", "p.allow"},
			`--query "p.allow": want a reference under data`, ""},
		{"--query outside data, verify", []string{"workloads", "verify", "--policy", p("p.rego"), "--inputs", p("in.jsonl"), "--query", "p.allow"},
			`--query "p.allow": want a reference under data`, ""},
		{"--cedar-policies missing", []string{"run", "--target", "cedar/inproc", "--cedar-requests", p("requests.jsonl")},
			"a Cedar workload needs --cedar-policies FILE (and --cedar-requests FILE.jsonl)", ""},
		{"inputs missing in a scenario", []string{"run", "-f", p("no-inputs.yaml")},
			`no-inputs.yaml:2: a user workload needs inputs FILE.jsonl (one {"input": ..., "expect": true|false} per line), or requests FILE.jsonl for Cedar`, "--inputs"},
		{"query outside data in a scenario", []string{"run", "-f", p("query.yaml")},
			`query.yaml:2: query "p.allow": want a reference under data`, "--query"},
		{"undefined_as in a scenario", []string{"run", "-f", p("undefined.yaml")},
			`undefined.yaml:2: undefined_as "maybe": want deny or allow`, "--undefined-as"},
		{"cedar_policies missing in a scenario", []string{"run", "-f", p("cedar.yaml")},
			"cedar.yaml:2: a Cedar workload needs cedar_policies FILE (and requests FILE.jsonl)", "--cedar"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tc.want)
			}
			if tc.not != "" && strings.Contains(stderr, tc.not) {
				t.Errorf("stderr %q names %s, which the user did not give", stderr, tc.not)
			}
		})
	}
}

// A setting named as its flag once stays so when the error is named again: the workload's
// settings are named where it is built and again around the whole run, and "query names ..."
// lies inside "--query names ...", which once read "----query names ...".
func TestFlagNamedTwiceNamesOnce(t *testing.T) {
	err := fmt.Errorf("workload: %w", workload.NewSettingError("query", func(name func(string) string) string {
		return name("query") + " names a Rego decision; these files are not Rego"
	}))
	once := flagNamed(err)
	if got := flagNamed(once).Error(); got != once.Error() || !strings.Contains(got, "workload: --query names") {
		t.Errorf("named twice: %q; once: %q", got, once.Error())
	}
}
