package report

import (
	"fmt"
	"io"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/textwrap"
)

// Ramp is one run read interval by interval (a capacity ramp's): a table of its own after the
// notes, beside the probes of a search.
type Ramp struct {
	Workload, Target string
	Load             result.Load
	Intervals        []result.Interval
	// Partial: the ramp was stopped before its end, so it never reached its upper rates and
	// no estimate is drawn from it.
	Partial bool
}

// rampsOf are the run's repetitions that hold intervals.
func rampsOf(r *result.Run) []Ramp {
	var out []Ramp
	for _, rep := range r.Repetitions {
		if len(rep.Intervals) > 0 {
			out = append(out, Ramp{Workload: r.Workload, Target: r.Label(), Load: r.Load, Intervals: rep.Intervals, Partial: r.Partial || rep.Partial})
		}
	}
	return out
}

var rampHeader = []string{"interval", "rate, req/s", "due", "sent", "unsent", "late (generator's)", "errors", "P50", "P99", "P99.9", "SLO"}

// rampRows are a ramp's intervals, a line each.
func rampRows(ivs []result.Interval) [][]string {
	rows := make([][]string, 0, len(ivs))
	for _, iv := range ivs {
		verdict := "-" // not judged: a run read in intervals outside a capacity ramp
		switch iv.Verdict {
		case result.Met:
			verdict = "met"
		case result.Broke:
			verdict = "BROKE: " + iv.Why
			if iv.GeneratorBound {
				verdict = "BROKE (generator): " + iv.Why
			}
		case result.TooFew:
			verdict = "not judged: " + iv.Why
		}
		p := func(us float64) string {
			if iv.OK+iv.Unsent == 0 {
				return "-"
			}
			return Duration(us)
		}
		rows = append(rows, []string{
			fmt.Sprintf("%gs–%gs", iv.FromS, iv.ToS),
			Thousands(iv.RateFrom) + "–" + Thousands(iv.RateTo),
			count(iv.Due), count(iv.Sent), count(iv.Unsent),
			fmt.Sprintf("%s (%s)", count(iv.Late), count(iv.GenLate)), count(iv.Errors),
			p(iv.LatencyUS.P50), p(iv.LatencyUS.P99), p(iv.LatencyUS.P999), verdict,
		})
	}
	return rows
}

// rampEstimate says in a sentence what a judged ramp estimates, and what that is not; "" for
// intervals no capacity ramp judged.
func rampEstimate(r Ramp) string {
	met, broke := result.RampKnee(r.Intervals)
	where := fmt.Sprintf("%s on %s, %s", r.Workload, r.Target, atLoad(r.Load))
	span := func(iv result.Interval) string {
		return Thousands(iv.RateFrom) + "–" + Thousands(iv.RateTo) + " req/s"
	}
	switch {
	case met < 0 && broke < 0:
		return ""
	case r.Partial:
		return where + ": the ramp was stopped before its end: no estimate is drawn from it"
	case met < 0 && r.Intervals[broke].GeneratorBound:
		return fmt.Sprintf("%s: no ramp estimate: in the first judged interval (%s) the generator fell behind, its own limit, not the server's", where, span(r.Intervals[broke]))
	case met < 0:
		return fmt.Sprintf("%s: no ramp estimate: the first judged interval (%s) already broke the SLO", where, span(r.Intervals[broke]))
	case broke < 0:
		return fmt.Sprintf("%s: every judged interval met the SLO, up to %s: the ramp estimate %s req/s is a floor, not a capacity", where, span(r.Intervals[met]), Thousands(r.Intervals[met].MeanRate()))
	}
	s := fmt.Sprintf("%s: ramp estimate %s req/s, the mean rate of the last interval that met the SLO (%s) before the first that broke it (%s)",
		where, Thousands(r.Intervals[met].MeanRate()), span(r.Intervals[met]), span(r.Intervals[broke]))
	if r.Intervals[broke].GeneratorBound {
		s += "; that one broke because the generator fell behind, so the estimate is the generator's limit, not the server's"
	}
	return s
}

// rampNotes say what each ramp estimates, and how to read one.
func rampNotes(v *View) []string {
	var notes []string
	for _, r := range v.Ramps {
		if s := rampEstimate(r); s != "" {
			notes = append(notes, s)
		}
	}
	return append(notes, "ramp: each interval holds the sends whose intended times fall in it, judged against the SLO as a constant-rate probe is; the estimate is an upper bound, not a capacity: latency lags a rising rate (a server past its capacity takes time to build the queue that breaks the SLO), so the intervals just past the knee can still meet it, the more so the steeper the ramp; a constant-rate probe at the estimate is what confirms it (authzbench capacity --ramp runs one unless --no-confirm)")
}

// writeRamps writes the table of each ramp's intervals and their notes; nothing when no run was
// read in intervals.
func writeRamps(w io.Writer, v *View, markdown bool) error {
	for _, r := range v.Ramps {
		title := fmt.Sprintf("Ramp, interval by interval: %s on %s, %s", r.Workload, r.Target, atLoad(r.Load))
		var err error
		if markdown {
			err = mdTable(w, "**"+title+"**", rampHeader, rampRows(r.Intervals))
		} else {
			err = textTable(w, title, rampHeader, rampRows(r.Intervals))
		}
		if err != nil {
			return err
		}
	}
	if len(v.Ramps) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	for _, n := range rampNotes(v) {
		line := textwrap.Fill("- "+n, TerminalWidth, "  ")
		if markdown {
			line = "- " + n + "\n"
		}
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}
