package history

import (
	"context"
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/result"
)

// Window builds, for a new document, the base a gate compares it with: for each of its runs, the
// repetitions of the same series (workload, target, load, and the testbed named, or the
// document's own: TestbedName) over the last commits measured on branch, as one run of a
// result document. Its latency percentiles are those of the
// window's histograms merged, exactly as if the window had been one run; its throughput is the
// mean over the window's repetitions. Repetitions the new document holds itself (it was added
// already) are left out. A run with no series, or none on the branch, has no base run: compare
// then says "only in the new result", which a gate fails on.
func Window(ctx context.Context, st Store, doc *result.Document, branch string, commits int, testbed string) (*result.Document, error) {
	if commits < 1 {
		return nil, fmt.Errorf("a window of %d commits: want at least 1", commits)
	}
	all, err := st.Series(ctx)
	if err != nil {
		return nil, err
	}
	byKey := map[string]Series{}
	for _, s := range all {
		byKey[s.Key] = s
	}
	own := map[string]bool{}
	for ri := range doc.Runs {
		for pi := range doc.Runs[ri].Repetitions {
			for _, k := range repetitionKeys(&doc.Runs[ri].Repetitions[pi]) {
				own[k] = true
			}
		}
	}
	if testbed == "" {
		testbed = TestbedName(doc.Env)
	}
	base := &result.Document{Schema: result.Schema, Order: "sequential"}
	var first, last string
	var newest int64
	for ri := range doc.Runs {
		r := &doc.Runs[ri]
		se, ok := byKey[seriesOf(r, testbed).Key]
		if !ok {
			continue
		}
		points, err := st.Points(ctx, se.ID, branch)
		if err != nil {
			return nil, err
		}
		var window []Point
		for i := len(points) - 1; i >= 0 && len(window) < commits; i-- {
			p := points[i]
			var kept []Repetition
			for _, rep := range p.Repetitions {
				if !own[rep.ID] {
					kept = append(kept, rep)
				}
			}
			if len(kept) == 0 {
				continue
			}
			p.Repetitions = kept
			window = append([]Point{p}, window...)
		}
		if len(window) == 0 {
			continue
		}
		run, err := windowRun(r, window)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Name(), err)
		}
		base.Runs = append(base.Runs, run)
		if w := window[len(window)-1]; w.Time.After(base.Created) {
			base.Created, newest, last = w.Time, w.Documents[0], w.Commit
		}
		if first == "" {
			first = window[0].Commit
		}
	}
	if newest != 0 {
		stored, err := st.Document(ctx, newest)
		if err != nil {
			return nil, err
		}
		if in, err := ParseInput(stored.Name, stored.Body, stored.Branch); err == nil {
			base.Env = in.Doc.Env
		}
		base.Env.Commit = short(last)
		if first != last {
			base.Env.Commit = short(first) + ".." + short(last)
		}
	}
	return base, nil
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// windowRun is the window's repetitions as one run with the new run's identity, summarised from
// them: the histograms merged for the percentiles.
func windowRun(like *result.Run, window []Point) (result.Run, error) {
	run := result.Run{Target: like.Target, Workload: like.Workload, WorkloadDoc: like.WorkloadDoc, SUT: like.SUT, Load: like.Load}
	var merged *hdrhistogram.Histogram
	var rps []float64
	s := &run.Summary
	for _, p := range window {
		for _, r := range p.Repetitions {
			rep := result.Repetition{ID: r.ID, Requests: r.Requests, OK: r.OK, ThroughputRPS: r.Throughput, HDR: r.HDR,
				Errors:    uint64(math.Round(r.ErrorRatio * float64(r.Requests))),
				LatencyUS: result.Percentiles{P50: r.P50, P90: r.P90, P99: r.P99, P999: r.P999}}
			if r.Usable {
				rep.ElapsedS = 1 // a repetition that ran to its end: one its figures count for
				rps = append(rps, r.Throughput)
			}
			if r.HDR != "" {
				h, err := result.DecodeHistogram(r.HDR)
				if err != nil {
					return run, fmt.Errorf("repetition %s of commit %s: %w", r.ID, p.Commit, err)
				}
				rep.LatencyUS.Mean = h.Mean() / 1e3
				if merged == nil {
					merged = hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
				}
				merged.Merge(h)
			}
			s.Requests += rep.Requests
			s.OK += rep.OK
			s.Errors += rep.Errors
			run.Repetitions = append(run.Repetitions, rep)
		}
	}
	s.ThroughputRPS = result.SpreadOf(rps)
	if merged != nil {
		s.LatencyUS = result.PercentilesOf(merged, 0)
		b := result.BeyondOf(merged)
		s.LatencyBeyond = &b
	}
	return run, nil
}
