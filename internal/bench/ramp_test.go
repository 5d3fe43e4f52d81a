package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/result"
)

// A server that answers one request at a time in 2 ms holds about 500 req/s; beyond, its queue
// grows without bound. A ramp from 100 to 1,500 req/s must put its estimate near there (within
// 0.5× to 1.5×: the ramp's lag biases it high, and a shared machine is noisy), confirm it with
// a constant-rate probe at that very rate, and account for every due send interval by interval.
func TestCapacityRampFindsTheKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("several seconds of load")
	}
	srv := oneAtATimeServer(t, 2*time.Millisecond)
	c := CapacitySearch{Target: "opa/server", Workload: "nop", SLO: SLO{Percentile: 99, Latency: 50 * time.Millisecond},
		Start: 100, Max: 1500, Connections: 32, Step: time.Second, Warmup: 200 * time.Millisecond,
		Ramp: 6 * time.Second, RampInterval: 500 * time.Millisecond,
		Options: map[string]any{"url": srv.URL + "/v1/data/authzbench/nop/allow"}}
	// As TestCapacityFindsTheKnee: a generator short of CPU on a busy machine says nothing of
	// the server, so ramp again; a machine that never quiets is a skip.
	const ramps = 3
	for attempt := 1; ; attempt++ {
		doc := &result.Document{}
		est, err := CapacityRamp(context.Background(), c, Options{}, doc)
		if err != nil {
			t.Fatal(err)
		}
		ivs := est.Run.Repetitions[0].Intervals
		var trace []string
		var due int64
		for _, iv := range ivs {
			trace = append(trace, strings.Join([]string{string(iv.Verdict), iv.Why}, " "))
			due += iv.Due
			if iv.Sent+iv.Unsent != iv.Due {
				t.Errorf("interval at %gs: sent %d + unsent %d != due %d", iv.FromS, iv.Sent, iv.Unsent, iv.Due)
			}
		}
		t.Logf("ramp %d, intervals:\n%s", attempt, strings.Join(trace, "\n"))
		if len(ivs) != 12 {
			t.Fatalf("%d intervals, want 12 of 500 ms in 6 s", len(ivs))
		}
		if want := est.Run.Summary.Open.Intended; due != want {
			t.Errorf("the intervals are due %d sends, the run %d", due, want)
		}
		if est.GeneratorBound() {
			if !strings.Contains(est.Broke.Why, "generator woke up late") {
				t.Errorf("called generator-bound for %q", est.Broke.Why)
			}
			if attempt == ramps {
				t.Skipf("in %d ramps the generator could not keep the rates on time: this machine is too busy to find the server's knee", ramps)
			}
			continue
		}
		if est.Met == nil || est.Broke == nil {
			t.Fatalf("no estimate: met %v, broke %v", est.Met, est.Broke)
		}
		if got := est.Estimate(); got < 250 || got > 750 {
			t.Errorf("ramp estimate %.0f req/s; the server holds about 500", got)
		}
		if est.Confirm == nil || est.Confirm.Rate != est.Estimate() {
			t.Fatalf("confirming probe %+v, want one at the estimate %.0f req/s", est.Confirm, est.Estimate())
		}
		if len(doc.Runs) != 2 || doc.Runs[1].Load.Rate != est.Estimate() {
			t.Errorf("%d runs, want the ramp's and the probe's at %.0f req/s", len(doc.Runs), est.Estimate())
		}
		return
	}
}

// The estimate is read from the intervals by the probes' rule: too few sends are no verdict, the
// first interval that breaks ends the reading even if a later one meets again, a generator that
// fell behind is named, and a histogram that lost responses is an error, not a pass.
func TestJudgeRampReadsTheIntervals(t *testing.T) {
	slo := SLO{Percentile: 99, Latency: 10 * time.Millisecond, ErrorRatio: 0.01}
	iv := func(rate float64, due, ok int64, latency time.Duration, genLate int64) result.Interval {
		h := hdrhistogram.New(1, int64(time.Minute), 2)
		for range ok {
			h.RecordValue(int64(latency))
		}
		hdr, err := result.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		return result.Interval{RateFrom: rate - 50, RateTo: rate + 50, Due: due, Sent: ok, OK: ok, GenLate: genLate, HDR: hdr}
	}
	run := func(ivs ...result.Interval) *result.Run {
		return &result.Run{Repetitions: []result.Repetition{{Requests: 1, Intervals: ivs}}}
	}
	for _, tc := range []struct {
		name             string
		run              *result.Run
		met, broke       float64 // mean rates, 0 for none
		generator        bool
		verdicts, errors string
	}{
		{name: "met then broke then met again", run: run(iv(100, 5, 5, time.Second, 0), iv(200, 200, 200, time.Millisecond, 0), iv(300, 300, 300, time.Millisecond, 0),
			iv(400, 400, 400, 20*time.Millisecond, 0), iv(500, 500, 500, time.Millisecond, 0)),
			met: 300, broke: 400, verdicts: "too_few met met broke met"},
		{name: "the generator behind", run: run(iv(200, 200, 200, time.Millisecond, 0), iv(300, 300, 300, 20*time.Millisecond, 10)),
			met: 200, broke: 300, generator: true, verdicts: "met broke"},
		{name: "never met", run: run(iv(200, 200, 200, 20*time.Millisecond, 0), iv(300, 300, 300, time.Millisecond, 0)),
			broke: 200, verdicts: "broke met"},
		{name: "never broke", run: run(iv(200, 200, 200, time.Millisecond, 0), iv(300, 300, 300, time.Millisecond, 0)),
			met: 300, verdicts: "met met"},
		{name: "a histogram short of its responses", run: func() *result.Run {
			r := run(iv(200, 200, 200, time.Millisecond, 0))
			r.Repetitions[0].Intervals[0].OK = 300
			return r
		}(), errors: "latency histogram holds 200, the interval counted 300 ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			est, err := judgeRamp(slo, tc.run)
			if tc.errors != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errors) {
					t.Fatalf("err %v, want %q", err, tc.errors)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var verdicts []string
			for _, iv := range tc.run.Repetitions[0].Intervals {
				verdicts = append(verdicts, string(iv.Verdict))
			}
			if got := strings.Join(verdicts, " "); got != tc.verdicts {
				t.Errorf("verdicts %q, want %q", got, tc.verdicts)
			}
			rate := func(iv *result.Interval) float64 {
				if iv == nil {
					return 0
				}
				return iv.MeanRate()
			}
			if rate(est.Met) != tc.met || rate(est.Broke) != tc.broke || est.GeneratorBound() != tc.generator {
				t.Errorf("met %v, broke %v, generator-bound %v; want %v, %v, %v", rate(est.Met), rate(est.Broke), est.GeneratorBound(), tc.met, tc.broke, tc.generator)
			}
			if est.Estimate() != tc.met {
				t.Errorf("estimate %v, want %v", est.Estimate(), tc.met)
			}
		})
	}
}
