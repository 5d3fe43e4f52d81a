package report

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// searchesDocument holds the searches of one capacity command over two targets, and the kinds
// of search whose line alone would mislead: every rate met, none met, a ramp refuted, a search
// stopped.
func searchesDocument() *result.Document {
	slo := result.SearchSLO{Percentile: 99, LatencyUS: 5000, ErrorRatio: 0.001}
	probe := func(rate float64, run int, pass bool, why string, us float64) result.SearchProbe {
		return result.SearchProbe{Rate: rate, Run: run, Pass: pass, Why: why, LatencyUS: us}
	}
	knee := []result.SearchProbe{probe(1000, 0, true, "", 900), probe(2000, 1, false, "p99 7.2ms > 5ms", 7200), probe(1500, 2, true, "", 3100)}
	doc := layersDocument()
	doc.Capacity = []result.Search{
		{Workload: "authz", Target: "opa/server", SLO: slo, Probes: knee, Met: &knee[2], Missed: &knee[1]},
		{Workload: "authz", Target: "cedar/server", SLO: slo, Probes: knee[:1], Met: &knee[0]},
		{Workload: "authz", Target: "opa/cli", SLO: slo, Probes: knee[1:2], Missed: &knee[1]},
		{Workload: "authz", Target: "opa/inproc", SLO: slo, Probes: knee[1:2], Missed: &knee[1], Ramp: &result.SearchRamp{Run: 3, Estimate: 2000}},
		{Workload: "authz", Target: "opa/wasm", SLO: slo, Probes: knee[:1], Met: &knee[0], Interrupted: true},
	}
	return doc
}

// A document of capacity searches reads, in every table-shaped format, as a line per workload
// and target with its capacity, the rate that missed above it and why, and a note wherever the
// line alone would mislead.
func TestReportShowsOneLinePerSearch(t *testing.T) {
	for _, format := range []string{"table", "markdown", "html"} {
		t.Run(format, func(t *testing.T) {
			f, err := Lookup(format)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := f.Render(&b, searchesDocument()); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			say := func(s string) string { return s }
			if format == "html" {
				say = html.EscapeString
			}
			for target, cells := range map[string][]string{
				"opa/server":   {"1,500", "p99 3.10ms", "2,000", "p99 7.2ms > 5ms"},
				"cedar/server": {"≥ 1,000", "p99 900µs"},
			} {
				line := lineWith(out, target+say(" "), say("p99<=5ms, errors<=0.1%"))
				if format == "html" {
					line = lineWith(out, "<td>"+target+"</td>", say("p99<=5ms, errors<=0.1%"))
				}
				if line == "" {
					t.Errorf("no line for %s under the SLO in\n%s", target, out)
					continue
				}
				for _, c := range cells {
					if !strings.Contains(line, say(c)) {
						t.Errorf("%s's line lacks %q: %s", target, c, line)
					}
				}
			}
			flat := strings.Join(strings.Fields(out), " ")
			for _, want := range []string{
				"authz on cedar/server: every rate tried met the SLO, up to 1,000 req/s: a floor, not a capacity",
				"authz on opa/cli: no rate met the SLO, not even the first, 2,000 req/s",
				"authz on opa/inproc: the ramp's estimate, 2,000 req/s, did not hold at a constant rate",
				"authz on opa/wasm: the search was stopped before it ended",
			} {
				if !strings.Contains(flat, say(want)) {
					t.Errorf("no note %q in\n%s", want, out)
				}
			}
		})
	}
	var b bytes.Buffer
	if err := Table(&b, layersDocument()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Capacity") {
		t.Errorf("a document with no search shows a capacity table:\n%s", b.String())
	}
}

// lineWith is the first line of out (an HTML table's row) holding every one of words, or "".
func lineWith(out string, words ...string) string {
	for _, line := range strings.Split(strings.ReplaceAll(out, "</tr>", "</tr>\n"), "\n") {
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
