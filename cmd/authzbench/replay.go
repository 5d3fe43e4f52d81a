package main

import (
	"context"
	"io"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/replay"
	"github.com/authzbench/authzbench/internal/result"
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
