package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// An exported built-in's Casbin files run again as the user's own, through the command line a
// Casbin user types (--policy model --policy policy --inputs requests): workloads verify checks
// every request in both Casbin modes against the expected decision the export wrote, and every
// other engine, given no version of Casbin's files, says so.
func TestCasbinExportVerifiesAsUserFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the Casbin server")
	}
	for _, tc := range []struct{ name, model, policy, requests string }{
		{"rbac", "rbac.conf", "rbac.csv", "casbin-requests.csv"},
		{"api", "api.conf", "api.csv", "casbin-requests.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if code, stdout, stderr := run(t, "workloads", "export", tc.name, dir); code != 0 {
				t.Fatalf("export: exit %d\n%s%s", code, stdout, stderr)
			}
			p := func(name string) string { return filepath.Join(dir, name) }
			code, stdout, stderr := run(t, "workloads", "verify", "--target", "casbin/inproc,casbin/server",
				"--policy", p(tc.model), "--policy", p(tc.policy), "--inputs", p(tc.requests))
			if code != 0 {
				t.Fatalf("verify: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			agreed := map[string]bool{}
			for _, line := range strings.Split(stdout, "\n") {
				if f := strings.Fields(line); len(f) == 5 && f[2] == "1000" && f[3] == "1000" && f[4] == "ok" {
					agreed[f[1]] = true
				}
			}
			for _, target := range []string{"casbin/inproc", "casbin/server"} {
				if !agreed[target] {
					t.Errorf("no row of 1000 agreed on %s:\n%s", target, stdout)
				}
			}
		})
	}
}

// workloads show prints Casbin's model, policy and requests beside the other engines' versions.
func TestWorkloadsShowPrintsCasbinFiles(t *testing.T) {
	code, stdout, stderr := run(t, "workloads", "show", "rbac")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"# === Casbin version (policy: ", "# --- rbac.conf ---\n", "\n[request_definition]\n", "# --- rbac.csv ---\np, "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("show rbac lacks %q:\n%s", want, stdout)
		}
	}
}
