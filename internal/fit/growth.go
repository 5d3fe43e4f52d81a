// Package fit fits models to what a result measured: how latency grows with a workload's size
// (growth.go), how throughput scales with replicas (usl.go). It reads result documents and
// returns the fits; it measures nothing and renders nothing.
package fit

import (
	"fmt"
	"math"
	"sort"

	"github.com/authzbench/authzbench/internal/result"
)

// FlatShare is the rule's threshold for calling a series flat: a growing model whose rise
// across the measured range of N is below this share of the mean latency is not called growth.
// On a shared 2-core machine, run-to-run noise of a median is a few per cent; 10 % is clear of it.
const FlatShare = 0.10

// MinR2 is the least share of the variance a growing model must explain to be called: below
// it the points do not follow the model, whatever its slope.
const MinR2 = 0.8

// MinPoints is the fewest distinct sizes a fit needs: through two points both growing models
// pass exactly, and nothing tells them apart.
const MinPoints = 3

// Fit fits the three models to latencies ys (µs) at sizes ns by least squares: constant (the
// mean), logarithmic (against ln N) and linear (against N).
func Fit(ns []int, ys []float64) []result.ModelFit {
	lnN := make([]float64, len(ns))
	n := make([]float64, len(ns))
	for i, v := range ns {
		n[i], lnN[i] = float64(v), math.Log(float64(v))
	}
	mean := 0.0
	for _, y := range ys {
		mean += y
	}
	mean /= float64(len(ys))
	return []result.ModelFit{
		{Model: result.Constant, Intercept: mean},
		line(result.Logarithmic, lnN, ys),
		line(result.Linear, n, ys),
	}
}

// line fits y = a + b·x by least squares, with its coefficient of determination.
func line(m result.GrowthModel, xs, ys []float64) result.ModelFit {
	k := float64(len(xs))
	var sx, sy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
	}
	mx, my := sx/k, sy/k
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	f := result.ModelFit{Model: m, Intercept: my}
	if sxx == 0 {
		return f
	}
	f.Slope = sxy / sxx
	f.Intercept = my - f.Slope*mx
	if syy > 0 {
		var sse float64
		for i := range xs {
			r := ys[i] - (f.Intercept + f.Slope*xs[i])
			sse += r * r
		}
		f.R2 = 1 - sse/syy
	} else {
		f.R2 = 1 // every point equal: the line through them is exact
	}
	return f
}

// Choose picks the model by the stated rule:
//
//  1. Of the logarithmic and linear fits, the one with the higher R² is the candidate.
//  2. If the candidate's rise across the measured range of N (its slope times the range of ln N
//     or N) is smaller than FlatShare of the mean latency, or than twice noise (Growth passes
//     the median over the points of the standard deviation of each point's repetitions: one
//     disturbed point does not silence a series), the series is constant: whatever shape the
//     points have, they do not move more than the measurement does.
//  3. If the candidate explains less than MinR2 of the variance, the series is constant too:
//     the points follow no growing model.
//  4. Otherwise the candidate is chosen.
//
// why says which step decided.
func Choose(ns []int, fits []result.ModelFit, noise float64) (chosen result.ModelFit, why string) {
	var constant, log, lin result.ModelFit
	for _, f := range fits {
		switch f.Model {
		case result.Constant:
			constant = f
		case result.Logarithmic:
			log = f
		case result.Linear:
			lin = f
		}
	}
	lo, hi := ns[0], ns[0]
	for _, n := range ns {
		lo, hi = min(lo, n), max(hi, n)
	}
	cand, rng := lin, float64(hi-lo)
	if log.R2 > lin.R2 {
		cand, rng = log, math.Log(float64(hi))-math.Log(float64(lo))
	}
	rise := cand.Slope * rng
	mean := constant.Intercept
	if math.Abs(rise) < FlatShare*math.Abs(mean) {
		return constant, fmt.Sprintf("the best growing model (%s, R² %.2f) changes it by %.0f %% of its mean from N=%d to %d, under %.0f %%",
			cand.Model, cand.R2, 100*math.Abs(rise)/math.Abs(mean), lo, hi, 100*FlatShare)
	}
	if math.Abs(rise) < 2*noise {
		return constant, fmt.Sprintf("the best growing model (%s, R² %.2f) changes it by %.3g µs from N=%d to %d, within twice the repetitions' spread (sd %.3g µs)",
			cand.Model, cand.R2, math.Abs(rise), lo, hi, noise)
	}
	if cand.R2 < MinR2 {
		return constant, fmt.Sprintf("no growing model follows the points (best: %s, R² %.2f, under %.2f)", cand.Model, cand.R2, MinR2)
	}
	other := log
	if cand.Model == result.Logarithmic {
		other = lin
	}
	return cand, fmt.Sprintf("%s fits better than %s (R² %.2f against %.2f) and changes it by %.0f %% of its mean from N=%d to %d",
		cand.Model, other.Model, cand.R2, other.R2, 100*math.Abs(rise)/math.Abs(mean), lo, hi)
}

// Growth fits every scaling series of the document's runs: per series, target (as the table
// labels it) and load, the p50 and p99 latency against N. Runs that served nothing or failed
// are left out; a series with fewer than MinPoints distinct sizes gets no fit.
func Growth(doc *result.Document) []result.GrowthFit {
	type key struct {
		series, target, param string
		load                  result.Load
	}
	type point struct {
		n          int
		p50, p99   float64
		sd50, sd99 float64 // of the repetitions' percentiles
	}
	var order []key
	points := map[key][]point{}
	for _, r := range doc.Runs {
		if r.Scale == nil || r.Error != "" || r.Summary.OK == 0 {
			continue
		}
		l := r.Load
		l.GeneratorProcs = 0 // the same load asked, whatever the generator got
		k := key{r.Scale.Series, r.Label(), r.Scale.Param, l}
		if _, seen := points[k]; !seen {
			order = append(order, k)
		}
		var r50, r99 []float64
		for _, rep := range r.Repetitions {
			if rep.OK > 0 {
				r50, r99 = append(r50, rep.LatencyUS.P50), append(r99, rep.LatencyUS.P99)
			}
		}
		points[k] = append(points[k], point{r.Scale.N, r.Summary.LatencyUS.P50, r.Summary.LatencyUS.P99, result.SpreadOf(r50).SD, result.SpreadOf(r99).SD})
	}
	var out []result.GrowthFit
	for _, k := range order {
		ps := points[k]
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].n < ps[j].n })
		distinct := map[int]bool{}
		for _, p := range ps {
			distinct[p.n] = true
		}
		if len(distinct) < MinPoints {
			continue
		}
		for _, pc := range []struct {
			name  string
			of    func(point) float64
			noise func(point) float64
		}{
			{"p50", func(p point) float64 { return p.p50 }, func(p point) float64 { return p.sd50 }},
			{"p99", func(p point) float64 { return p.p99 }, func(p point) float64 { return p.sd99 }},
		} {
			ns := make([]int, len(ps))
			ys := make([]float64, len(ps))
			g := result.GrowthFit{Series: k.series, Target: k.target, Param: k.param, Percentile: pc.name}
			sds := make([]float64, len(ps))
			for i, p := range ps {
				ns[i], ys[i] = p.n, pc.of(p)
				sds[i] = pc.noise(p)
				g.Points = append(g.Points, result.GrowthPoint{N: p.n, LatencyUS: ys[i]})
			}
			g.Fits = Fit(ns, ys)
			var best result.ModelFit
			best, g.Why = Choose(ns, g.Fits, median(sds))
			g.Model, g.Slope, g.Intercept, g.R2 = best.Model, best.Slope, best.Intercept, best.R2
			out = append(out, g)
		}
	}
	return out
}

// median of xs, which it sorts.
func median(xs []float64) float64 {
	sort.Float64s(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}
