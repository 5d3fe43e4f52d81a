package bench

import (
	"fmt"
	"math"
	"strings"

	"github.com/authzbench/authzbench/internal/fit"
	"github.com/authzbench/authzbench/internal/result"
)

// ReplicaModel is a USL fitted to a replica sweep, taken from a result file to plan replicas
// with (capacity --usl-from).
type ReplicaModel struct {
	Model fit.USL
	Fit   result.USLFit
	File  string
}

// ReplicaModelFrom picks from doc the fitted replica sweep of workload on target; the error
// says what the file holds instead.
func ReplicaModelFrom(doc *result.Document, file, workload, target string) (ReplicaModel, error) {
	var seen []string
	for _, f := range doc.Scalability {
		if f.Param != fit.ByReplicas {
			continue
		}
		if f.Workload != workload || f.Target != target {
			seen = append(seen, fmt.Sprintf("%s on %s", f.Workload, f.Target))
			continue
		}
		m, ok := fit.Model(f)
		if !ok {
			return ReplicaModel{}, fmt.Errorf("%s: the replica sweep of %s on %s was not fitted: %s", file, workload, target, f.Reason)
		}
		return ReplicaModel{Model: m, Fit: f, File: file}, nil
	}
	if len(seen) == 0 {
		return ReplicaModel{}, fmt.Errorf("%s holds no replica sweep (runs at --replicas 1, 2, 3 … of one workload and target, closed loop)", file)
	}
	return ReplicaModel{}, fmt.Errorf("%s has no replica sweep of %s on %s; it has %s", file, workload, target, strings.Join(seen, ", "))
}

// ReplicaPlan is what the model predicts for K replicas: the rate the SLO would hold at,
// scaled from the one replica measured by the model's throughput ratio X(K)/X(1).
type ReplicaPlan struct {
	Replicas int
	RPS      float64
}

// PlanReplicas scales the rate one replica met the SLO at (oneReplica) by the model, for 1 to
// maxReplicas replicas, and says how many reach need: the fewest that do, or 0 with the reason
// when none does (the model peaks, or levels off, below it). The assumption, said in the
// output: the rate a replica set holds an SLO at scales as its throughput does.
func PlanReplicas(oneReplica float64, m fit.USL, need float64, maxReplicas int) (plans []ReplicaPlan, enough int, why string) {
	x1 := m.X(1)
	for k := 1; k <= maxReplicas; k++ {
		p := ReplicaPlan{Replicas: k, RPS: oneReplica * m.X(float64(k)) / x1}
		plans = append(plans, p)
		if enough == 0 && need > 0 && p.RPS >= need {
			enough = k
		}
	}
	if enough > 0 || need <= 0 {
		return plans, enough, ""
	}
	best := plans[0]
	for _, p := range plans {
		if p.RPS > best.RPS {
			best = p
		}
	}
	if n, x, ok := m.Peak(); ok {
		peak := oneReplica * x / x1
		if peak < need {
			return plans, 0, fmt.Sprintf("no replica count reaches %.0f req/s: the model peaks at %.1f replicas with %.0f req/s, and more replicas lower it", need, n, peak)
		}
	}
	if c := m.Ceiling(); !math.IsInf(c, 1) && oneReplica*c/x1 < need {
		return plans, 0, fmt.Sprintf("no replica count reaches %.0f req/s: the model levels off towards %.0f req/s", need, oneReplica*c/x1)
	}
	return plans, 0, fmt.Sprintf("%d replicas reach only %.0f req/s of the %.0f needed", best.Replicas, best.RPS, need)
}
