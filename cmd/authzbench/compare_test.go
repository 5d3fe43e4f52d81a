package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/compare"
	"github.com/authzbench/authzbench/internal/result"
)

// compareOutput is what compare --format json writes.
type compareOutput struct {
	Rows []compare.Row    `json:"rows"`
	Gate *compare.Verdict `json:"gate"`
}

func readCompareJSON(t *testing.T, stdout string) compareOutput {
	t.Helper()
	var out compareOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("compare --format json: %v\n%s", err, stdout)
	}
	return out
}

// The gate's exit statuses: 0 when it passes, 1 when it fails (here on a run the new result
// lacks, and on repetitions too few for the test), 2 on bad input, naming the flag or file.
func TestCompareExitStatus(t *testing.T) {
	dir := t.TempDir()
	four := filepath.Join(dir, "four.json")
	runOK(t, four, "run", "--target", "opa/inproc", "--workload", "nop,rbac", "--repeat", "4", "--duration", "100ms", "--warmup", "50ms", "--no-progress")

	// The same figures measured again (a copy whose repetitions are other measurements: the
	// file against itself is refused, mergeid_test.go).
	again := remeasuredCopy(t, four, filepath.Join(dir, "again.json"))
	code, stdout, stderr := run(t, "compare", "--format", "json", "--fail-on", "p99>+10%,throughput<-5%", four, again)
	if code != 0 {
		t.Fatalf("a result against its figures measured again: exit %d\n%s\n%s", code, stdout, stderr)
	}
	same := readCompareJSON(t, stdout)
	if len(same.Rows) != 2 || same.Gate == nil || !same.Gate.Passed {
		t.Fatalf("rows %d, gate %+v; want 2 rows and a pass", len(same.Rows), same.Gate)
	}
	for _, row := range same.Rows {
		for _, c := range row.Cells {
			if c.Significant {
				t.Errorf("%s %s called against the same figures: %+v", row.Name(), c.Figure, c)
			}
		}
	}

	// The new result lost a run: the gate fails and names it.
	doc, err := result.Read(again)
	if err != nil {
		t.Fatal(err)
	}
	doc.Runs = doc.Runs[:1]
	lost := filepath.Join(dir, "lost.json")
	if err := result.Write(lost, doc); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "compare", "--fail-on", "p99>+10%", four, lost)
	if code != exitFailed || !strings.Contains(stdout, "rbac opa/inproc 4 workers: only in the base") || !strings.Contains(stderr, "gate p99>+10% failed") {
		t.Errorf("a lost run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Without --fail-on compare only reports: the lost run is shown, and the exit is 0.
	if code, stdout, _ = run(t, "compare", four, lost); code != 0 || !strings.Contains(stdout, "only in the base") {
		t.Errorf("compare without a gate: exit %d\n%s", code, stdout)
	}

	// The committed quickstart has 3 repetitions a run: too few for the test at 5 %.
	quick := filepath.Join("..", "..", "docs", "results", "quickstart-2026-11-23.json")
	code, stdout, _ = run(t, "compare", "--format", "markdown", "--fail-on", "p99>+10%", quick, remeasuredCopy(t, quick, filepath.Join(dir, "quick-again.json")))
	if code != exitFailed || !strings.Contains(stdout, "too few repetitions (base 3, new 3)") || !strings.Contains(stdout, "| ? |") {
		t.Errorf("3 repetitions a side: exit %d\n%s", code, stdout)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown figure", []string{"compare", "--fail-on", "p98>+10%", four, four}, `--fail-on: "p98>+10%": unknown figure "p98"`},
		{"bad operator", []string{"compare", "--fail-on", "p99>+10%,throughput=<-5%", four, four}, `--fail-on: "throughput=<-5%": operator "=<"`},
		{"empty gate", []string{"compare", "--fail-on", "", four, four}, "--fail-on: empty expression"},
		{"bad format", []string{"compare", "--format", "html", four, four}, `--format: unknown format "html"`},
		{"bad alpha", []string{"compare", "--alpha", "5", four, four}, "--alpha 5: want a level between 0 and 1"},
		{"missing file", []string{"compare", four, filepath.Join(dir, "nope.json")}, "nope.json"},
		{"one file", []string{"compare", four}, "accepts 2 arg(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// ab takes turns between two policies that decide alike, one with a slow path on every
// decision: it reports the slow one slower, whichever side it is on, and the gate fails only
// when B is the slow one.
func TestABReportsTheSlowerPolicy(t *testing.T) {
	dir := t.TempDir()
	fast := filepath.Join(dir, "fast.rego")
	slow := filepath.Join(dir, "slow.rego")
	inputs := filepath.Join(dir, "in.jsonl")
	os.WriteFile(fast, []byte("package authz\n\ndefault allow := false\n\nallow if input.user == \"alice\"\n"), 0o644)
	// The same decisions, after summing a few thousand numbers on every request (lower() keeps
	// OPA's rule index from skipping the rule for bob).
	os.WriteFile(slow, []byte("package authz\n\ndefault allow := false\n\nallow if {\n\tsum(numbers.range(1, 3000)) > 0\n\tlower(input.user) == \"alice\"\n}\n"), 0o644)
	os.WriteFile(inputs, []byte("{\"input\": {\"user\": \"alice\"}, \"expect\": true}\n{\"input\": {\"user\": \"bob\"}, \"expect\": false}\n"), 0o644)
	shared := []string{"--", "--target", "opa/inproc", "--inputs", inputs, "--duration", "150ms", "--warmup", "50ms", "--no-progress"}

	for _, tc := range []struct {
		name     string
		a, b     string
		exit     int
		slowerIs string
	}{
		{"B slower: a regression", fast, slow, exitFailed, "new"},
		{"B faster: an improvement", slow, fast, 0, "base"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outA, outB := filepath.Join(t.TempDir(), "a.json"), filepath.Join(t.TempDir(), "b.json")
			args := append([]string{"ab", "--policy-a", tc.a, "--policy-b", tc.b, "--repeat", "5", "--out-a", outA, "--out-b", outB,
				"--format", "json", "--fail-on", "p50>+10%,throughput<-5%"}, shared...)
			code, stdout, stderr := run(t, args...)
			if code != tc.exit {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.exit, stdout, stderr)
			}
			out := readCompareJSON(t, stdout)
			if len(out.Rows) != 1 || out.Rows[0].Problem != "" {
				t.Fatalf("rows %+v; want one row, the two policies matched", out.Rows)
			}
			row := out.Rows[0]
			p50, rps := row.Cell(compare.P50), row.Cell(compare.Throughput)
			if !p50.Significant || !rps.Significant || p50.NBase != 5 || p50.NNew != 5 {
				t.Fatalf("p50 %+v, throughput %+v: want both called over 5+5 repetitions", *p50, *rps)
			}
			if slowerNew := p50.Change > 0 && rps.Change < 0; slowerNew != (tc.slowerIs == "new") {
				t.Errorf("p50 %+.0f%%, throughput %+.0f%%: want the %s side slower", p50.Change*100, rps.Change*100, tc.slowerIs)
			}
			if !strings.Contains(row.Workload, "fast") || !strings.Contains(row.Workload, "slow") {
				t.Errorf("row workload %q; want it to name both policies", row.Workload)
			}
			// One result per side, every turn's repetition merged into it.
			for _, path := range []string{outA, outB} {
				doc, err := result.Read(path)
				if err != nil {
					t.Fatal(err)
				}
				if len(doc.Runs) != 1 || len(doc.Runs[0].Repetitions) != 5 || doc.Runs[0].Summary.OK == 0 {
					t.Errorf("%s: %d runs, want one with 5 repetitions", path, len(doc.Runs))
				}
			}
			// The turns alternated: every A repetition started before its B, and after the B before it.
			a, _ := result.Read(outA)
			b, _ := result.Read(outB)
			// Every turn's repetition keeps the id it was measured with, one of its own: the
			// sides merged again count each once.
			if err := result.Distinct(result.Source{Name: outA, Doc: a}, result.Source{Name: outB, Doc: b}); err != nil || slices.Contains(append(ids(a), ids(b)...), "") {
				t.Errorf("ids %q and %q: %v; want one of its own for every repetition", ids(a), ids(b), err)
			}
			for i := range 5 {
				ra, rb := a.Runs[0].Repetitions[i], b.Runs[0].Repetitions[i]
				if !ra.Started.Before(rb.Started) || (i > 0 && !b.Runs[0].Repetitions[i-1].Started.Before(ra.Started)) {
					t.Errorf("turn %d: A started %s, B %s; want A B A B", i+1, ra.Started, rb.Started)
				}
				if ra.Turn != 2*i+1 || rb.Turn != 2*i+2 {
					t.Errorf("turn %d: A numbered %d, B %d; want %d and %d, their places in the session", i+1, ra.Turn, rb.Turn, 2*i+1, 2*i+2)
				}
			}
		})
	}
}

// A turn that measures and then fails (its policy decides wrong) keeps what it measured in its
// side's file, marked with why the session stopped, and its table, which its messages point
// at, is shown: ab deleted it with its temporary directory, wrote no --out-b, and said "see
// the table" of a table it never printed.
func TestABKeepsAFailedTurn(t *testing.T) {
	dir := t.TempDir()
	right, wrong := filepath.Join(dir, "right.rego"), filepath.Join(dir, "wrong.rego")
	inputs := filepath.Join(dir, "in.jsonl")
	os.WriteFile(right, []byte("package authz\n\ndefault allow := false\n\nallow if input.user == \"alice\"\n"), 0o644)
	os.WriteFile(wrong, []byte("package authz\n\ndefault allow := false\n\nallow if input.user == \"bob\"\n"), 0o644)
	os.WriteFile(inputs, []byte("{\"input\": {\"user\": \"alice\"}, \"expect\": true}\n{\"input\": {\"user\": \"carol\"}, \"expect\": false}\n"), 0o644)
	outA, outB := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	code, stdout, stderr := run(t, "ab", "--policy-a", right, "--policy-b", wrong, "--repeat", "2", "--out-a", outA, "--out-b", outB,
		"--", "--target", "opa/inproc", "--inputs", inputs, "--requests", "40", "--workers", "1", "--warmup", "0s", "--no-progress")
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFailed, stdout, stderr)
	}
	for _, w := range []string{"20 responses were not served decisions (see the table)", "Workload", "wrong_decision: 20",
		"ab stopped after 1 turn of side A and 0 of side B; the finished turns and the failed one's measurement (side B, its table above) are kept"} {
		if !strings.Contains(unwrapped(stderr), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	for _, side := range []struct {
		path  string
		wrong uint64
	}{{outA, 0}, {outB, 20}} {
		doc, err := result.Read(side.path)
		if err != nil {
			t.Fatalf("the measured turn is kept: %v", err)
		}
		if len(doc.Runs) != 1 || len(doc.Runs[0].Repetitions) != 1 || doc.Runs[0].Summary.WrongDecision != side.wrong {
			t.Errorf("%s: runs %+v; want one turn, %d wrong decisions", side.path, doc.Runs, side.wrong)
		}
		if !strings.Contains(doc.StopReason, "ab turn 1, side B: authzbench run exited with status 1 (its last message: 20 responses were not served decisions") || doc.Interrupted {
			t.Errorf("%s: stop reason %q, interrupted %t; want side B's failure named", side.path, doc.StopReason, doc.Interrupted)
		}
	}
}

func TestABUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing differs", []string{"ab", "--", "--target", "opa/inproc"}, "give what differs between the sides"},
		{"one side of a pair", []string{"ab", "--policy-a", "x.rego"}, "--policy-a and --policy-b go together"},
		{"alike", []string{"ab", "--workload-a", "rbac", "--workload-b", "rbac"}, "the two sides are given alike"},
		{"repeat after --", []string{"ab", "--workload-a", "nop", "--workload-b", "rbac", "--", "--repeat", "3"}, "--repeat after --: ab sets"},
		{"out after --", []string{"ab", "--workload-a", "nop", "--workload-b", "rbac", "--", "-o", "x.json"}, "-o after --"},
		{"bad gate", []string{"ab", "--workload-a", "nop", "--workload-b", "rbac", "--fail-on", "p99>>1%"}, `--fail-on: "p99>>1%": operator ">>"`},
		{"zero turns", []string{"ab", "--workload-a", "nop", "--workload-b", "rbac", "--repeat", "0"}, "--repeat 0"},
		{"bad run flag", []string{"ab", "--workload-a", "nop", "--workload-b", "rbca", "--", "--target", "opa/inproc", "--duration", "100ms", "--warmup", "50ms"},
			`--workload: unknown workload "rbca"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// ab runs each turn as a process of its own: here the test binary, acting as authzbench.
func init() { abChildEnv = []string{"AUTHZBENCH_TEST_MAIN=1"} }

// --opa-bin-a runs side A's servers from another opa executable (a wrapper around this test
// binary's linked OPA stands in for one), side B's from the OPA linked in; their runs match.
func TestABTwoOPABinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA servers")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "opa")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nexec '"+self+"' opa \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	outA, outB := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	code, stdout, stderr := run(t, "ab", "--opa-bin-a", wrapper, "--repeat", "2", "--out-a", outA, "--out-b", outB, "--format", "json",
		"--", "--target", "opa/server", "--workload", "nop", "--duration", "200ms", "--warmup", "50ms", "--no-progress")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	out := readCompareJSON(t, stdout)
	if len(out.Rows) != 1 || out.Rows[0].Problem != "" || out.Rows[0].Cell(compare.P50).Untestable == "" {
		t.Errorf("rows %+v; want one row, matched, untestable on 2 repetitions a side", out.Rows)
	}
	for _, side := range []struct {
		path    string
		wrapped bool
	}{{outA, true}, {outB, false}} {
		doc, err := result.Read(side.path)
		if err != nil {
			t.Fatal(err)
		}
		r := doc.Runs[0]
		if wrapped := len(r.SUT.Command) > 0 && r.SUT.Command[0] == wrapper; wrapped != side.wrapped || r.Summary.OK == 0 || len(r.Repetitions) != 2 {
			t.Errorf("%s: command %v, ok %d, %d repetitions; want the wrapper %t", side.path, r.SUT.Command, r.Summary.OK, len(r.Repetitions), side.wrapped)
		}
	}
}
