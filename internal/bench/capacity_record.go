package bench

import (
	"errors"

	"github.com/authzbench/authzbench/internal/result"
)

// Record is the search as the result document keeps it (result.Search): its probes by their
// runs, what met and missed the SLO, and whether it ended. err is what stopped it, if anything
// did; a stop by Ctrl-C is Interrupted, not an error of the search's.
func (k Knee) Record(c CapacitySearch, doc *result.Document, err error) result.Search {
	first := -1
	if len(k.Probes) > 0 {
		first = k.Probes[0].Index
	}
	s := newRecord(c, doc, k.Probes, first, err)
	s.Interrupted = k.Interrupted
	s.Met, s.Missed = probeRecord(k.Pass), probeRecord(k.Fail)
	return s
}

// Record is the ramp as the result document keeps it: its run and estimate, and the probe that
// confirmed or refuted the estimate as its one probe.
func (e RampEstimate) Record(c CapacitySearch, doc *result.Document, err error) result.Search {
	var probes []Probe
	if e.Confirm != nil {
		probes = []Probe{*e.Confirm}
	}
	first := -1
	if e.Run != nil {
		first = e.Index
	}
	s := newRecord(c, doc, probes, first, err)
	s.Interrupted = e.Interrupted
	if e.Run != nil {
		s.Ramp = &result.SearchRamp{Run: e.Index, Estimate: e.Estimate(), GeneratorBound: e.GeneratorBound(), AllMet: e.Met != nil && e.Broke == nil}
	}
	if p := e.Confirm; p != nil && p.Pass {
		s.Met = probeRecord(p)
	} else if p != nil {
		s.Missed = probeRecord(p)
	}
	return s
}

// newRecord is the part of a record a search and a ramp share; first is the place of its first
// run in the document's runs (-1: none), which names the target as the runs label it.
func newRecord(c CapacitySearch, doc *result.Document, probes []Probe, first int, err error) result.Search {
	s := result.Search{Workload: c.Workload, Target: c.Target,
		SLO: result.SearchSLO{Percentile: c.SLO.Percentile, LatencyUS: float64(c.SLO.Latency.Microseconds()), ErrorRatio: c.SLO.ErrorRatio}}
	for i := range probes {
		s.Probes = append(s.Probes, *probeRecord(&probes[i]))
	}
	// The target as its runs label it: with its TLS, HTTP/2 and replicas.
	if first >= 0 && first < len(doc.Runs) {
		s.Target = doc.Runs[first].Label()
	}
	var stopped *StoppedError
	if err != nil && !errors.As(err, &stopped) {
		s.Error = err.Error()
	}
	return s
}

func probeRecord(p *Probe) *result.SearchProbe {
	if p == nil {
		return nil
	}
	return &result.SearchProbe{Rate: p.Rate, Run: p.Index, Pass: p.Pass, Why: p.Why,
		LatencyUS: float64(p.Latency) / 1e3, GeneratorBound: p.GeneratorBound, Unmeasured: p.Unmeasured}
}
