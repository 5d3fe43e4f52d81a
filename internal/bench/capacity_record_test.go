package bench

import (
	"errors"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// A search is kept in the result as its probes by their runs, with the rates met and missed
// and the target as its runs label it; a stop is an interruption, any other failure an error.
func TestSearchRecordNamesItsRuns(t *testing.T) {
	c := CapacitySearch{Target: "opa/server", Workload: "authz", Start: 100, Max: 10000, MaxSteps: 8, Resolution: 0.1,
		SLO: SLO{Percentile: 99, Latency: 5 * time.Millisecond, ErrorRatio: 0.001}}
	doc := &result.Document{}
	measure, _ := modelProbe(500, 1e9)
	knee, err := c.search(func(rate float64) (Probe, error) {
		p, err := measure(rate)
		doc.Runs = append(doc.Runs, result.Run{Target: "opa/server", SUT: result.SUT{Replicas: make([]result.Replica, 3)}})
		p.Index, p.Latency = len(doc.Runs)-1, time.Duration(rate)*time.Microsecond
		return p, err
	})
	if err != nil {
		t.Fatal(err)
	}
	s := knee.Record(c, doc, nil)
	if s.Target != "opa/server ×3" || s.Workload != "authz" || s.SLO != (result.SearchSLO{Percentile: 99, LatencyUS: 5000, ErrorRatio: 0.001}) {
		t.Errorf("record %+v: want authz on opa/server ×3 against p99 5ms, 0.1%% errors", s)
	}
	if len(s.Probes) != len(knee.Probes) || len(s.Probes) != len(doc.Runs) {
		t.Fatalf("%d probes recorded, %d searched, %d runs", len(s.Probes), len(knee.Probes), len(doc.Runs))
	}
	for i, p := range s.Probes {
		if p.Run != i || p.Rate != knee.Probes[i].Rate || p.Pass != knee.Probes[i].Pass || p.LatencyUS != p.Rate {
			t.Errorf("probe %d recorded as %+v, searched as %+v", i, p, knee.Probes[i])
		}
	}
	if s.Met == nil || s.Missed == nil || s.Met.Rate != knee.Pass.Rate || s.Missed.Rate != knee.Fail.Rate || s.Met.Rate > 500 || s.Missed.Rate <= 500 {
		t.Errorf("met %+v, missed %+v: want the knee around 500", s.Met, s.Missed)
	}
	if s.Interrupted || s.Error != "" {
		t.Errorf("a search that ended is recorded as interrupted %v, error %q", s.Interrupted, s.Error)
	}
	if s := knee.Record(c, doc, &StoppedError{Cause: errors.New("interrupted")}); s.Error != "" {
		t.Errorf("a stop recorded as an error: %q", s.Error)
	}
	if s := knee.Record(c, doc, errors.New("start opa server: exit 1")); s.Error != "start opa server: exit 1" {
		t.Errorf("a failure recorded as %q", s.Error)
	}
}
