package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/replay"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/workload"
)

// flipsShown is how many flipped decisions the terminal lists per path; the result file holds
// them all.
const flipsShown = 10

// replayImpacts finds, for each workload replayed from a decision log, what the policy does to
// the logged decisions, and prints it; an inputs file read as a decision log is said on stderr,
// once.
func replayImpacts(ctx context.Context, plan *bench.Plan, stdout, stderr io.Writer) ([]result.Replay, error) {
	var out []result.Replay
	said := map[string]bool{}
	for _, w := range plan.Workloads {
		if w.Replay == nil {
			continue
		}
		if why := w.Replay.FromInputs; why != "" && !said[w.Replay.Log] {
			said[w.Replay.Log] = true
			fmt.Fprintf(stderr, "authzbench: inputs file %s is an OPA decision log (%s): replayed as one, a workload per decision path; --decision-log (decision_log in a scenario) names a log outright\n",
				w.Replay.Log, why)
		}
		if n := w.Replay.Repeated; n > 0 && !said["repeated "+w.Replay.Log] {
			said["repeated "+w.Replay.Log] = true
			fmt.Fprintf(stderr, "authzbench: warning: %s: %d %s a decision_id an earlier event had (first at %s): a log uploaded or copied twice? Each is replayed\n",
				w.Replay.Log, n, plural(n, "event repeats", "events repeat"), w.Replay.RepeatedFirst)
		}
		r, err := replay.Impact(ctx, plan.Prepared, w)
		if err != nil {
			return nil, err
		}
		replay.Print(stdout, r, flipsShown)
		out = append(out, r)
		targets := 0
		for _, t := range plan.Scenario.Targets {
			if plan.Scenario.Skipped(w.Name, t.Name) == "" {
				targets++
			}
		}
		sayLongReplay(stderr, w, targets*plan.Scenario.Repeat)
	}
	return out, nil
}

// longReplay is how long a paced replay may last before the user is told, ahead of the load:
// the ten minutes a closed loop's request budget is bounded by.
const longReplay = 10 * time.Minute

// sayLongReplay tells the user, before any load, how long a long paced replay will take: a
// log with a stray early timestamp can ask for years, which nothing else would say until the
// run never ended. turns is how many times the schedule runs (targets x repetitions).
func sayLongReplay(stderr io.Writer, w *workload.Workload, turns int) {
	if w.Replay.Speed == 0 {
		return
	}
	r, err := scenario.Paced(load.Spec{}, w).ReplayOf(w.Inputs)
	if err != nil || r.Window() <= longReplay {
		return // refused while the scenario was resolved, or short
	}
	all := ""
	if turns > 1 {
		all = fmt.Sprintf(", %s for its %d turns", lasting(time.Duration(turns)*r.Window()), turns)
	}
	shorten := "; --max-gap shortens its long pauses"
	if r.GapsShortened > 0 {
		shorten = ""
	}
	fmt.Fprintf(stderr, "authzbench: warning: replay %s at %s× lasts %s a turn%s (its %d events span %s); a higher --speed quickens it%s; Ctrl-C keeps what was measured\n",
		w.Name, strconv.FormatFloat(w.Replay.Speed, 'g', -1, 64), lasting(r.Window()), all, r.Events, lasting(r.Span), shorten)
}

// lasting is a long duration in the unit a reader takes in: hours, days or years.
func lasting(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d < 0: // past Go's longest duration
		return "more than 292 years"
	case d >= 365*day:
		return fmt.Sprintf("%.1f years", d.Hours()/(365.25*24))
	case d >= 2*day:
		return fmt.Sprintf("%.1f days", d.Hours()/24)
	}
	return d.Round(time.Second).String()
}

// checkReplayFlags refuses --speed and --max-gap where they cannot apply: without a decision
// log, or beside the flags of any other schedule, which the paced replay would silently
// replace. The pace itself travels with the log's workloads (userSpec), as a scenario file's
// speed does.
func checkReplayFlags(fl *pflag.FlagSet, f runFlags) error {
	if !fl.Changed("speed") {
		if fl.Changed("max-gap") {
			return errors.New("--max-gap applies to a paced replay: give --speed with it")
		}
		return nil
	}
	if f.decisionLog == "" && f.inputs == "" {
		if f.file != "" {
			return errors.New("--speed replays a decision log at its recorded pace: in a scenario file give speed in the decision log's workload entry")
		}
		return errors.New("--speed replays a decision log at its recorded pace: give --decision-log FILE")
	}
	for _, other := range []string{"workload", "rate", "rates", "stages", "load-points", "workers", "requests", "duration", "warmup"} {
		if fl.Changed(other) {
			return fmt.Errorf("--speed and --%s: a paced replay sends each logged event once, at its recorded time, over the log's span; drop --%s", other, other)
		}
	}
	s := load.ReplaySettings{Speed: f.speed, MaxGap: f.maxGap}
	if err := s.Check(); err != nil {
		return fmt.Errorf("--speed/--max-gap: %w", err)
	}
	return nil
}
