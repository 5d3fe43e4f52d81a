package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

// replicaNotes say how a replicated server's load was spread: each replica's connections,
// requests and CPU, so that an imbalance shows.
func replicaNotes(r *result.Run) []string {
	reps := r.SUT.Replicas
	if len(reps) < 2 {
		return nil
	}
	var total int64
	for _, x := range reps {
		total += x.Requests
	}
	var parts []string
	lo, hi := math.Inf(1), 0.0
	for _, x := range reps {
		share := 0.0
		if total > 0 {
			share = float64(x.Requests) / float64(total)
		}
		lo, hi = min(lo, share), max(hi, share)
		p := fmt.Sprintf("#%d %d conns, %.0f%% of requests", x.Index, x.Connections, 100*share)
		if x.Resources != nil {
			p += fmt.Sprintf(", %.2f cores", x.Resources.CPUCoresMean)
		}
		if x.CPUs != "" {
			p += " on CPU " + x.CPUs
		}
		parts = append(parts, p)
	}
	note := fmt.Sprintf("%d replicas, connections round robin: %s", len(reps), strings.Join(parts, "; "))
	if even := 1 / float64(len(reps)); total > 0 && (hi-even > 0.1 || even-lo > 0.1) {
		note += fmt.Sprintf(" — IMBALANCED: the busiest took %.0f%%, an even share is %.0f%%", 100*hi, 100*even)
	}
	if pinned := reps[0].CPUs; pinned != "" && reps[1].CPUs == pinned {
		note += "; the replicas shared their CPUs (fewer CPUs than replicas to pin them apart)"
	}
	return []string{note}
}

// scaleOutNotes say what a sharded or merged document is, and what the USL fits of its sweeps
// predict.
func scaleOutNotes(doc *result.Document) (shards, usl []string) {
	var notes []string
	if s := doc.Shard; s != nil {
		at := ""
		if !s.StartAt.IsZero() {
			at = ", load started at " + s.StartAt.Format("2006-01-02T15:04:05Z07:00")
		}
		notes = append(notes, fmt.Sprintf("SHARD %s of the scenario%s: one generator's part, its req/s a share of the whole; authzbench merge adds the %d shards into one result", s, at, s.Count))
	}
	if n := len(doc.Shards); n > 0 {
		var hosts []string
		for _, p := range doc.Shards {
			h := p.Env.Hostname
			if h == "" {
				h = "?"
			}
			hosts = append(hosts, fmt.Sprintf("%s on %s (%s)", p.Shard, h, p.File))
		}
		notes = append(notes, fmt.Sprintf("merged from %d shards, histograms added, req/s over the window their measured phases spanned: %s", n, strings.Join(hosts, ", ")))
	}
	shards, notes = notes, nil
	for _, f := range doc.Scalability {
		var pts []string
		var one float64 // the smallest size's throughput per unit: what ideal scaling multiplies
		for _, p := range f.Points {
			if one == 0 && p.N > 0 {
				one = p.RPS / float64(p.N)
			}
			pt := fmt.Sprintf("%d: %s", p.N, Thousands(p.RPS))
			if one > 0 && p.N > f.Points[0].N {
				pt += fmt.Sprintf(" = %.0f%% of ideal", 100*p.RPS/(one*float64(p.N)))
			}
			pts = append(pts, pt)
		}
		head := fmt.Sprintf("USL over %s, %s on %s (%s req/s)", f.Param, f.Workload, f.Target, strings.Join(pts, ", "))
		if !f.Fitted {
			notes = append(notes, head+": not fitted, "+f.Reason)
			continue
		}
		m := fmt.Sprintf("%s: λ %s req/s, σ %.3g, κ %.3g, R² %.3f", head, Thousands(f.Lambda), f.Sigma, f.Kappa, f.R2)
		switch {
		case f.PeakN > 0:
			m += fmt.Sprintf("; peaks at N≈%.1f with %s req/s, and adding more lowers throughput", f.PeakN, Thousands(f.PeakRPS))
		case f.CeilingRPS > 0:
			m += fmt.Sprintf("; no peak: levels off towards λ/σ = %s req/s", Thousands(f.CeilingRPS))
		default:
			m += "; scales linearly over the sizes measured"
		}
		if sizes := distinctSizes(f.Points); sizes == 3 && f.R2 >= 0.999 {
			m += " — three sizes determine the three coefficients exactly, so the model passes through every point and R² says nothing of the fit; a fourth size tests it"
		} else if sizes == 3 && f.R2 >= 0.9 {
			m += fmt.Sprintf(" — three sizes for three coefficients, and still R² %.2f: no curve of the law's shape passes through these points", f.R2)
		} else if f.R2 < 0.9 {
			m += fmt.Sprintf(" — POOR FIT (R² %.2f): the points do not follow the model (noise, or a machine that changed between runs); read none of it as a prediction", f.R2)
		}
		if last := f.Points[len(f.Points)-1]; f.PeakN > 0 && f.PeakN > 2*float64(last.N) || len(f.Points) < 4 {
			m += fmt.Sprintf(" (an extrapolation from %d points up to N=%d: measure before relying on it)", len(f.Points), last.N)
		}
		notes = append(notes, m)
	}
	return shards, notes
}

func distinctSizes(points []result.USLPoint) int {
	seen := map[int]bool{}
	for _, p := range points {
		seen[p.N] = true
	}
	return len(seen)
}
