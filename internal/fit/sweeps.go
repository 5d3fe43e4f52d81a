package fit

import (
	"fmt"
	"math"
	"sort"

	"github.com/authzbench/authzbench/internal/result"
)

// The sizes a sweep can vary, as result.USLFit.Param names them.
const (
	ByWorkers  = "workers"
	ByReplicas = "replicas"
)

// Scalability fits the USL to every sweep in doc: the closed-loop runs of one workload and
// target that differ only in their workers, or only in their replicas. (A shard sweep spans
// several merged files, which no document holds together.) A sweep of one size is no sweep and is
// left out; one that cannot be fitted (two sizes, a flat throughput, a run with no ok
// responses) comes back with its reason. Open-loop runs are left out: their throughput is the
// rate asked for, not what the size can serve.
func Scalability(doc *result.Document) []result.USLFit {
	var out []result.USLFit
	for _, param := range []string{ByWorkers, ByReplicas} {
		groups := map[string][]int{}
		var order []string
		for i := range doc.Runs {
			r := &doc.Runs[i]
			if r.Load.Model != result.ClosedLoop || r.Error != "" && len(r.Repetitions) == 0 {
				continue
			}
			k := sweepKey(r, param)
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], i)
		}
		for _, k := range order {
			runs := groups[k]
			sizes := map[int]bool{}
			for _, i := range runs {
				sizes[sizeOf(&doc.Runs[i], param)] = true
			}
			if len(sizes) < 2 {
				continue
			}
			out = append(out, fitSweep(doc, runs, param))
		}
	}
	return out
}

// sizeOf is a run's size in the sweep's terms.
func sizeOf(r *result.Run, param string) int {
	if param == ByWorkers {
		return r.Load.Workers
	}
	return max(1, len(r.SUT.Replicas))
}

// sweepKey is what the runs of one sweep share: everything that shapes their throughput but
// the size swept. The target is its label (TLS, HTTP/2 and its connections, replicas) less the
// replicas when they are what is swept.
func sweepKey(r *result.Run, param string) string {
	workers := r.Load.Workers
	if param == ByWorkers {
		workers = 0
	}
	return fmt.Sprintf("%s|%s|%v|w%d|%g|%g|%d|%d|%s", r.Workload, sweptLabel(r, param), r.SUT.External, workers,
		r.Load.DurationS, r.Load.WarmupS, r.Load.Requests, r.Load.GeneratorProcs, r.Pinning)
}

// sweptLabel is the run's label as the sweep names its target: without the replicas in a
// replica sweep.
func sweptLabel(r *result.Run, param string) string {
	if param != ByReplicas {
		return r.Label()
	}
	c := *r
	c.SUT.Replicas = nil
	return c.Label()
}

func fitSweep(doc *result.Document, runs []int, param string) result.USLFit {
	first := &doc.Runs[runs[0]]
	f := result.USLFit{Workload: first.Workload, Target: sweptLabel(first, param), Param: param}
	var points []Point
	for _, i := range runs {
		r := &doc.Runs[i]
		n := sizeOf(r, param)
		x := r.Summary.ThroughputRPS.Mean
		f.Points = append(f.Points, result.USLPoint{N: n, RPS: x, Run: i})
		points = append(points, Point{N: float64(n), X: x})
	}
	sort.SliceStable(f.Points, func(a, b int) bool { return f.Points[a].N < f.Points[b].N })
	m, err := FitUSL(points)
	if err != nil {
		f.Reason = err.Error()
		if reason, ok := IsNotFitted(err); ok {
			f.Reason = reason
		}
		return f
	}
	f.Fitted = true
	f.Lambda, f.Sigma, f.Kappa, f.R2 = m.Lambda, m.Sigma, m.Kappa, m.R2
	if n, x, ok := m.Peak(); ok {
		f.PeakN, f.PeakRPS = n, x
	} else if c := m.Ceiling(); !math.IsInf(c, 1) {
		f.CeilingRPS = c
	}
	return f
}

// Model is the fitted model of f; ok is false when f was not fitted.
func Model(f result.USLFit) (USL, bool) {
	if !f.Fitted {
		return USL{}, false
	}
	return USL{Lambda: f.Lambda, Sigma: f.Sigma, Kappa: f.Kappa, R2: f.R2}, true
}

// Refit fills a document's fits from its runs: the scalability of every sweep and the growth of
// every scaling series. A run calls it when it ends, and a merge over the merged runs.
func Refit(doc *result.Document) {
	doc.Scalability = Scalability(doc)
	doc.Growth = Growth(doc)
}
