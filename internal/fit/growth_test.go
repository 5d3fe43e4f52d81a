package fit

import (
	"math"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// noise is a fixed, zero-sum wobble of ±2 %, so the synthetic series are not exact lines and
// the fits must still find their coefficients.
var noise = []float64{+0.02, -0.015, +0.01, -0.02, +0.005}

func synthetic(ns []int, f func(n float64) float64, wobble bool) []float64 {
	ys := make([]float64, len(ns))
	for i, n := range ns {
		ys[i] = f(float64(n))
		if wobble {
			ys[i] *= 1 + noise[i%len(noise)]
		}
	}
	return ys
}

func fitOf(fits []result.ModelFit, m result.GrowthModel) result.ModelFit {
	for _, f := range fits {
		if f.Model == m {
			return f
		}
	}
	return result.ModelFit{}
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// Exact lines give back their coefficients and R² 1; the rule names the model they were drawn
// from.
func TestFitRecoversKnownCoefficients(t *testing.T) {
	ns := []int{10, 100, 1000, 10000}
	tests := []struct {
		name             string
		f                func(float64) float64
		model            result.GrowthModel
		slope, intercept float64
	}{
		{"linear", func(n float64) float64 { return 5 + 0.41*n }, result.Linear, 0.41, 5},
		{"logarithmic", func(n float64) float64 { return 3 + 2*math.Log(n) }, result.Logarithmic, 2, 3},
		{"constant", func(float64) float64 { return 12.5 }, result.Constant, 0, 12.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ys := synthetic(ns, tc.f, false)
			fits := Fit(ns, ys)
			if len(fits) != 3 {
				t.Fatalf("%d fits; want constant, logarithmic and linear", len(fits))
			}
			got, why := Choose(ns, fits, 0)
			if got.Model != tc.model {
				t.Fatalf("chose %s (%s); want %s; fits %+v", got.Model, why, tc.model, fits)
			}
			if !near(got.Slope, tc.slope, 1e-9) || !near(got.Intercept, tc.intercept, 1e-9) {
				t.Errorf("%s: slope %g, intercept %g; want %g, %g", got.Model, got.Slope, got.Intercept, tc.slope, tc.intercept)
			}
			if tc.model != result.Constant && math.Abs(got.R2-1) > 1e-9 {
				t.Errorf("R² %g of an exact line; want 1", got.R2)
			}
		})
	}
}

// With ±2 % noise on five sizes, the rule still names the right model and the coefficients
// land within 5 %; the wrong growing model fits visibly worse.
func TestFitWithNoise(t *testing.T) {
	ns := []int{10, 100, 1000, 3000, 10000}
	lin := synthetic(ns, func(n float64) float64 { return 20 + 0.05*n }, true)
	fits := Fit(ns, lin)
	got, _ := Choose(ns, fits, 0)
	if got.Model != result.Linear || !near(got.Slope, 0.05, 0.05) || !near(got.Intercept, 20, 0.05) || got.R2 < 0.99 {
		t.Errorf("noisy linear: %+v", got)
	}
	if l := fitOf(fits, result.Logarithmic); l.R2 > 0.9 {
		t.Errorf("a logarithm fits a line through 10..10000 with R² %.2f; the two models would not be told apart", l.R2)
	}

	logs := synthetic(ns, func(n float64) float64 { return 4 + 1.5*math.Log(n) }, true)
	fits = Fit(ns, logs)
	got, _ = Choose(ns, fits, 0)
	if got.Model != result.Logarithmic || !near(got.Slope, 1.5, 0.05) || got.R2 < 0.95 {
		t.Errorf("noisy logarithm: %+v", got)
	}

	// 2 % of wobble, and a slope that adds 5 % across the range: flat, by the rule.
	flat := synthetic(ns, func(n float64) float64 { return 100 + 0.0005*n }, true)
	got, why := Choose(ns, Fit(ns, flat), 0)
	if got.Model != result.Constant || !near(got.Intercept, 102.5, 0.02) || !strings.Contains(why, "under 10 %") {
		t.Errorf("nearly flat: %+v (%s)", got, why)
	}
}

// A rise within the repetitions' spread is not growth, nor are points no model follows.
func TestFitNoise(t *testing.T) {
	ns := []int{10, 100, 1000, 10000}
	ys := synthetic(ns, func(n float64) float64 { return 10 + 0.0005*n }, false) // rises 5 µs, 33 %
	if got, _ := Choose(ns, Fit(ns, ys), 0.5); got.Model != result.Linear {
		t.Errorf("a rise of 5 µs over a spread of 0.5 µs: %s; want linear", got.Model)
	}
	got, why := Choose(ns, Fit(ns, ys), 3)
	if got.Model != result.Constant || !strings.Contains(why, "within twice the repetitions' spread") {
		t.Errorf("a rise of 5 µs over a spread of 3 µs: %s (%s); want constant", got.Model, why)
	}
	zigzag := []float64{10, 20, 9, 21}
	got, why = Choose(ns, Fit(ns, zigzag), 0)
	if got.Model != result.Constant || !strings.Contains(why, "no growing model follows the points") {
		t.Errorf("zigzag: %s (%s); want constant", got.Model, why)
	}
}

// Falling latency is growth with a negative slope, not flat, when it falls by more than the
// threshold.
func TestFitFalling(t *testing.T) {
	ns := []int{10, 100, 1000}
	got, _ := Choose(ns, Fit(ns, []float64{30, 20, 10}), 0)
	if got.Model != result.Logarithmic || got.Slope >= 0 {
		t.Errorf("falling by ln N: %+v", got)
	}
}

// Growth groups runs into series by scale, target and load, fits p50 and p99, and leaves out
// failed runs and series with too few sizes.
func TestGrowthFromDocument(t *testing.T) {
	run := func(target, series string, n int, p50, p99 float64) result.Run {
		return result.Run{Target: target, Workload: "w", Load: result.Load{Model: result.ClosedLoop, Workers: 1},
			Scale:   &result.Scale{Series: series, Param: "rules", N: n},
			Summary: result.Summary{OK: 100, LatencyUS: result.Percentiles{P50: p50, P99: p99}}}
	}
	doc := &result.Document{Runs: []result.Run{
		{Target: "opa/inproc", Workload: "nop", Summary: result.Summary{OK: 100}},
		run("opa/inproc", "rules-ip/rego-rules", 10, 5+0.3*10, 10+0.6*10),
		run("opa/inproc", "rules-ip/rego-rules", 100, 5+0.3*100, 10+0.6*100),
		run("opa/inproc", "rules-ip/rego-rules", 1000, 5+0.3*1000, 10+0.6*1000),
		run("opa/inproc", "rules-ip/rego-indexed", 10, 8, 20),
		run("opa/inproc", "rules-ip/rego-indexed", 100, 8, 20),
		run("opa/inproc", "rules-ip/rego-indexed", 1000, 8, 20),
		// two sizes only: no fit
		run("cedar/inproc", "rules-ip/cedar-policies", 10, 1, 2),
		run("cedar/inproc", "rules-ip/cedar-policies", 100, 10, 20),
	}}
	failed := run("cedar/inproc", "rules-ip/cedar-policies", 1000, 0, 0)
	failed.Error, failed.Summary.OK = "start: boom", 0
	doc.Runs = append(doc.Runs, failed)

	gs := Growth(doc)
	if len(gs) != 4 {
		t.Fatalf("%d fits; want p50 and p99 of two series: %+v", len(gs), gs)
	}
	want := []struct {
		series, pct string
		model       result.GrowthModel
		slope       float64
	}{
		{"rules-ip/rego-rules", "p50", result.Linear, 0.3},
		{"rules-ip/rego-rules", "p99", result.Linear, 0.6},
		{"rules-ip/rego-indexed", "p50", result.Constant, 0},
		{"rules-ip/rego-indexed", "p99", result.Constant, 0},
	}
	for i, w := range want {
		g := gs[i]
		if g.Series != w.series || g.Percentile != w.pct || g.Model != w.model || math.Abs(g.Slope-w.slope) > 1e-9 ||
			g.Target != "opa/inproc" || g.Param != "rules" || len(g.Points) != 3 || len(g.Fits) != 3 || g.Why == "" {
			t.Errorf("fit %d: %+v; want %s %s %s slope %g", i, g, w.series, w.pct, w.model, w.slope)
		}
	}
}
