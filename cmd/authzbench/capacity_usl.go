package main

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/result"
)

// replicaPlanFlags are capacity's flags for planning replicas from a fitted replica sweep.
type replicaPlanFlags struct {
	from        string
	need        float64
	maxReplicas int
}

func addReplicaPlanFlags(fl *pflag.FlagSet, f *replicaPlanFlags) {
	fl.StringVar(&f.from, "usl-from", "", "a result holding a replica sweep of the same workload and target (run --replicas 1, 2, 3 …): after the search, predict from its USL fit the rate K replicas hold the SLO at")
	fl.Float64Var(&f.need, "need", 0, "with --usl-from: the rate you need, req/s; say how many replicas the model says reach it, or why none does")
	fl.IntVar(&f.maxReplicas, "max-replicas", 16, "with --usl-from: the most replicas to predict for")
}

// load reads the replica model --usl-from names; nil without the flag.
func (f replicaPlanFlags) load(workload, target string) (*bench.ReplicaModel, error) {
	if f.from == "" {
		if f.need != 0 {
			return nil, errors.New("--need plans replicas from a fitted sweep; give --usl-from RESULT.json too")
		}
		return nil, nil
	}
	if f.need < 0 || math.IsNaN(f.need) || math.IsInf(f.need, 0) {
		return nil, fmt.Errorf("--need %g: want a rate in req/s", f.need)
	}
	if f.maxReplicas < 1 {
		return nil, fmt.Errorf("--max-replicas %d: want 1 or more", f.maxReplicas)
	}
	doc, err := result.Read(f.from)
	if err != nil {
		return nil, fmt.Errorf("--usl-from: %w", err)
	}
	m, err := bench.ReplicaModelFrom(doc, f.from, workload, target)
	if err != nil {
		return nil, fmt.Errorf("--usl-from %w", err)
	}
	return &m, nil
}

// printReplicaPlan says what the model predicts from the rate one replica held the SLO at.
func printReplicaPlan(w io.Writer, k bench.Knee, m bench.ReplicaModel, f replicaPlanFlags) {
	need := f.need
	if k.Pass == nil {
		fmt.Fprintf(w, "\nreplicas: no rate met the SLO on one replica, so there is nothing to scale from\n")
		return
	}
	fitted := m.Fit
	measured := fitted.Points[len(fitted.Points)-1].N
	fmt.Fprintf(w, "\nreplicas, from the USL fitted to %s (%s on %s: λ %.0f req/s, σ %.3g, κ %.3g, R² %.3f, measured up to %d replicas):\n",
		m.File, fitted.Workload, fitted.Target, fitted.Lambda, fitted.Sigma, fitted.Kappa, fitted.R2, measured)
	plans, enough, why := bench.PlanReplicas(k.Pass.Rate, m.Model, need, f.maxReplicas)
	for _, p := range plans {
		mark := ""
		if p.Replicas > measured {
			mark = "  (extrapolated)"
		}
		fmt.Fprintf(w, "  %2d replica(s): about %.0f req/s%s\n", p.Replicas, p.RPS, mark)
	}
	fmt.Fprintln(w, "  (one replica's SLO-meeting rate scaled by the model's throughput ratio X(K)/X(1): latency is assumed to scale as throughput does; measure the count you pick)")
	switch {
	case need <= 0:
	case enough == 1:
		fmt.Fprintf(w, "one replica already meets %.0f req/s\n", need)
	case enough > 0:
		fmt.Fprintf(w, "one replica cannot meet %.0f req/s; the model says %d replicas can\n", need, enough)
	default:
		fmt.Fprintln(w, why)
	}
}
