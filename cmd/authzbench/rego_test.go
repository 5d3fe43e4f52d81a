package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// regoApp is a file of the small hand-worked apps under internal/engine/opa/testdata/rego-apps.
func regoApp(name, file string) string {
	return filepath.Join("..", "..", "internal", "engine", "opa", "testdata", "rego-apps", name, file)
}

// workloads verify takes the user's own files: v0 syntax is refused with the way out, read with
// --v0-compatible in every OPA mode; a policy without a default fails on its first undefined
// line, named by file and line, and passes with --undefined-as deny.
func TestWorkloadsVerifyUserFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA processes")
	}
	modes := "opa/inproc,opa/cli,opa/server"
	v0 := []string{"--policy", regoApp("v0", "authz.rego"), "--inputs", regoApp("v0", "inputs.jsonl")}
	nodefault := []string{"--policy", regoApp("nodefault", "authz.rego"), "--inputs", regoApp("nodefault", "inputs.jsonl")}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"v0 without the flag", v0, exitUsage, nil,
			[]string{"authz.rego:7: rego_parse_error", "add --v0-compatible", "authzbench opa fmt --v0-v1"}},
		{"v0", append(v0, "--v0-compatible"), 0,
			[]string{"authz        opa/inproc                 4       4  ok", "authz        opa/cli                    4       4  ok", "authz        opa/server                 4       4  ok"}, nil},
		{"no default", nodefault, exitFailed,
			[]string{"DISAGREES (2 wrong; first: " + regoApp("nodefault", "inputs.jsonl") + ":6)"},
			[]string{"target opa/inproc: " + regoApp("nodefault", "inputs.jsonl") + ":6 expects deny, got undefined"}},
		{"no default, undefined as deny", append(append([]string{}, nodefault...), "--undefined-as", "deny", "--name", "docs"), 0,
			[]string{"docs         opa/server                 4       4  ok"}, nil},
		{"bad --undefined-as", append(append([]string{}, nodefault...), "--undefined-as", "maybe"), exitUsage, nil, []string{`--undefined-as "maybe": want deny or allow`}},
		{"--v0-compatible without a policy", []string{"rbac", "--v0-compatible"}, exitUsage, nil, []string{"--v0-compatible applies to your own workload"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, append([]string{"workloads", "verify", "--target", modes}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.code, stdout, stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

// A run whose policy decides some inputs wrongly names them in the result, by file and line,
// lowest first, and the table names the first; --undefined-as is recorded; the workload is
// named after its policy file.
func TestRunNamesTheWrongInputs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := run(t, "run", "--target", "opa/inproc", "--policy", regoApp("nodefault", "authz.rego"),
		"--inputs", regoApp("nodefault", "inputs.jsonl"), "--undefined-as", "allow", "--requests", "40", "--warmup", "0s", "--workers", "2",
		"--no-progress", "-o", out)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d (wrong decisions)\nstdout %s\nstderr %s", code, exitFailed, stdout, stderr)
	}
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 1 {
		t.Fatalf("%d runs", len(doc.Runs))
	}
	r := doc.Runs[0]
	inputs := regoApp("nodefault", "inputs.jsonl")
	if r.Workload != "authz" || r.WorkloadDoc.UndefinedAs != "allow" || r.Summary.WrongDecision != 20 {
		t.Errorf("workload %q, undefined as %q, %d wrong; want authz, allow, 20", r.Workload, r.WorkloadDoc.UndefinedAs, r.Summary.WrongDecision)
	}
	ms := r.Summary.Mismatches
	if len(ms) != 2 || ms[0].Source != inputs+":6" || ms[0].Input != 3 || ms[1].Source != inputs+":8" ||
		ms[0].Expected != "deny" || ms[0].Got != "allow" {
		t.Errorf("mismatches %+v; want lines 6 and 8, expected deny, got allow", ms)
	}
	for _, want := range []string{"first wrong decision: " + inputs + ":6 expects deny, the engine decided allow", "an undefined decision counted as allow (--undefined-as)"} {
		if !strings.Contains(unwrapped(stdout), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
}

// report renders several result files one after another, each under its file name (a JSON
// array for json), and names every file it cannot read.
func TestReportSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"first", "second"} {
		out := filepath.Join(dir, name+".json")
		runOK(t, out, "run", "--target", "opa/inproc", "--v0-compatible", "--name", name, "--policy", regoApp("v0", "authz.rego"),
			"--inputs", regoApp("v0", "inputs.jsonl"), "--requests", "8", "--warmup", "0s", "--workers", "1", "--no-progress")
		paths = append(paths, out)
	}
	code, stdout, stderr := run(t, append([]string{"report"}, paths...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	a, b := strings.Index(stdout, "== "+paths[0]+" =="), strings.Index(stdout, "== "+paths[1]+" ==")
	first, second := strings.Index(stdout, "\nfirst "), strings.Index(stdout, "\nsecond ")
	if a < 0 || b < a || first < a || first > b || second < b {
		t.Errorf("want each file's heading followed by its own table, in order:\n%s", stdout)
	}
	code, stdout, _ = run(t, append([]string{"report", "--format", "json"}, paths...)...)
	var docs []result.Document
	if err := json.Unmarshal([]byte(stdout), &docs); code != 0 || err != nil || len(docs) != 2 || docs[1].Runs[0].Workload != "second" {
		t.Errorf("json: exit %d, %v, %d documents", code, err, len(docs))
	}
	missing := filepath.Join(dir, "absent.json")
	code, _, stderr = run(t, "report", paths[0], missing, missing+"2")
	if code != exitUsage || !strings.Contains(stderr, "absent.json") || !strings.Contains(stderr, "absent.json2") {
		t.Errorf("unreadable files: exit %d, stderr %q; want exit 2 naming both", code, stderr)
	}
}

// A built-in workload with both versions and a user's Rego-only workload run against targets of
// both engines: every pair that applies runs, the one that does not is skipped with a note in
// the result and under the table.
func TestMixedEnginesSkipWhatDoesNotApply(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	doc, stdout := runOK(t, out, "run", "--target", "opa/inproc,cedar/inproc", "--workload", "rbac",
		"--policy", regoApp("withtests", ""), "--data", regoApp("withtests", "data.json"), "--inputs", regoApp("withtests", "inputs.jsonl"),
		"--requests", "30", "--warmup", "0s", "--workers", "1", "--no-progress")
	var ran []string
	for _, r := range doc.Runs {
		ran = append(ran, r.Workload+" "+r.Target)
		if r.Summary.OK != 30 {
			t.Errorf("%s on %s: %d ok of %d", r.Workload, r.Target, r.Summary.OK, r.Summary.Requests)
		}
	}
	if want := []string{"rbac opa/inproc", "rbac cedar/inproc", "withtests opa/inproc"}; strings.Join(ran, ",") != strings.Join(want, ",") {
		t.Errorf("ran %v, want %v", ran, want)
	}
	if len(doc.Skipped) != 1 || doc.Skipped[0] != (result.Skip{Workload: "withtests", Target: "cedar/inproc", Reason: "the workload has no Cedar version"}) {
		t.Errorf("skipped %+v", doc.Skipped)
	}
	if !strings.Contains(stdout, "withtests on cedar/inproc: skipped, the workload has no Cedar version") {
		t.Errorf("no note of the skipped pair:\n%s", stdout)
	}
}
