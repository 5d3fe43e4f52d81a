package fit

import (
	"math"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

func closedRun(workload, target string, workers, replicas int, rps float64) result.Run {
	r := result.Run{Workload: workload, Target: target, Load: result.Load{Model: result.ClosedLoop, Workers: workers, DurationS: 4}}
	for i := range replicas {
		r.SUT.Replicas = append(r.SUT.Replicas, result.Replica{Index: i + 1})
	}
	r.Summary.ThroughputRPS.Mean = rps
	return r
}

// A document's sweeps are found by what varies: workers at one replica count, replicas at one
// worker count; each gets its fit, and runs of other workloads or targets stay apart.
func TestScalabilityFindsSweeps(t *testing.T) {
	m := USL{Lambda: 500, Sigma: 0.1, Kappa: 0.01}
	doc := &result.Document{}
	for _, w := range []int{1, 2, 4, 8} {
		doc.Runs = append(doc.Runs, closedRun("risk", "opa/server", w, 0, m.X(float64(w))))
	}
	for _, k := range []int{1, 2, 3} {
		doc.Runs = append(doc.Runs, closedRun("rbac", "opa/server", 8, k, 1000*float64(k)/(1+0.2*float64(k-1))))
	}
	doc.Runs = append(doc.Runs, closedRun("rbac", "cedar/server", 8, 0, 4000)) // alone: no sweep
	open := closedRun("rbac", "opa/server", 4, 0, 100)
	open.Load.Model, open.Load.Rate = result.OpenLoop, 100
	doc.Runs = append(doc.Runs, open)

	fits := Scalability(doc)
	if len(fits) != 2 {
		t.Fatalf("%d fits, want the risk worker sweep and the rbac replica sweep: %+v", len(fits), fits)
	}
	w, r := fits[0], fits[1]
	if w.Param != ByWorkers || w.Workload != "risk" || !w.Fitted || len(w.Points) != 4 {
		t.Errorf("worker sweep: %+v", w)
	}
	if math.Abs(w.Lambda-500) > 1e-3 || math.Abs(w.Sigma-0.1) > 1e-6 || math.Abs(w.Kappa-0.01) > 1e-6 {
		t.Errorf("worker sweep λ %g σ %g κ %g, want 500, 0.1, 0.01", w.Lambda, w.Sigma, w.Kappa)
	}
	if want := math.Sqrt(0.9 / 0.01); math.Abs(w.PeakN-want) > 1e-3 {
		t.Errorf("peak at N=%g, want %g", w.PeakN, want)
	}
	if r.Param != ByReplicas || r.Workload != "rbac" || r.Target != "opa/server" || !r.Fitted || r.Points[2].N != 3 {
		t.Errorf("replica sweep: %+v", r)
	}
	if r.PeakN != 0 || math.Abs(r.CeilingRPS-5000) > 1 {
		t.Errorf("replica sweep without crosstalk: peak %g, ceiling %g; want none, λ/σ = 5000", r.PeakN, r.CeilingRPS)
	}
}

// A sweep of two sizes is reported, with why it has no model.
func TestScalabilityTwoPointsNotFitted(t *testing.T) {
	doc := &result.Document{Runs: []result.Run{
		closedRun("risk", "opa/server", 8, 1, 600), closedRun("risk", "opa/server", 8, 2, 1100),
	}}
	fits := Scalability(doc)
	if len(fits) != 1 || fits[0].Fitted || !strings.Contains(fits[0].Reason, "2 distinct sizes") {
		t.Fatalf("fits %+v, want one not fitted for its two sizes", fits)
	}
	if fits[0].Lambda != 0 || fits[0].PeakN != 0 {
		t.Errorf("coefficients on a sweep not fitted: %+v", fits[0])
	}
}
