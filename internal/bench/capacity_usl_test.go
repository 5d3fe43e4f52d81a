package bench

import (
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/fit"
	"github.com/authzbench/authzbench/internal/result"
)

// One replica holds the SLO at 600 req/s; the model says how many reach what is needed, or
// why none does.
func TestPlanReplicas(t *testing.T) {
	linearish := fit.USL{Lambda: 1000, Sigma: 0.05, Kappa: 0}
	plans, enough, why := PlanReplicas(600, linearish, 1700, 8)
	// X(3)/X(1) = 3/1.1 = 2.727…: 1636 req/s; X(4)/X(1) = 4/1.15: 2087 req/s.
	if enough != 4 || why != "" || len(plans) != 8 || plans[0].RPS != 600 {
		t.Errorf("enough %d (%q), plans %+v; want 4 replicas", enough, why, plans)
	}
	peaked := fit.USL{Lambda: 1000, Sigma: 0.1, Kappa: 0.05}
	if _, enough, why := PlanReplicas(600, peaked, 5000, 16); enough != 0 || !strings.Contains(why, "peaks at") {
		t.Errorf("past the peak: enough %d, %q; want none, the peak named", enough, why)
	}
	flat := fit.USL{Lambda: 1000, Sigma: 0.5}
	if _, enough, why := PlanReplicas(600, flat, 1300, 64); enough != 0 || !strings.Contains(why, "levels off towards 1200") {
		t.Errorf("above the ceiling: enough %d, %q; want none, levelling off at 1200", enough, why)
	}
}

func TestReplicaModelFrom(t *testing.T) {
	doc := &result.Document{Scalability: []result.USLFit{
		{Workload: "risk", Target: "opa/server", Param: fit.ByWorkers, Fitted: true, Lambda: 1},
		{Workload: "rbac", Target: "opa/server", Param: fit.ByReplicas, Reason: "2 distinct sizes; the model's three coefficients need at least 3"},
		{Workload: "risk", Target: "opa/server", Param: fit.ByReplicas, Fitted: true, Lambda: 500, Sigma: 0.1},
	}}
	if m, err := ReplicaModelFrom(doc, "r.json", "risk", "opa/server"); err != nil || m.Model.Lambda != 500 {
		t.Errorf("risk: %+v, %v; want the fitted replica sweep", m, err)
	}
	if _, err := ReplicaModelFrom(doc, "r.json", "rbac", "opa/server"); err == nil || !strings.Contains(err.Error(), "was not fitted: 2 distinct sizes") {
		t.Errorf("rbac: %v", err)
	}
	if _, err := ReplicaModelFrom(doc, "r.json", "api", "cedar/server"); err == nil || !strings.Contains(err.Error(), "no replica sweep of api on cedar/server; it has rbac on opa/server, risk on opa/server") {
		t.Errorf("api: %v", err)
	}
}
