package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// writeCedarApp writes a small photo-sharing app in both languages: alice may view her own
// photos, nobody else may.
func writeCedarApp(t *testing.T) (dir string) {
	t.Helper()
	dir = t.TempDir()
	files := map[string]string{
		"app.cedar": `@id("owner-views") permit (principal, action == Action::"view", resource) when { resource.owner == principal };`,
		"app.cedarschema": `entity User; entity Photo { owner: User };
action view appliesTo { principal: User, resource: Photo, context: {} };`,
		"entities.json": `[{"uid": {"type": "User", "id": "alice"}, "attrs": {}, "parents": []},
 {"uid": {"type": "User", "id": "bob"}, "attrs": {}, "parents": []},
 {"uid": {"type": "Photo", "id": "p1"}, "attrs": {"owner": {"__entity": {"type": "User", "id": "alice"}}}, "parents": []}]`,
		"requests.jsonl": `# alice views her photo; bob may not
{"principal": {"type": "User", "id": "alice"}, "action": {"type": "Action", "id": "view"}, "resource": {"type": "Photo", "id": "p1"}, "context": {}, "expect": true}
{"principal": {"type": "User", "id": "bob"}, "action": {"type": "Action", "id": "view"}, "resource": {"type": "Photo", "id": "p1"}, "expect": false}
`,
		"app.rego":  "package app\n\ndefault allow := false\n\nallow if data.photos[input.photo].owner == input.user\n",
		"data.json": `{"photos": {"p1": {"owner": "alice"}}}`,
		"inputs.jsonl": `{"input": {"user": "alice", "photo": "p1"}, "expect": true}
{"input": {"user": "bob", "photo": "p1"}}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A user's own Rego and Cedar, paired line by line, run through both engines with every
// decision verified, and the table compares the engines.
func TestUserCedarAndRegoSideBySide(t *testing.T) {
	dir := writeCedarApp(t)
	p := func(name string) string { return filepath.Join(dir, name) }
	out := filepath.Join(dir, "r.json")
	doc, stdout := runOK(t, out, "run", "--target", "opa/inproc,cedar/inproc",
		"--policy", p("app.rego"), "--data", p("data.json"), "--inputs", p("inputs.jsonl"),
		"--cedar-policies", p("app.cedar"), "--entities", p("entities.json"), "--schema", p("app.cedarschema"),
		"--cedar-requests", p("requests.jsonl"), "--requests", "2000", "--warmup", "0s", "--workers", "1")
	for _, r := range doc.Runs {
		// The second Rego input has no "expect": it takes the Cedar line's, so none is unverified.
		if r.Summary.OK != 2000 || r.Summary.Errors != 0 || r.Summary.UnverifiedOK != 0 {
			t.Errorf("%s: ok %d errors %d unverified %d", r.Target, r.Summary.OK, r.Summary.Errors, r.Summary.UnverifiedOK)
		}
	}
	if !strings.Contains(stdout, "× vs opa") {
		t.Errorf("no cross-engine column in\n%s", stdout)
	}
}

func TestCedarUsageErrorsNameTheFile(t *testing.T) {
	dir := writeCedarApp(t)
	p := func(name string) string { return filepath.Join(dir, name) }
	badReqs := p("bad.jsonl")
	os.WriteFile(badReqs, []byte(`{"principal": {"type": "User", "id": "a"}, "action": {"type": "Action", "id": "view"}, "resource": {"type": "Photo", "id": "p1"}}`+"\n"+
		`{"principal": "alice", "action": {"type": "Action", "id": "view"}, "resource": {"type": "Photo", "id": "p1"}}`+"\n"), 0o644)
	badPolicy := p("bad.cedar")
	os.WriteFile(badPolicy, []byte("permit (principal, action, resource)\nwhen { principal.x == };\n"), 0o644)
	mismatch := p("one.jsonl")
	os.WriteFile(mismatch, []byte(`{"input": {"user": "alice", "photo": "p1"}, "expect": false}`+"\n"+`{"input": {}}`+"\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"request line", []string{"run", "--target", "cedar/inproc", "--cedar-policies", p("app.cedar"), "--cedar-requests", badReqs}, "bad.jsonl:2:", exitUsage},
		{"requests without policies", []string{"run", "--target", "cedar/inproc", "--cedar-requests", p("requests.jsonl")}, "--cedar-policies", exitUsage},
		{"expectations disagree", []string{"run", "--policy", p("app.rego"), "--inputs", mismatch, "--cedar-policies", p("app.cedar"),
			"--cedar-requests", p("requests.jsonl")}, "one.jsonl:1 expects deny and " + p("requests.jsonl") + ":2 expects allow", exitUsage},
		{"policy position", []string{"run", "--target", "cedar/inproc", "--cedar-policies", badPolicy, "--cedar-requests", p("requests.jsonl"),
			"--requests", "1", "-o", p("r1.json")}, "bad.cedar:2:", exitUsage},
		{"no Cedar version", []string{"run", "--target", "opa/inproc,cedar/inproc", "--policy", p("app.rego"), "--inputs", p("inputs.jsonl"),
			"--requests", "1", "-o", p("r2.json")}, "--target cedar/inproc: your workload has no Cedar version", exitUsage},
		{"no Rego version", []string{"run", "--target", "opa/server", "--cedar-policies", p("app.cedar"), "--cedar-requests", p("requests.jsonl"),
			"--requests", "1", "-o", p("r3.json")}, "--target opa/server: your workload has no Rego version", exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

// workloads verify passes on the built-in workloads in every engine and mode.
func TestWorkloadsVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA and Cedar processes")
	}
	code, stdout, stderr := run(t, "workloads", "verify", "--first", "15")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
		if !strings.HasSuffix(line, "  ok") && !strings.Contains(line, "skipped") {
			t.Errorf("row %q is neither ok nor skipped", line)
		}
	}
	n := 0
	for _, line := range strings.Split(stdout, "\n") {
		if strings.Contains(line, "cedar/server") && strings.HasSuffix(line, "  ok") {
			n++
		}
	}
	if n < 2 {
		t.Errorf("only %d workloads verified on cedar/server:\n%s", n, stdout)
	}
	// The ext_authz targets run the workloads whose inputs are Envoy checks (envoy) or whose
	// policy reads none (nop), and skip the rest.
	for _, want := range []string{"envoy        opa/extauthz", "envoy        cedar/extauthz", "nop          opa/extauthz", "nop          cedar/extauthz"} {
		if !slices.ContainsFunc(strings.Split(stdout, "\n"), func(l string) bool { return strings.HasPrefix(l, want) && strings.HasSuffix(l, "  ok") }) {
			t.Errorf("no ok row %q:\n%s", want, stdout)
		}
	}
}

// An exported built-in runs again from its files, Rego and Cedar paired line by line, and every
// decision checks: the export is complete and its requests carry their expected decisions.
func TestExportedWorkloadRunsInBothEngines(t *testing.T) {
	dir := t.TempDir()
	if code, stdout, stderr := run(t, "workloads", "export", "rbac", dir); code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, stdout, stderr)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	out := p("r.json")
	doc, _ := runOK(t, out, "run", "--target", "opa/inproc,cedar/inproc",
		"--policy", p("rbac.rego"), "--data", p("data.json"), "--inputs", p("inputs.jsonl"),
		"--cedar-policies", p("rbac.cedar"), "--cedar-policies", p("rbac-roles.cedar"),
		"--schema", p("rbac.cedarschema"), "--entities", p("entities.json"), "--cedar-requests", p("requests.jsonl"),
		"--requests", "3000", "--warmup", "0s", "--workers", "1")
	for _, r := range doc.Runs {
		if r.Summary.OK != 3000 || r.Summary.UnverifiedOK != 0 {
			t.Errorf("%s: ok %d, unverified %d, errors %d %v", r.Target, r.Summary.OK, r.Summary.UnverifiedOK, r.Summary.Errors, r.Summary.ErrorClasses)
		}
	}
}

// --template-links reaches both Cedar targets: the served engine links the templates as the
// in-process one does, every hand-worked decision holds in both, and the unlinked template is
// warned about before the load starts.
func TestCedarTemplateLinksReachTheServer(t *testing.T) {
	app := func(name string) string {
		return filepath.Join("..", "..", "internal", "engine", "cedar", "testdata", "cedar-apps", "templates", name)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := run(t, "run", "--target", "cedar/inproc,cedar/server",
		"--cedar-policies", app("policies.cedar"), "--schema", app("app.cedarschema"), "--entities", app("entities.json"),
		"--template-links", app("links.json"), "--cedar-requests", app("requests.jsonl"),
		"--requests", "400", "--warmup", "0s", "--workers", "1", "--no-progress", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "warning: workload policies: ") || !strings.Contains(stderr, "template unlinked has no links in") {
		t.Errorf("no warning about the unlinked template in\n%s", stderr)
	}
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(doc.Runs))
	}
	for _, r := range doc.Runs {
		if r.Summary.OK != 400 || r.Summary.Errors != 0 {
			t.Errorf("%s: ok %d errors %d, want 400 ok and no wrong decision", r.Target, r.Summary.OK, r.Summary.Errors)
		}
	}
}

// workloads show says what each engine's version is handed ready-made (the ‡ rows), in the
// engine's language's name, and says nothing of it for a workload every engine computes alike.
func TestWorkloadsShowSaysWhatAnEngineIsHanded(t *testing.T) {
	code, stdout, stderr := run(t, "workloads", "show", "api")
	if code != 0 || !strings.Contains(stdout, "\n# in Cedar: Cedar is handed the token's verdict") {
		t.Errorf("show api: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, "workloads", "show", "rbac")
	if code != 0 || strings.Contains(stdout, "# in ") {
		t.Errorf("show rbac: exit %d, want no handed line\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}
