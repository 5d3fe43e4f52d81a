package bench

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/verify"
)

// This file turns what the producers recorded (recorders, open-loop schedules, target and server
// information, process usage) into the result document's own types, so that the result package
// depends on none of them.

// CaptureEnv reads the environment of this process, with the CPUs the kernel says the machine
// has and this process may run on, and the version of every engine registered.
func CaptureEnv() result.Env {
	cpus := result.CPUs{Machine: sut.MachineCPUs()}
	if allowed, err := sut.Affinity(0); err == nil {
		cpus.Allowed = allowed
	}
	return result.CaptureEnv(engine.Versions(), cpus)
}

// newRepetition summarises one driver outcome, and stores every histogram its views show. Its
// identity is drawn here, when it was measured, and no merge changes it afterwards.
func newRepetition(rec *metrics.Recorder, elapsed time.Duration, partial bool) (result.Repetition, error) {
	rep := result.Repetition{
		ID:            result.NewRepetitionID(),
		Requests:      rec.Requests(),
		OK:            rec.Counts[verify.OK],
		Errors:        rec.ErrorCount(),
		ErrorClasses:  rec.ErrorClasses(),
		ErrorMessages: rec.FirstMessages,
		Clamped:       rec.Clamped,
		ElapsedS:      elapsed.Seconds(),
		LatencyUS:     result.PercentilesOf(rec.OK, rec.MeanOKNanos()),
		Partial:       partial,
	}
	if elapsed > 0 {
		rep.ThroughputRPS = float64(rep.OK) / elapsed.Seconds()
	}
	for _, h := range []struct {
		from *hdrhistogram.Histogram
		into *string
		kept bool // stored even when empty
	}{
		{rec.OK, &rep.HDR, true},
		{rec.Errors, &rep.ErrorHDR, false},
		{rec.Connect, &rep.ConnectHDR, true}, // nil until a request opened a connection
		{rec.TLS, &rep.TLSHDR, true},
		{rec.Exchange, &rep.ExchangeHDR, true},
		{rec.ServerEval, &rep.ServerEvalHDR, true},
		{rec.ServerHandler, &rep.ServerHandlerHDR, true},
		{rec.Allowed, &rep.AllowHDR, true},
		{rec.Denied, &rep.DenyHDR, true},
	} {
		if h.from == nil || (!h.kept && h.from.TotalCount() == 0) {
			continue
		}
		var err error
		if *h.into, err = result.EncodeHistogram(h.from); err != nil {
			return rep, err
		}
	}
	if rec.Timed != nil {
		var err error
		if rep.ServerSample, err = result.EncodeSample(rec.Timed); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// setSchedule adds an open-loop run's schedule figures to the repetition. window is the
// measured time (load.Outcome.Elapsed): from the end of the warm-up to the last answer.
func setSchedule(r *result.Repetition, sc load.Schedule, rec *metrics.Recorder, window time.Duration) error {
	r.Intended, r.Unsent, r.LateSends, r.GenLate, r.RateMissed = sc.Intended, sc.Unsent, sc.Late, sc.GeneratorLate, sc.Missed()
	r.OpenSender = sc.Sender
	if window > 0 {
		r.AchievedRPS = float64(sc.Sent) / window.Seconds() // the rate actually sent
	}
	var err error
	if r.LateHDR, err = result.EncodeHistogram(rec.Lateness); err != nil {
		return err
	}
	if r.Uncorrected, err = result.EncodeHistogram(rec.Uncorrected); err != nil {
		return err
	}
	if rec.Unsent != nil && rec.Unsent.TotalCount() > 0 {
		// A stall that kept sends from going out must show in the latency, not only in a count.
		r.LatencyUS = result.PercentilesOf(rec.Corrected(), 0)
		r.UnsentHDR, err = result.EncodeHistogram(rec.Unsent)
	}
	return err
}

// intervalsOf stores an open-loop run's intervals (load.Spec.Intervals), with the rates the load
// asked for at each one's edges.
func intervalsOf(spec load.Spec, ivs []load.Interval) ([]result.Interval, error) {
	out := make([]result.Interval, len(ivs))
	for i, iv := range ivs {
		hdr, err := result.EncodeHistogram(iv.Latency)
		if err != nil {
			return nil, err
		}
		out[i] = result.Interval{FromS: iv.From.Seconds(), ToS: iv.To.Seconds(),
			RateFrom: spec.RateAt(iv.From), RateTo: spec.RateAt(iv.To),
			Due: iv.Due, Sent: iv.Sent, Unsent: iv.Unsent, Late: iv.Late, GenLate: iv.GeneratorLate,
			OK: iv.OK, Errors: iv.Errors, LatencyUS: result.PercentilesOf(iv.Latency, 0), HDR: hdr}
	}
	return out, nil
}

// summarise fills the summary of a run under its load from its repetitions and their merged
// recorder. result.Merge computes the same summary from the histograms the repetitions store;
// record_test.go holds the two alike.
func summarise(under result.Load, reps []result.Repetition, merged *metrics.Recorder) result.Summary {
	s := result.Summary{
		Requests:      merged.Requests(),
		OK:            merged.Counts[verify.OK],
		WrongDecision: merged.Counts[verify.WrongDecision],
		Errors:        merged.ErrorCount(),
		ErrorClasses:  merged.ErrorClasses(),
		UnverifiedOK:  merged.UnverifiedOK,
		LatencyUS:     result.PercentilesOf(merged.OK, merged.MeanOKNanos()),
		ErrorMessages: merged.FirstMessages,
		// From the ok histogram's own range: the merged recorder's ceiling is the highest of its
		// repetitions'.
		LatencyCeilingS: float64(merged.OK.HighestTrackableValue()) / 1e9,
		Clamped:         merged.Clamped,
	}
	if merged.OK.TotalCount() > 0 {
		b := result.BeyondOf(merged.OK)
		s.LatencyBeyond = &b
	}
	var rps []float64
	for _, r := range reps {
		if r.ElapsedS > 0 {
			rps = append(rps, r.ThroughputRPS)
		}
	}
	s.ThroughputRPS = result.SpreadOf(rps)
	s.ShortWindow = result.ShortWindowOf(under, reps)
	if merged.Errors.TotalCount() > 0 {
		p := result.PercentilesOf(merged.Errors, 0)
		s.ErrorLatencyUS = &p
	}
	// As result.Merge has it: apart by decision only where every ok response carried one.
	if d := result.DecisionsOf(merged.Allowed, merged.Denied); d != nil && d.Allow.Count+d.Deny.Count == s.OK {
		s.Decisions = d
	}
	if merged.Connect != nil {
		s.Connections = &result.Connections{Opened: merged.Connect.TotalCount(), ConnectUS: result.PercentilesOf(merged.Connect, 0),
			Reconnects: merged.Reconnects, TLSUS: result.PartOf(merged.TLS), ExchangeUS: result.PartOf(merged.Exchange)}
	}
	if merged.ServerEval != nil {
		s.Server = &result.ServerTimes{Sampled: merged.ServerHandler.TotalCount(),
			EvalUS: result.PercentilesOf(merged.ServerEval, 0), HandlerUS: result.PercentilesOf(merged.ServerHandler, 0)}
		// From the repetitions' stored samples, not the merged recorder's, so that a summary
		// written here and one result.Merge recomputes are the same. newRepetition has just
		// encoded them: one that does not decode is a bug, and leaves the bands out.
		s.Attribution, _ = result.AttributionOfRepetitions(reps, merged.OK)
	}
	if merged.Lateness != nil {
		unsent := merged.Counts[verify.Unsent]
		o := &result.OpenSummary{LateSends: int64(merged.Late), Sent: int64(merged.Requests() - unsent), Unsent: int64(unsent),
			LateAfterUS: float64(load.LateAfter) / 1e3, OKLatencyUS: s.LatencyUS,
			LatenessUS:           result.PercentilesOf(merged.Lateness, 0),
			UncorrectedLatencyUS: result.PercentilesOf(merged.Uncorrected, 0)}
		if unsent > 0 {
			o.LatencyIncludesUnsent = true
			s.LatencyUS = result.PercentilesOf(merged.Corrected(), 0)
		}
		var achieved []float64
		for _, r := range reps {
			o.Intended += r.Intended
			o.GeneratorLate += r.GenLate
			o.RateMissed = o.RateMissed || r.RateMissed
			o.Sender = result.SenderOf(o.Sender, r.OpenSender)
			if r.ElapsedS > 0 {
				achieved = append(achieved, r.AchievedRPS)
			}
		}
		o.AchievedRPS = result.SpreadOf(achieved)
		s.Open = o
	}
	return s
}

// newHarness compares the authzbench process's usage before and after requests were sent.
func newHarness(before, after metrics.Usage, requests uint64) *result.Harness {
	mb := func(b uint64) float64 { return float64(b) / (1 << 20) }
	h := &result.Harness{
		CPUSeconds: (after.CPU - before.CPU).Seconds(),
		RSSStartMB: mb(before.RSS),
		RSSEndMB:   mb(after.RSS),
		RSSPeakMB:  mb(after.HWM),
	}
	if requests > 0 {
		h.CPUPerRequestUS = h.CPUSeconds * 1e6 / float64(requests)
	}
	return h
}

// resourcesOf is what the server's process tree used, as the result records it.
func resourcesOf(r *sut.Resources) *result.Resources {
	if r == nil {
		return nil
	}
	return &result.Resources{CPUCoresMean: r.CPUCoresMean, CPUCoresMax: r.CPUCoresMax, RSSMaxMB: r.RSSMaxMB, Samples: r.Samples}
}

// sutInfo is what the result says of the system under test, placed where its kind says it ran.
func sutInfo(where kinds.Placement, i kinds.Info) result.SUT {
	i.Placement = where
	return i
}
