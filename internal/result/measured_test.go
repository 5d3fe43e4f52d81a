package result

import (
	"strings"
	"testing"
)

// A run served nothing when it has no repetition, or one of them no ok response; it says which
// and why. A run that never started says so in its error instead.
func TestNothingServedSaysWhichRepetitionAndWhy(t *testing.T) {
	served := Repetition{Requests: 100, OK: 100, ElapsedS: 1}
	for _, tc := range []struct {
		name string
		run  Run
		want string // "" when something was served
	}{
		{"served", Run{Repetitions: []Repetition{served, served}}, ""},
		{"no repetition", Run{}, "no repetition measured anything"},
		{"never started", Run{Error: "start opa: exit 1"}, ""},
		{"a window shorter than a decision", Run{Load: Load{DurationS: 1e-9}, Repetitions: []Repetition{{ElapsedS: 0.0004}}},
			"its repetition served no decision: its 1ns window (--duration) ended before any decision was answered"},
		{"every response an error", Run{Repetitions: []Repetition{served, {Requests: 7, Errors: 7, ErrorClasses: map[string]uint64{"timeout": 2, "http_500": 5}}}},
			"repetition 2 of 2 served no decision: every one of its 7 responses was an error (http_500: 5, timeout: 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.run.NothingServed()
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("NothingServed() = %q, want %q", got, tc.want)
			}
		})
	}
}

// A repetition's req/s is a rate only over enough decisions: FewForRate sends due in open loop,
// FewForRate a worker in closed loop (a shard's own workers).
func TestShortWindowOfCountsDecisionsAgainstTheLoad(t *testing.T) {
	rep := func(requests uint64, elapsed float64) Repetition {
		return Repetition{Requests: requests, OK: requests, ElapsedS: elapsed}
	}
	for _, tc := range []struct {
		name string
		load Load
		reps []Repetition
		want *ShortWindow
	}{
		{"open loop, one send due", Load{Model: OpenLoop, Rate: 10}, []Repetition{rep(1, 0.05)}, &ShortWindow{Repetitions: 1, Fewest: 1, Needed: 10, WindowS: 0.05}},
		{"open loop, ten sends due", Load{Model: OpenLoop, Rate: 10}, []Repetition{rep(10, 1)}, nil},
		{"closed loop, 4 workers", Load{Model: ClosedLoop, Workers: 4}, []Repetition{rep(100, 1), rep(39, 0.3), rep(12, 0.1)},
			&ShortWindow{Repetitions: 2, Fewest: 12, Needed: 40, WindowS: 0.1}},
		{"a shard of 1 worker of 4", Load{Model: ClosedLoop, Workers: 4, ShardWorkers: 1}, []Repetition{rep(12, 0.1)}, nil},
		{"nothing served is not a short window", Load{Model: ClosedLoop, Workers: 1}, []Repetition{{ElapsedS: 0.001}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ShortWindowOf(tc.load, tc.reps)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("ShortWindowOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}
