package report

import (
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// A replicated run's note gives each replica's share, and calls an imbalance beyond 10 points.
func TestReplicaNotes(t *testing.T) {
	run := func(requests ...int64) *result.Run {
		r := &result.Run{}
		for i, n := range requests {
			r.SUT.Replicas = append(r.SUT.Replicas, result.Replica{Index: i + 1, Connections: 2, Requests: n, CPUs: "1"})
		}
		return r
	}
	even := replicaNotes(run(500, 480))
	if len(even) != 1 || !strings.Contains(even[0], "#1 2 conns, 51% of requests") || strings.Contains(even[0], "IMBALANCED") ||
		!strings.Contains(even[0], "shared their CPUs") {
		t.Errorf("even: %q", even)
	}
	if uneven := replicaNotes(run(700, 300)); len(uneven) != 1 || !strings.Contains(uneven[0], "IMBALANCED: the busiest took 70%, an even share is 50%") {
		t.Errorf("uneven: %q", uneven)
	}
	if none := replicaNotes(run(100)); none != nil {
		t.Errorf("one server: %q", none)
	}
}

// A fitted sweep's note says its coefficients, its share of ideal and its peak; a sweep not
// fitted says why; shards say what they are.
func TestScaleOutNotes(t *testing.T) {
	doc := &result.Document{Shard: &result.Shard{Index: 2, Count: 3}, Scalability: []result.USLFit{
		{Workload: "risk", Target: "opa/server", Param: "replicas", Fitted: true, Lambda: 600, Sigma: 0.05, Kappa: 0.02, R2: 0.98, PeakN: 6.9, PeakRPS: 2100,
			Points: []result.USLPoint{{N: 1, RPS: 600}, {N: 2, RPS: 1100}, {N: 3, RPS: 1500}, {N: 4, RPS: 1750}}},
		{Workload: "rbac", Target: "opa/server", Param: "workers", Reason: "2 distinct sizes; the model's three coefficients need at least 3",
			Points: []result.USLPoint{{N: 1, RPS: 900}, {N: 2, RPS: 1700}}},
	}}
	notes := strings.Join(uslNotesOf(doc), "\n")
	for _, want := range []string{
		"SHARD 2/3 of the scenario",
		"USL over replicas, risk on opa/server (1: 600, 2: 1,100 = 92% of ideal, 3: 1,500 = 83% of ideal, 4: 1,750 = 73% of ideal req/s): λ 600 req/s, σ 0.05, κ 0.02, R² 0.980; peaks at N≈6.9 with 2,100 req/s",
		"USL over workers, rbac on opa/server (1: 900, 2: 1,700 = 94% of ideal req/s): not fitted, 2 distinct sizes",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "POOR FIT") || strings.Contains(notes, "R² says nothing") {
		t.Errorf("R² 0.98 over 4 sizes called a poor or an exact fit:\n%s", notes)
	}
	doc.Scalability[0].Points, doc.Scalability[0].R2 = doc.Scalability[0].Points[:3], 1
	if notes := strings.Join(uslNotesOf(doc), "\n"); !strings.Contains(notes, "passes through every point and R² says nothing") {
		t.Errorf("three sizes not called an exact fit:\n%s", notes)
	}
}

// uslNotesOf are the notes scaleOutNotes writes, the shard's then the USL fits'.
func uslNotesOf(doc *result.Document) []string {
	shards, usl := scaleOutNotes(doc)
	return append(shards, usl...)
}
