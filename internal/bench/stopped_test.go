package bench

import (
	"context"
	"errors"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// "interrupted" marks a result whose measurements were cut short, or whose scenario Ctrl-C
// stopped before it finished, wherever it fell; not one where a target failed to start by
// itself: that run measured nothing and carries its own error.
func TestInterruptedMeansMarked(t *testing.T) {
	done := result.Run{Target: "opa/server", Repetitions: make([]result.Repetition, 3)}
	cut := result.Run{Target: "opa/inproc", Repetitions: make([]result.Repetition, 1), Partial: true, Error: "run stopped: interrupted"}
	failed := result.Run{Target: "cedar/server", Error: "start cedar/server for workload rbac: port in use"}
	cutStarting := result.Run{Target: "opa/server", Error: "run stopped: interrupted by interrupt while starting opa/server for workload rbac"}
	cancelled, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted by interrupt"))
	for _, tc := range []struct {
		name        string
		ctx         context.Context
		runs        []result.Run
		err         error
		interrupted bool
		reason      string
	}{
		{"finished", context.Background(), []result.Run{done}, nil, false, ""},
		{"a target failed to start after another finished", context.Background(), []result.Run{done, failed}, errors.New(failed.Error), false, failed.Error},
		{"Ctrl-C during a turn", cancelled, []result.Run{done, cut}, errors.New("run stopped: interrupted"), true, "interrupted by interrupt"},
		{"Ctrl-C while the first target started", cancelled, []result.Run{cutStarting}, errors.New(cutStarting.Error), true, "interrupted by interrupt"},
		{"Ctrl-C while the second target started", cancelled, []result.Run{done, cutStarting}, errors.New(cutStarting.Error), true, "interrupted by interrupt"},
		{"Ctrl-C in the warm-up of a sweep's second step", cancelled, []result.Run{done}, &StoppedError{Cause: errors.New("interrupted by interrupt")}, true, "interrupted by interrupt"},
		{"Ctrl-C after the scenario finished", cancelled, []result.Run{done}, nil, false, ""},
		{"a server died, no Ctrl-C", context.Background(), []result.Run{done, cut}, errors.New("run stopped: server exited"), true, "run stopped: server exited"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := &result.Document{Runs: tc.runs}
			MarkStopped(tc.ctx, doc, tc.err)
			if doc.Interrupted != tc.interrupted || doc.StopReason != tc.reason {
				t.Errorf("interrupted %t, reason %q; want %t, %q", doc.Interrupted, doc.StopReason, tc.interrupted, tc.reason)
			}
		})
	}
}
