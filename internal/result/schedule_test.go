package result

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// Every load a document records is one schedule, which exactly one kind recognises; a load none
// recognises reads as an unknown schedule, never as another one.
func TestEveryLoadIsOneSchedule(t *testing.T) {
	plain := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, tc := range []struct {
		load       Load
		kind, key  string
		label      string
		rate       float64
		recognised int
	}{
		{Load{Model: ClosedLoop, Workers: 8}, "workers", "closed 8", "8 workers", 0, 1},
		// Files written before the model was recorded read as the closed loop.
		{Load{Workers: 4}, "workers", "closed 4", "4 workers", 0, 1},
		{Load{Model: OpenLoop, Rate: 2000, Connections: 64}, "rate", "open 2000 64", "2000/s", 2000, 1},
		{Load{Model: OpenLoop, Stages: "30s:0-2000", Connections: 64}, "stages", "open stages 30s:0-2000 64", "stages 0→2000/30s", 0, 1},
		{Load{Model: OpenLoop, Connections: 64, Replay: &LoadReplay{Events: 200, SpanS: 1.5, Speed: 2}},
			"replay", "open replay 200events:1.5s:speed2 64", "replay 200 events/1.5s at 2×", 0, 1},
		{Load{Model: OpenLoop, Connections: 64}, "unknown", "open unknown 64", "an unknown schedule", 0, 0},
		{Load{Model: OpenLoop, Connections: 64, Custom: &CustomSchedule{Kind: "not registered", Settings: json.RawMessage(`{}`)}},
			"unknown", "open unknown 64", "an unknown schedule", 0, 0},
	} {
		t.Run(tc.key, func(t *testing.T) {
			n := 0
			for _, name := range ScheduleKinds() {
				if k := scheduleKinds[name]; k.Of != nil && tc.load.Custom == nil {
					if _, ok := k.Of(tc.load); ok {
						n++
					}
				}
			}
			if n != tc.recognised {
				t.Errorf("%d kinds recognise the load, want %d", n, tc.recognised)
			}
			s := tc.load.Schedule()
			if s.Kind() != tc.kind || tc.load.Key().String() != tc.key || s.Label(plain) != tc.label {
				t.Errorf("kind %s, key %q, label %q; want %s, %q, %q", s.Kind(), tc.load.Key().String(), s.Label(plain), tc.kind, tc.key, tc.label)
			}
			if rate, ok := s.Rate(); rate != tc.rate || ok != (tc.rate != 0) {
				t.Errorf("rate %g (%v), want %g", rate, ok, tc.rate)
			}
			if strings.ContainsAny(s.Value(plain), " /") {
				t.Errorf("value %q is no one word of a name", s.Value(plain))
			}
		})
	}
}

// Merge asks the schedule for the setting the runs must share: a replay at another speed is
// another load, and a rate is not stages.
func TestMergeComparesTheSchedules(t *testing.T) {
	open := func(l Load) *Document {
		d := docOf(syntheticRun(t, 1, uniform(1000, 100_000, 100), nil, []int64{80e3}, []int64{20e3}))
		l.Model, l.Connections, l.DurationS = OpenLoop, 4, 1
		d.Runs[0].Load = l
		return d
	}
	replay := func(speed float64) Load {
		return Load{Replay: &LoadReplay{Events: 10, SpanS: 1, Speed: speed}}
	}
	for _, tc := range []struct {
		name        string
		first, then Load
		want        string
	}{
		{"replay speeds", replay(1), replay(2), "load.replay is 10events:1s:speed2 in document 2, 10events:1s:speed1 in document 1"},
		{"a rate and stages", Load{Rate: 2000}, Load{Stages: "30s:0-2000"}, "load.stages is 30s:0-2000 in document 2, load.rate 2000 in document 1"},
		{"two rates", Load{Rate: 2000}, Load{Rate: 1000}, "load.rate is 1000 in document 2, 2000 in document 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Merge(open(tc.first), open(tc.then))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Merge = %v\nwant an error saying %q", err, tc.want)
			}
		})
	}
	if _, err := Merge(open(replay(2)), open(replay(2))); err != nil {
		t.Errorf("two measurements of one replay: %v", err)
	}
}
