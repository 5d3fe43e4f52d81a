package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// A run that kept its decisions apart gets a row for each, with its own count, share and
// latency; a document without any (every file written before) gets no such table.
func TestDecisionsTable(t *testing.T) {
	run := result.Run{Workload: "rbac", Target: "openfga/inproc", Summary: result.Summary{Requests: 1000, OK: 1000,
		LatencyUS: result.Percentiles{P50: 150, P99: 900},
		Decisions: &result.Decisions{
			Allow: result.DecisionLatency{Count: 600, LatencyUS: &result.Percentiles{P50: 100, P90: 200, P99: 300, Max: 400}},
			Deny:  result.DecisionLatency{Count: 400, LatencyUS: &result.Percentiles{P50: 700, P90: 800, P99: 900, Max: 1000}}}}}
	doc := &result.Document{Schema: result.Schema, Runs: []result.Run{run}}
	var b bytes.Buffer
	if err := Table(&b, doc); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if !strings.Contains(got, "Allowed and denied apart") {
		t.Fatalf("no decisions table:\n%s", got)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(got, "\n") {
		f := strings.Fields(l)
		if len(f) > 3 && f[0] == "rbac" && (f[2] == "allow" || f[2] == "deny") {
			lines[f[2]] = l
		}
	}
	for d, want := range map[string][]string{"allow": {"600", "60.0 %", "100µs", "300µs"}, "deny": {"400", "40.0 %", "700µs", "900µs"}} {
		for _, w := range want {
			if !strings.Contains(lines[d], w) {
				t.Errorf("%s row %q does not say %q", d, lines[d], w)
			}
		}
	}
	// A run whose every response allowed (nop) has no deny row.
	nop := run
	nop.Workload = "nop"
	nop.Summary.Decisions = &result.Decisions{Allow: result.DecisionLatency{Count: 10, LatencyUS: &result.Percentiles{P50: 5}}}
	doc.Runs = append(doc.Runs, nop)
	b.Reset()
	if err := Table(&b, doc); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "nop" && f[2] == "deny" {
			t.Errorf("a deny row for a run that denied nothing: %q", l)
		}
	}
	doc.Runs = doc.Runs[:1]
	doc.Runs[0].Summary.Decisions = nil
	b.Reset()
	if err := Table(&b, doc); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Allowed and denied") {
		t.Errorf("a run without decisions apart got the table:\n%s", b.String())
	}
}
