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
	"github.com/authzbench/authzbench/internal/scenario"
)

// flipsShown is how many flipped decisions the terminal lists per path; the result file holds
// them all.
const flipsShown = 10

// replayImpacts finds, for each workload replayed from a decision log, what the policy does to
// the logged decisions, and prints it.
func replayImpacts(ctx context.Context, plan *bench.Plan, stdout io.Writer) ([]result.Replay, error) {
	var out []result.Replay
	for _, w := range plan.Workloads {
		if w.Replay == nil {
			continue
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

// replayOverride makes the load the replay schedule when --speed is given, refusing the flags
// of any other schedule, which the replay would silently replace.
func replayOverride(fl *pflag.FlagSet, f runFlags, o *scenario.Overrides) error {
	if !fl.Changed("speed") {
		if fl.Changed("max-gap") {
			return errors.New("--max-gap applies to a paced replay: give --speed with it")
		}
		return nil
	}
	if f.decisionLog == "" {
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
	o.Replay = &s
	return nil
}
