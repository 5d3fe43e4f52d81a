package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/fit"
	"github.com/authzbench/authzbench/internal/result"
)

// A document with scaling series gets one sentence per series, target and percentile under
// the table, saying the model the rule chose with its slope in the series' own unit, and the
// rule once.
func TestGrowthNotes(t *testing.T) {
	run := func(target, series string, n int, p50 float64) result.Run {
		return result.Run{Target: target, Workload: "w", Load: result.Load{Model: result.ClosedLoop, Workers: 1},
			Scale:   &result.Scale{Series: series, Param: "rules", N: n},
			Summary: result.Summary{Requests: 10, OK: 10, LatencyUS: result.Percentiles{P50: p50, P99: 2 * p50}}}
	}
	doc := &result.Document{Schema: result.Schema}
	for _, n := range []int{10, 100, 1000, 10000} {
		doc.Runs = append(doc.Runs,
			run("opa/inproc", "rules-path/rego-rules", n, 5+0.41*float64(n)),
			run("opa/inproc", "rules-path/rego-indexed", n, 7),
			run("cedar/inproc", "rules-path/cedar-policies", n, 2+1.5*math.Log(float64(n))))
	}
	doc.Growth = fit.Growth(doc) // as the run that wrote the document does
	var notes []string
	for _, n := range Build(doc).Notes {
		notes = append(notes, n.Text)
	}
	for _, want := range []string{
		"rules-path rego-rules on opa/inproc: p50 grows linearly, 0.410 µs per rule (R² 1.00), from 9.10 µs at 10 to 4105 µs at 10000 rules",
		"rules-path rego-rules on opa/inproc: p99 grows linearly, 0.820 µs per rule (R² 1.00)",
		"rules-path rego-indexed on opa/inproc: p50 is flat at 7.00 µs on average from 10 to 10000 rules",
		"rules-path cedar-policies on cedar/inproc: p50 grows logarithmically, 1.04 µs per doubling of rules (R² 1.00)",
		"growth: constant, logarithmic (against ln N) and linear models fitted by least squares",
	} {
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, want) }) {
			t.Errorf("no note says %q; notes:\n%s", want, strings.Join(notes, "\n"))
		}
	}

	// A document without scaling series says nothing about growth.
	plain := &result.Document{Schema: result.Schema, Runs: []result.Run{{Target: "opa/inproc", Workload: "rbac",
		Summary: result.Summary{Requests: 1, OK: 1}}}}
	for _, n := range Build(plain).Notes {
		if strings.Contains(n.Text, "growth") {
			t.Errorf("a document without series has a growth note: %s", n.Text)
		}
	}
}
