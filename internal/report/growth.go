package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

// growthNotes say, for each scaling series of the document (runs of generated workloads such as
// rules-path-1000 at several sizes), how its latency grows with N, in a sentence per target and
// percentile, then the rule that chose each model. The fits are the document's (growth[], which
// internal/fit computed when the run ended): report reads result documents only.
func growthNotes(doc *result.Document) []string {
	gs := doc.Growth
	if len(gs) == 0 {
		return nil
	}
	var notes []string
	for _, g := range gs {
		notes = append(notes, GrowthSentence(g))
	}
	return append(notes, "growth: constant, logarithmic (against ln N) and linear models fitted by least squares to each series' latency against N (at least 3 sizes); "+
		"constant when the better-fitting growing model changes latency by less than 10 % of its mean across the sizes measured, or less than twice the repetitions' spread, "+
		"or explains less than 80 % of the variance; else that model (docs/scaling.md)")
}

// GrowthSentence says how one percentile grows along one series: "rules-path rego-rules on
// opa/inproc: p50 grows linearly, 0.41 µs per rule (R² 0.99)".
func GrowthSentence(g result.GrowthFit) string {
	lo, hi := g.Points[0].N, g.Points[len(g.Points)-1].N
	unit := strings.TrimSuffix(g.Param, "s") // rules -> rule
	head := fmt.Sprintf("%s on %s: %s", strings.ReplaceAll(g.Series, "/", " "), g.Target, g.Percentile)
	switch g.Model {
	case result.Linear:
		verb := "grows"
		if g.Slope < 0 {
			verb = "falls"
		}
		per, scale := "per "+unit, 1.0
		if s := math.Abs(g.Slope); s > 0 && s < 0.01 {
			// A slope of nanoseconds per rule reads better per thousand.
			per, scale = fmt.Sprintf("per 1000 %s", g.Param), 1000
		}
		return fmt.Sprintf("%s %s linearly, %s µs %s (R² %.2f), from %s µs at %d to %s µs at %d %s",
			head, verb, us(math.Abs(g.Slope)*scale), per, g.R2, us(g.Points[0].LatencyUS), lo, us(g.Points[len(g.Points)-1].LatencyUS), hi, g.Param)
	case result.Logarithmic:
		verb := "grows"
		if g.Slope < 0 {
			verb = "falls"
		}
		return fmt.Sprintf("%s %s logarithmically, %s µs per doubling of %s (R² %.2f), from %s µs at %d to %s µs at %d %s",
			head, verb, us(math.Abs(g.Slope)*math.Ln2), g.Param, g.R2, us(g.Points[0].LatencyUS), lo, us(g.Points[len(g.Points)-1].LatencyUS), hi, g.Param)
	}
	return fmt.Sprintf("%s is flat at %s µs on average from %d to %d %s (%s)", head, us(g.Intercept), lo, hi, g.Param, g.Why)
}

// us writes microseconds with three significant figures.
func us(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
