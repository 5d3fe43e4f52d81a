package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/report"
)

const rampHelp = `
--ramp DURATION replaces the probes with one continuous open-loop run whose rate rises linearly
from --start to --max over DURATION (after --warmup at --start), read in intervals of
--ramp-interval (by default a thirtieth of the ramp, at least 1s): each interval's sends, by
their intended times, are judged against the SLO as a probe is, with the same accounting of due,
sent, unsent and late sends. The estimate is the mean rate of the last interval that met the SLO
before the first that broke it; if that one broke because the generator fell behind, the
estimate is the generator's limit, not the server's. Then one constant-rate probe of --step at
the estimate confirms it, as the search would (--no-confirm skips it), and both are reported.
The ramp is quicker than the search but biased high: latency lags a rising rate, because a
server past its capacity needs time to build the queue that breaks the SLO, so the intervals
just past the knee still meet it; the steeper the ramp, the larger the overestimate. Read the
estimate as an upper bound to confirm, not a capacity. A linear ramp spends its time evenly over
the rates: give --max near the capacity you expect, or the knee falls in its first intervals.`

func addRampFlags(fl *pflag.FlagSet, c *bench.CapacitySearch) {
	fl.DurationVar(&c.Ramp, "ramp", 0, "instead of probes, one linear ramp from --start to --max over this long, judged interval by interval (an estimate biased high; see above)")
	fl.DurationVar(&c.RampInterval, "ramp-interval", 0, "with --ramp: the interval each SLO percentile is judged over (default: a thirtieth of the ramp, at least 1s)")
	fl.BoolVar(&c.NoConfirm, "no-confirm", false, "with --ramp: report the ramp's estimate without confirming it by a constant-rate probe")
}

// checkRampFlags refuses a ramp that cannot run, and the ramp's own flags without one, before any
// load.
func checkRampFlags(fl *pflag.FlagSet, c bench.CapacitySearch) error {
	if !fl.Changed("ramp") {
		var errs []error
		for _, name := range []string{"ramp-interval", "no-confirm"} {
			if fl.Changed(name) {
				errs = append(errs, fmt.Errorf("--%s applies to a ramp; give --ramp DURATION too", name))
			}
		}
		return errors.Join(errs...)
	}
	errs := []error{bench.CheckRamp(c)}
	// The search's own bounds mean nothing to a ramp: refused rather than silently ignored.
	for _, name := range []string{"max-steps", "resolution"} {
		if fl.Changed(name) {
			errs = append(errs, fmt.Errorf("--%s bounds the probe search; a --ramp is one run (drop one or the other)", name))
		}
	}
	return errors.Join(errs...)
}

// rampKnee is the ramp's answer in a probe search's terms, for what follows from one (the
// replica plan): the confirming probe when one ran, else the estimate, unconfirmed.
func rampKnee(e bench.RampEstimate) bench.Knee {
	var k bench.Knee
	switch {
	case e.Confirm != nil && e.Confirm.Pass:
		k.Pass = e.Confirm
	case e.Confirm != nil:
		k.Fail = e.Confirm
	case e.Met != nil:
		k.Pass = &bench.Probe{Rate: e.Estimate(), Pass: true}
	}
	return k
}

// unmeasuredRamp is unmeasuredProbes for a ramp: a ramp that served no decision, or whose
// confirming probe measured no rate, exits 1.
func unmeasuredRamp(e bench.RampEstimate) error {
	if e.Run != nil && e.Run.Summary.OK == 0 {
		why := e.Run.NothingServed()
		if why == "" {
			why = "no served decision"
		}
		return &exitError{exitFailed, fmt.Errorf("measured nothing: the ramp: %s", why)}
	}
	if p := e.Confirm; p != nil && p.Unmeasured {
		return &exitError{exitFailed, fmt.Errorf("measured nothing: the probe at %s req/s confirming the ramp: %s", report.Thousands(p.Rate), p.Why)}
	}
	return nil
}

// printRamp writes the ramp's intervals and what they say, then the confirming probe.
func printRamp(w io.Writer, e bench.RampEstimate, c bench.CapacitySearch) {
	if e.Run == nil {
		return
	}
	// The intervals themselves are in the table above (report's ramp table); this says what
	// they come to against the SLO.
	slo := c.SLO
	switch {
	case e.Interrupted:
		fmt.Fprintf(w, "\nramp stopped before it ended: no conclusion for %s\n", slo)
		return
	case e.Met == nil && e.Broke == nil:
		fmt.Fprintf(w, "\nno estimate: no interval had the %d sends due a percentile is judged from; give a longer --ramp-interval\n", bench.MinIntervalSends)
		return
	case e.Met == nil && e.GeneratorBound():
		fmt.Fprintf(w, "\nno estimate: in the ramp's first judged interval, %s req/s, the generator fell behind: %s. That is the generator's limit on this machine, not the server's; try again on a quieter machine, or with a lower --start\n",
			rateSpan(e.Broke.RateFrom, e.Broke.RateTo), e.Broke.Why)
		return
	case e.Met == nil:
		fmt.Fprintf(w, "\nno rate met %s: even the ramp's first judged interval, %s req/s, broke it (%s); try a lower --start\n",
			slo, rateSpan(e.Broke.RateFrom, e.Broke.RateTo), e.Broke.Why)
		return
	case e.Broke == nil:
		fmt.Fprintf(w, "\nevery interval met %s, up to %s req/s: the ramp estimate %s req/s is a floor; raise --max to find the knee\n",
			slo, report.Thousands(e.Met.RateTo), report.Thousands(e.Estimate()))
	case e.GeneratorBound():
		fmt.Fprintf(w, "\nramp estimate %s req/s (the interval %s req/s met %s), but the next, %s req/s, broke it through the generator: %s. The estimate is the generator's limit on this machine, not the server's capacity\n",
			report.Thousands(e.Estimate()), rateSpan(e.Met.RateFrom, e.Met.RateTo), slo, rateSpan(e.Broke.RateFrom, e.Broke.RateTo), e.Broke.Why)
	default:
		fmt.Fprintf(w, "\nramp estimate %s req/s: the interval %s req/s met %s; the next, %s req/s, broke it: %s\n",
			report.Thousands(e.Estimate()), rateSpan(e.Met.RateFrom, e.Met.RateTo), slo, rateSpan(e.Broke.RateFrom, e.Broke.RateTo), e.Broke.Why)
	}
	fmt.Fprintln(w, "  (an upper bound: latency lags a rising rate, so intervals just past the knee can still meet the SLO)")
	switch p := e.Confirm; {
	case p == nil:
		fmt.Fprintln(w, "not confirmed (--no-confirm): run without --ramp, or drop --no-confirm, for a capacity measured at a constant rate")
	case p.Pass:
		fmt.Fprintf(w, "confirmed: %s req/s held %s for %s at a constant rate (p%g %s)\n", report.Thousands(p.Rate), slo, c.Step, slo.Percentile, p.Latency.Round(10_000))
	case p.Unmeasured:
		fmt.Fprintf(w, "not confirmed: the probe at %s req/s measured no rate: %s\n", report.Thousands(p.Rate), p.Why)
	default:
		fmt.Fprintf(w, "NOT confirmed: at a constant %s req/s for %s: %s; the ramp overestimated, so search below it (without --ramp, --max %s)\n",
			report.Thousands(p.Rate), c.Step, p.Why, report.Thousands(p.Rate))
	}
}

func rateSpan(from, to float64) string { return report.Thousands(from) + "–" + report.Thousands(to) }
