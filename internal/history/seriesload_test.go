package history

import (
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// A series is keyed by its load's schedule: the closed loop and a constant rate as their series
// were first stored (so a store keeps adding to them), and stages and replays each as their own
// series, where all of them once read "open 0 64" and were one.
func TestSeriesAreKeyedByTheSchedule(t *testing.T) {
	tb := "tb"
	run := func(l result.Load) *result.Run { return &result.Run{Workload: "rbac", Target: "opa/server", Load: l} }
	for _, tc := range []struct {
		load result.Load
		key  string
	}{
		{result.Load{Model: result.ClosedLoop, Workers: 8}, "rbac|opa/server|closed 8|tb"},
		{result.Load{Model: result.OpenLoop, Rate: 2000, Connections: 64}, "rbac|opa/server|open 2000 64|tb"},
		{result.Load{Model: result.OpenLoop, Rate: 0.5, Connections: 64}, "rbac|opa/server|open 0.5 64|tb"},
		{result.Load{Model: result.OpenLoop, Stages: "30s:0-2000", Connections: 64}, "rbac|opa/server|open stages 30s:0-2000 64|tb"},
		{result.Load{Model: result.OpenLoop, Connections: 64, Replay: &result.LoadReplay{Events: 10, SpanS: 1, Speed: 2}},
			"rbac|opa/server|open replay 10events:1s:speed2 64|tb"},
	} {
		if got := seriesOf(run(tc.load), tb).Key; got != tc.key {
			t.Errorf("series key %q, want %q", got, tc.key)
		}
	}
}
