package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// "Can our policies hold R at P99 < L, on OPA's server and Cedar's?" is one command: the user's
// Rego and Cedar are searched on both targets, one search each, every decision checked, and the
// result and its report hold a search per target.
func TestCapacityOfTheUsersFilesOnTwoTargets(t *testing.T) {
	dir := writeCedarApp(t)
	p := func(name string) string { return filepath.Join(dir, name) }
	out := p("capacity.json")
	// Rates low enough for a busy machine, steps just long enough to read a rate from: the test
	// asserts what was searched and recorded, not what the machine held.
	doc, stdout := runOK(t, out, "capacity", "--target", "opa/server,cedar/server",
		"--policy", p("app.rego"), "--data", p("data.json"), "--inputs", p("inputs.jsonl"),
		"--cedar-policies", p("app.cedar"), "--entities", p("entities.json"), "--schema", p("app.cedarschema"),
		"--cedar-requests", p("requests.jsonl"),
		"--slo", "p99=1s,errors=1%", "--start", "40", "--max", "80", "--step", "500ms", "--warmup", "0s", "--connections", "4", "--no-progress")
	if len(doc.Capacity) != 2 {
		t.Fatalf("%d searches recorded, want one per target:\n%s", len(doc.Capacity), stdout)
	}
	for i, target := range []string{"opa/server", "cedar/server"} {
		s := doc.Capacity[i]
		if s.Target != target || s.Workload != "app" || s.SLO.Percentile != 99 || s.SLO.LatencyUS != 1e6 || s.SLO.ErrorRatio != 0.01 {
			t.Errorf("search %d: %s on %s against p%g %gus %g; want app on %s against p99 1s 1%%", i, s.Workload, s.Target, s.SLO.Percentile, s.SLO.LatencyUS, s.SLO.ErrorRatio, target)
		}
		if len(s.Probes) == 0 || s.Met == nil && s.Missed == nil || s.Interrupted || s.Error != "" {
			t.Errorf("search on %s: %+v: want probes and a verdict", target, s)
		}
		for _, pr := range s.Probes {
			if pr.Run < 0 || pr.Run >= len(doc.Runs) {
				t.Fatalf("%s: probe at %g req/s names run %d of %d", target, pr.Rate, pr.Run, len(doc.Runs))
			}
			r := doc.Runs[pr.Run]
			// The user's files, both engines' forms, decided right: a wrong decision is an error.
			if r.Target != target || r.Workload != "app" || r.Load.Rate != pr.Rate || r.Summary.OK == 0 || r.Summary.Errors != 0 {
				t.Errorf("%s: probe at %g req/s is run %d: %s on %s at %g req/s, ok %d, errors %d", target, pr.Rate, pr.Run,
					r.Workload, r.Target, r.Load.Rate, r.Summary.OK, r.Summary.Errors)
			}
		}
	}
	for _, where := range []string{"== app on opa/server ==", "== app on cedar/server =="} {
		if !strings.Contains(stdout, where) {
			t.Errorf("stdout has no %q:\n%s", where, stdout)
		}
	}
	// authzbench report renders the kept result with the same table, a line per search.
	for _, format := range []string{"table", "markdown"} {
		code, report, stderr := run(t, "report", out, "--format", format)
		if code != 0 {
			t.Fatalf("report --format %s: exit %d: %s", format, code, stderr)
		}
		if !strings.Contains(report, "Capacity, one search per workload and target") {
			t.Errorf("report --format %s has no capacity table:\n%s", format, report)
		}
		for _, target := range []string{"opa/server", "cedar/server"} {
			if lineWith(report, "app", target, "p99<=1s, errors<=1%") == "" {
				t.Errorf("report --format %s has no capacity line for app on %s:\n%s", format, target, report)
			}
		}
	}
}

// lineWith is the first line of out holding every one of words, or "".
func lineWith(out string, words ...string) string {
	for _, line := range strings.Split(out, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all {
			return line
		}
	}
	return ""
}

// A scenario file gives capacity its workloads and targets, as it gives run them; the floor a
// file turns on is a run's reference, not searched.
func TestCapacityTakesAScenarioFilesWorkloadsAndTargets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	os.WriteFile(file, []byte("load: {duration: 30s, workers: 8}\nworkloads: [rbac]\ntargets: [opa/inproc]\n"), 0o644)
	doc, _ := runOK(t, filepath.Join(dir, "r.json"), "capacity", "-f", file, "--start", "50", "--max-steps", "1",
		"--step", "300ms", "--warmup", "0s", "--slo", "p99=1s,errors=1%", "--no-progress")
	if len(doc.Capacity) != 1 || doc.Capacity[0].Workload != "rbac" || doc.Capacity[0].Target != "opa/inproc" {
		t.Fatalf("searches %+v: want rbac on opa/inproc alone", doc.Capacity)
	}
	if len(doc.Runs) != 1 || doc.Runs[0].Load.Rate != 50 || doc.Runs[0].Load.DurationS != 0.3 {
		t.Errorf("runs %+v: want one probe at 50 req/s for 300ms, the search's load, not the file's", doc.Runs)
	}
}

// Every mistake in what capacity is given exits 2, saying what to fix, before any probe: no
// search is begun and no result written.
func TestCapacityRefusesBadInputBeforeAnyProbe(t *testing.T) {
	dir := writeCedarApp(t)
	p := func(name string) string { return filepath.Join(dir, name) }
	os.WriteFile(p("bad.jsonl"), []byte(`{"input": {"user": "alice", "photo": "p1"}, "expect": true}`+"\n"+`{"input": `+"\n"), 0o644)
	os.WriteFile(p("broken.rego"), []byte("package app\n\nallow if {\n"), 0o644)
	os.WriteFile(p("s.yaml"), []byte("workloads:\n  - name: mine\n    policy: [app.rego]\n    inputs: missing.jsonl\ntargets: [opa/server]\n"), 0o644)
	rego := []string{"--policy", p("app.rego"), "--data", p("data.json")}
	fast := []string{"--step", "200ms", "--warmup", "0s", "--max-steps", "1", "--no-progress"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a missing file", append(rego, "--inputs", p("nope.jsonl"), "--target", "opa/server,cedar/server"),
			"--inputs " + p("nope.jsonl") + ": no such file"},
		{"a bad line", append(rego, "--inputs", p("bad.jsonl"), "--target", "opa/server"), "bad.jsonl:2: "},
		{"a policy that does not compile", []string{"--policy", p("broken.rego"), "--inputs", p("inputs.jsonl"), "--target", "opa/server"}, "broken.rego:"},
		{"an unknown target", append(rego, "--inputs", p("inputs.jsonl"), "--target", "opa/server,cedar/sever"),
			`--target: unknown target "cedar/sever"; known: `},
		{"a target that cannot run the workload", append(rego, "--inputs", p("inputs.jsonl"), "--target", "opa/server,cedar/server"),
			"--target cedar/server: your workload has no Cedar version; give --cedar-policies and --cedar-requests"},
		{"a built-in workload a target cannot run", []string{"--workload", "risk", "--target", "openfga/inproc"},
			"--target openfga/inproc: --workload risk has no OpenFGA version"},
		{"a scenario file's missing inputs", []string{"-f", p("s.yaml")}, "missing.jsonl"},
		{"an option no target takes", append(rego, "--inputs", p("inputs.jsonl"), "--target", "opa/inproc", "--replicas", "2"), "--replicas"},
		{"a bad SLO", []string{"--slo", "p99=5"}, `--slo "p99=5": latency "5"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			code, stdout, stderr := run(t, append(append(append([]string{"capacity"}, tc.args...), fast...), "-o", out)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
			if strings.Contains(stderr, "authzbench: capacity of") || stdout != "" {
				t.Errorf("a search began:\nstdout %s\nstderr %s", stdout, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a result was written")
			}
		})
	}
}
