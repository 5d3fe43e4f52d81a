package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
)

// A capacity ramp is the search's alternative: one continuous open-loop run whose rate rises
// linearly from the search's lowest rate to its highest, read interval by interval. It finds in
// one run what the search finds in a dozen, at a price: latency lags the rate. A server past its
// capacity builds a queue, and the queue, not the rate, is what the latency shows; an interval
// just past the knee has not built enough of one yet to break the SLO, so the ramp overestimates
// the capacity, more the steeper it is. That is why its estimate is confirmed, by default, with
// one constant-rate probe at that rate, the search's own test.

// MinIntervalSends is the fewest sends due in an interval for its percentile to be judged, the
// same bound a run's window is held to before its req/s is read as a rate (result.ShortWindowOf).
const MinIntervalSends = 10

// MaxRampIntervals bounds the intervals of one ramp: each holds a latency histogram per shard
// of the generator's connections.
const MaxRampIntervals = 600

// RampEstimate is what a ramp found.
type RampEstimate struct {
	// Run is the ramp's run, its intervals judged (result.Interval.Verdict), and Index its
	// place in the document's runs.
	Run   *result.Run
	Index int
	// Met is the last interval that met the SLO before Broke, the first that did not; the
	// mean rate of Met is the estimate. Nil when none met it before one broke, or none broke.
	Met, Broke *result.Interval
	// Confirm is the constant-rate probe at the estimate, when one was run.
	Confirm *Probe
	// Interrupted: Ctrl-C, or a server that died, stopped it before its end; nothing is
	// concluded.
	Interrupted bool
}

// Estimate is the ramp's capacity: the mean rate of the last interval that met the SLO before
// the first that broke it, in whole req/s; 0 when there is none.
func (e RampEstimate) Estimate() float64 {
	if e.Met == nil {
		return 0
	}
	return math.Floor(e.Met.MeanRate())
}

// GeneratorBound reports an estimate that is the generator's limit rather than the server's:
// the first interval that broke did so because the generator fell behind.
func (e RampEstimate) GeneratorBound() bool { return e.Broke != nil && e.Broke.GeneratorBound }

// RampIntervalFor is the interval a ramp over ramp is read in: interval when given, else a
// thirtieth of the ramp and at least a second. A second holds a few hundred sends at the low
// rates people search from, enough to read a p99 from, and thirty intervals put the estimate's
// grain at a thirtieth of the range searched, near the search's own --resolution.
func RampIntervalFor(ramp, interval time.Duration) time.Duration {
	if interval > 0 {
		return interval
	}
	return max(time.Second, ramp/30)
}

// CheckRamp refuses a ramp that cannot run, naming its flags.
func CheckRamp(c CapacitySearch) error {
	var errs []error
	if c.Ramp <= 0 {
		errs = append(errs, fmt.Errorf("--ramp %s: want a positive duration", c.Ramp))
		return errors.Join(errs...)
	}
	if c.Max <= c.Start {
		errs = append(errs, fmt.Errorf("--ramp %s: the range --start %g to --max %g holds one rate; a ramp needs --max above --start", c.Ramp, c.Start, c.Max))
	}
	if c.RampInterval < 0 {
		errs = append(errs, fmt.Errorf("--ramp-interval %s: want a positive duration", c.RampInterval))
	} else if iv := RampIntervalFor(c.Ramp, c.RampInterval); iv > c.Ramp {
		errs = append(errs, fmt.Errorf("--ramp-interval %s: longer than the --ramp %s it divides", iv, c.Ramp))
	} else if n := (c.Ramp + iv - 1) / iv; n > MaxRampIntervals {
		errs = append(errs, fmt.Errorf("--ramp-interval %s: %d intervals in the --ramp %s, at most %d; give a longer interval", iv, n, c.Ramp, MaxRampIntervals))
	}
	return errors.Join(errs...)
}

// CapacityRamp runs the ramp from c.Start to c.Max over c.Ramp, judges each interval, and unless
// c.NoConfirm probes the estimate at a constant rate. Every run goes into doc.
func CapacityRamp(ctx context.Context, c CapacitySearch, o Options, doc *result.Document) (RampEstimate, error) {
	if err := CheckRamp(c); err != nil {
		return RampEstimate{}, err
	}
	m, err := c.measurer(o, doc)
	if err != nil {
		return RampEstimate{}, err
	}
	spec := load.Spec{Stages: []load.Stage{{Over: c.Ramp, From: c.Start, To: c.Max}}, Connections: c.Connections,
		Duration: c.Ramp, Warmup: c.Warmup, Intervals: RampIntervalFor(c.Ramp, c.RampInterval)}
	var est RampEstimate
	before := len(doc.Runs)
	_, err = m.run(ctx, "the ramp", spec)
	// A ramp stopped before its end (Ctrl-C, a server that died) never reached its upper rates:
	// what it met and broke is shown, but no estimate is drawn.
	est.Interrupted = err != nil
	if ramp := len(doc.Runs) - 1; ramp >= before {
		// A ramp cut short is judged too, for what its intervals showed before the stop; no
		// estimate is drawn from it (Interrupted, below).
		stopped := est.Interrupted
		var jerr error
		est, jerr = judgeRamp(c.SLO, &doc.Runs[ramp])
		est.Interrupted, est.Index = stopped, ramp
		if err == nil {
			err = jerr
		}
		if err == nil && est.Met != nil && !c.NoConfirm && ctx.Err() == nil {
			var p Probe
			if p, err = m.probe(ctx, est.Estimate()); err == nil {
				est.Confirm = &p
			}
			est.Run = &doc.Runs[ramp] // the probe's run may have moved the document's runs
		}
	}
	if ctx.Err() != nil {
		est.Interrupted = true
		if err == nil {
			err = &StoppedError{Cause: context.Cause(ctx)}
		}
		MarkStopped(ctx, doc, err)
	}
	return est, err
}

// judgeRamp judges each interval of the ramp's run by the probes' rule (SLO.verdict), writing
// the verdicts into the run, and finds the estimate: the last interval that met the SLO before
// the first that broke it. An interval with too few sends due neither meets nor breaks.
func judgeRamp(slo SLO, r *result.Run) (RampEstimate, error) {
	est := RampEstimate{Run: r}
	if len(r.Repetitions) != 1 {
		return est, fmt.Errorf("capacity: the ramp's run holds %d repetitions, want 1", len(r.Repetitions))
	}
	ivs := r.Repetitions[0].Intervals
	if len(ivs) == 0 && r.Repetitions[0].Requests > 0 {
		return est, errors.New("capacity: the ramp's run holds no intervals")
	}
	for i := range ivs {
		iv := &ivs[i]
		h, err := result.DecodeHistogram(iv.HDR)
		if err != nil {
			return est, fmt.Errorf("capacity: the ramp's interval at %gs: latency histogram: %w", iv.FromS, err)
		}
		// Read as zero, a histogram that lost responses would pass any latency bound.
		if got, want := h.TotalCount(), iv.OK+iv.Unsent; got != want {
			return est, fmt.Errorf("capacity: the ramp's interval at %gs: latency histogram holds %d, the interval counted %d ok and %d unsent", iv.FromS, got, iv.OK, iv.Unsent)
		}
		latency := time.Duration(h.ValueAtQuantile(slo.Percentile))
		iv.Verdict, iv.GeneratorBound = result.Broke, false
		switch {
		case iv.Due < MinIntervalSends:
			iv.Verdict = result.TooFew
			iv.Why = fmt.Sprintf("%d sends due, fewer than the %d a percentile is judged from", iv.Due, MinIntervalSends)
		case iv.OK == 0:
			iv.Why = "no served decision"
		default:
			sched := &load.Schedule{Intended: iv.Due, Sent: iv.Sent, Unsent: iv.Unsent, Late: iv.Late, GeneratorLate: iv.GenLate}
			var pass bool
			pass, iv.GeneratorBound, iv.Why = slo.verdict(iv.Due, iv.Errors+iv.Unsent, sched, sched.Missed(), latency)
			if pass {
				iv.Verdict = result.Met
				iv.Why = fmt.Sprintf("p%g %s <= %s", slo.Percentile, latency.Round(10*time.Microsecond), slo.Latency)
			}
		}
	}
	met, broke := result.RampKnee(ivs)
	// With no interval broken, Met is the last judged: the ramp's top is a floor, not a knee,
	// and the caller says so. With neither, every interval was too thin to judge.
	if met >= 0 {
		est.Met = &ivs[met]
	}
	if broke >= 0 {
		est.Broke = &ivs[broke]
	}
	return est, nil
}
