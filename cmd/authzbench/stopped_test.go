package main

import (
	"context"
	"errors"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// "interrupted" marks a result whose measurements were cut short, not one where a target failed
// to start: that run measured nothing and carries its own error.
func TestInterruptedMarksOnlyRunsThatStarted(t *testing.T) {
	done := result.Run{Target: "opa/server", Repetitions: make([]result.Repetition, 3)}
	cut := result.Run{Target: "opa/inproc", Repetitions: make([]result.Repetition, 1), Partial: true, Error: "run stopped: interrupted"}
	failed := result.Run{Target: "cedar/server", Error: "start cedar/server for workload rbac: port in use"}
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
		{"Ctrl-C while the first target started", cancelled, []result.Run{failed}, errors.New(failed.Error), false, "interrupted by interrupt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := &result.Document{Runs: tc.runs}
			markStopped(tc.ctx, doc, tc.err)
			if doc.Interrupted != tc.interrupted || doc.StopReason != tc.reason {
				t.Errorf("interrupted %t, reason %q; want %t, %q", doc.Interrupted, doc.StopReason, tc.interrupted, tc.reason)
			}
		})
	}
}
