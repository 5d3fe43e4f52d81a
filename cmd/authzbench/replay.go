package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/replay"
	"github.com/authzbench/authzbench/internal/result"
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
		r, err := replay.Impact(ctx, plan.Prepared, w)
		if err != nil {
			return nil, err
		}
		replay.Print(stdout, r, flipsShown)
		out = append(out, r)
	}
	return out, nil
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
