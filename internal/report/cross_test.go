package report

import (
	"bytes"
	"maps"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// crossDocument runs two engines in two modes on two workloads; one Cedar run served nothing.
func crossDocument() *result.Document {
	run := func(workload, target string, p50 float64, ok uint64) result.Run {
		r := result.Run{Target: target, Workload: workload, Load: result.Load{Model: result.ClosedLoop, Workers: 1}, Summary: result.Summary{
			Requests: 1000, OK: ok, ThroughputRPS: result.Spread{Mean: 1e6 / p50, N: 1},
			LatencyUS: result.Percentiles{P50: p50, P95: p50, P99: p50, P999: p50},
		}}
		switch {
		case strings.HasPrefix(target, "cedar/") && workload == "api":
			r.WorkloadDoc.Handed = &result.Handed{Engine: "cedar", Language: "Cedar", What: "Cedar is handed the token's verdict"}
		case strings.HasPrefix(target, "openfga/") && workload == "api":
			r.WorkloadDoc.Handed = &result.Handed{Engine: "openfga", Language: "OpenFGA", What: "OpenFGA is handed the roles table as tuples"}
		}
		return r
	}
	return &result.Document{Schema: result.Schema, Runs: []result.Run{
		run("api", "opa/inproc", 40, 1000),
		run("api", "cedar/inproc", 4, 1000),
		run("api", "opa/server", 300, 1000),
		run("api", "cedar/server", 250, 0), // served nothing: no ratio
		run("rbac", "opa/inproc", 20, 1000),
		run("rbac", "cedar/inproc", 80, 1000),
		run("api", "openfga/inproc", 20, 1000),
		run("api", "openfga/server", 400, 1000),
	}}
}

// The cross-engine column divides the first engine's P50 by each row's within one workload
// and mode, never across modes; the Cedar rows handed work Rego does itself are marked in the
// table, and what they are handed is said once per workload.
func TestCrossEngineColumn(t *testing.T) {
	var b bytes.Buffer
	if err := Table(&b, crossDocument()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	// The table: from its header (after the findings, if any) to the blank line before the notes.
	for len(lines) > 0 && !strings.HasPrefix(lines[0], "Workload") {
		lines = lines[1:]
	}
	for i, l := range lines {
		if l == "" {
			lines = lines[:i]
			break
		}
	}
	if len(lines) == 0 || !strings.HasSuffix(strings.TrimSpace(lines[0]), "× vs opa") {
		t.Fatalf("header %q lacks the cross-engine column", lines[0])
	}
	want := map[string]string{ // row prefix -> last cell
		"api          opa/inproc":     "1.00×",
		"api          cedar/inproc":   "10.0×",
		"api          opa/server":     "1.00×",
		"api          cedar/server":   "-",
		"rbac         opa/inproc":     "1.00×",
		"rbac         cedar/inproc":   "0.250×",
		"api          openfga/inproc": "2.00×",
		"api          openfga/server": "0.750×",
	}
	marked := map[string]bool{}
	for _, l := range lines[1:] {
		fields := strings.Fields(l)
		if len(fields) > 2 && fields[1] == handedMark {
			fields = append(fields[:1], fields[2:]...)
			marked[fields[0]+" "+fields[1]] = true
		}
		if len(fields) < 2 {
			continue
		}
		key := fields[0] + " " + fields[1]
		for prefix, cell := range want {
			if strings.Join(strings.Fields(prefix), " ") == key {
				if got := fields[len(fields)-1]; got != cell {
					t.Errorf("%s: cross-engine cell %q, want %q", key, got, cell)
				}
				delete(want, prefix)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("rows not found: %v\n%s", want, b.String())
	}
	if want := map[string]bool{"api cedar/inproc": true, "api cedar/server": true, "api openfga/inproc": true, "api openfga/server": true}; !maps.Equal(marked, want) {
		t.Errorf("rows marked %s: %v, want the Cedar and OpenFGA api rows\n%s", handedMark, marked, b.String())
	}
	// Each note names the engine its rows ran on, once for all its modes.
	notes := unwrapNotes(b.String())
	for _, note := range []string{
		handedMark + " api in Cedar, not the same work as in OPA: Cedar is handed the token's verdict",
		handedMark + " api in OpenFGA, not the same work as in OPA: OpenFGA is handed the roles table as tuples",
	} {
		if n := strings.Count(notes, note); n != 1 {
			t.Errorf("%q is said %d times, want once:\n%s", note, n, notes)
		}
	}
	if n := strings.Count(notes, handedMark+" api in"); n != 2 {
		t.Errorf("%d notes for api, want one per engine:\n%s", n, notes)
	}
}

// One engine alone gets no cross-engine column.
func TestNoCrossEngineColumnForOneEngine(t *testing.T) {
	doc := crossDocument()
	doc.Runs = []result.Run{doc.Runs[0], doc.Runs[2]}
	var b bytes.Buffer
	if err := Markdown(&b, doc); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "× vs opa") {
		t.Errorf("cross-engine column with one engine:\n%s", b.String())
	}
}

// A ratio is marked only when its 95 % interval excludes 1; the note says so.
func TestRatioMarksOnlyCalledDifferences(t *testing.T) {
	run := func(target string, turn int, rps ...float64) result.Run {
		r := result.Run{Target: target, Workload: "rbac", Load: result.Load{Model: result.ClosedLoop, Workers: 4}}
		var sum float64
		for i, v := range rps {
			sum += v
			r.Repetitions = append(r.Repetitions, result.Repetition{OK: 100, ElapsedS: 1, ThroughputRPS: v, Turn: turn + 3*i,
				LatencyUS: result.Percentiles{P50: 1e6 / v}})
		}
		r.Summary = result.Summary{OK: 300, ThroughputRPS: result.Spread{Mean: sum / 3, N: 3},
			LatencyUS: result.Percentiles{P50: 3e6 / sum}}
		return r
	}
	doc := &result.Document{Schema: result.Schema, Order: "interleaved", Runs: []result.Run{
		run("opa/cli", 1, 100, 200, 150),
		run("opa/server", 2, 110, 220, 165), // 10 % more in every turn
		run("opa/inproc", 3, 101, 198, 152), // within the noise
	}}
	var b bytes.Buffer
	if err := Table(&b, doc); err != nil {
		t.Fatal(err)
	}
	out := unwrapNotes(b.String())
	for _, want := range []string{"1.10× †", "× vs first: this row's req/s divided by the first row's of its workload; † marks a difference: its 95 % confidence interval",
		"t interval on the logs of the per-turn ratios"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "× †"); n != 1 {
		t.Errorf("%d ratios marked, want only opa/server's:\n%s", n, out)
	}
}

// A row with wrong decisions gets no cross-engine ratio, and is no base for one either: engines
// that decide differently are not doing the same work. The table names its first wrong input.
func TestNoCrossEngineRatioBesideWrongDecisions(t *testing.T) {
	doc := crossDocument()
	doc.Runs = doc.Runs[:3] // api: opa/inproc, cedar/inproc, opa/server
	wrongRun := func(r *result.Run) {
		r.Summary.WrongDecision, r.Summary.Errors = 3, 3
		r.Summary.ErrorClasses = map[string]uint64{"wrong_decision": 3}
		r.Summary.Mismatches = []result.Mismatch{{Input: 4, Source: "requests.jsonl:5", Expected: "deny", Got: "allow"}, {Input: 9, Expected: "deny", Got: "allow"}}
	}
	for _, tc := range []struct {
		name  string
		wrong int // the run with wrong decisions
	}{{"compared run", 1}, {"base run", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			d := *doc
			d.Runs = append([]result.Run{}, doc.Runs...)
			wrongRun(&d.Runs[tc.wrong])
			for _, c := range result.Compare(&d) {
				if c.Figure == result.P50 {
					t.Errorf("cross-engine comparison %+v beside a run with wrong decisions", c)
				}
			}
			var b bytes.Buffer
			if err := Table(&b, &d); err != nil {
				t.Fatal(err)
			}
			out := unwrapNotes(b.String())
			for _, l := range strings.Split(out, "\n") {
				if f := strings.Fields(l); len(f) > 2 && f[1] == "cedar/inproc" && f[len(f)-1] != "-" {
					t.Errorf("cedar/inproc cross-engine cell %q, want -\n%s", f[len(f)-1], out)
				}
			}
			target := d.Runs[tc.wrong].Target
			for _, want := range []string{
				"api on " + target + ": no × vs opa: 3 wrong decisions",
				"api on " + target + ": first wrong decision: requests.jsonl:5 expects deny, the engine decided allow (the result's summary.mismatches names the first 2)",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("table lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
