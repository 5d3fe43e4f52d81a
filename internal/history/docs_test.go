package history

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/result"
)

// docOf makes a result document of one run (rbac on opa/server, 4 workers) measured at commit
// with the given per-repetition service times, in microseconds: throughput is 4 workers over
// the service time, p50 the service time, p99 1.5 times it. The documents of the change tests
// are made this way, with known distributions, rather than measured: on a shared 2-core machine
// real runs would be too slow and too noisy for 40 commits.
func docOf(commit string, created time.Time, serviceUS ...float64) *result.Document {
	run := result.Run{Target: "opa/server", Workload: "rbac", Load: result.Load{Model: result.ClosedLoop, Workers: 4, DurationS: 1}}
	for i, s := range serviceUS {
		run.Repetitions = append(run.Repetitions, result.Repetition{
			ID: result.NewRepetitionID(), Requests: 1000, OK: 1000, ElapsedS: 1,
			ThroughputRPS: 4e6 / s, LatencyUS: result.Percentiles{P50: s, P90: 1.2 * s, P99: 1.5 * s, P999: 2 * s},
			HDR: hdrOf(s), Started: created.Add(time.Duration(i) * time.Second),
		})
	}
	// The summary as bench writes it: counts added, throughput's spread, percentiles of the
	// merged histograms.
	merged := hdrhistogram.New(1, 60e9, 3)
	var rps []float64
	for _, r := range run.Repetitions {
		h, _ := result.DecodeHistogram(r.HDR)
		merged.Merge(h)
		run.Summary.Requests += r.Requests
		run.Summary.OK += r.OK
		rps = append(rps, r.ThroughputRPS)
	}
	run.Summary.ThroughputRPS = result.SpreadOf(rps)
	run.Summary.LatencyUS = result.PercentilesOf(merged, 0)
	return &result.Document{Schema: result.Schema, Created: created,
		Env:  result.Env{CPUModel: "Test CPU", Cores: 2, Kernel: "6.1", Pinning: "none", Commit: commit},
		Runs: []result.Run{run}}
}

// hdrOf is a latency histogram (ns) of 100 responses: 98 at the service time, 2 at 1.5 times it.
func hdrOf(serviceUS float64) string {
	h := hdrhistogram.New(1, 60e9, 3)
	h.RecordValues(int64(serviceUS*1e3), 98)
	h.RecordValues(int64(1.5*serviceUS*1e3), 2)
	s, err := result.EncodeHistogram(h)
	if err != nil {
		panic(err)
	}
	return s
}

func inputOf(t testing.TB, name, branch string, doc *result.Document) *Input {
	t.Helper()
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	in, err := ParseInput(name, b, branch)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// stepSeries is 40 commits, 3 repetitions each, service times around base µs (sd 2 %), the
// last 20 times slower.
func stepSeries(t testing.TB, base, slower float64, seed uint64) []*Input {
	rng := rand.New(rand.NewPCG(seed, 2))
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var out []*Input
	for i := range 40 {
		level := base
		if i >= 20 {
			level *= slower
		}
		var reps []float64
		for range 3 {
			reps = append(reps, level*(1+0.02*rng.NormFloat64()))
		}
		commit := fmt.Sprintf("c%039d", i)
		out = append(out, inputOf(t, fmt.Sprintf("commit-%d.json", i), "main", docOf(commit, start.Add(time.Duration(i)*time.Hour), reps...)))
	}
	return out
}
