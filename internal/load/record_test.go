package load

import (
	"strconv"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/workload"
)

// Each model records its own schedule, and the result reads back the schedule that ran: its
// kind, its words, and the window a report divides by. A warm-up's hold before stages is sent
// but not recorded as asked.
func TestEveryModelRecordsTheScheduleItRan(t *testing.T) {
	ms := time.Millisecond
	inputs := []workload.Input{{Offset: 0}, {Offset: 500 * ms}, {Offset: 1500 * ms}}
	stages := []Stage{{Over: 30 * time.Second, From: 0, To: 2000}, {Over: time.Minute, From: 2000, To: 2000}}
	for _, tc := range []struct {
		name       string
		spec       Spec
		kind       string
		label      string
		durationS  float64
		warmupS    float64
		connection int
	}{
		{"closed loop", Spec{Workers: 8, Duration: 10 * time.Second, Warmup: 2 * time.Second}, "workers", "8 workers", 10, 2, 0},
		{"constant rate", Spec{Rate: 2000, Connections: 64, Duration: 10 * time.Second, Warmup: time.Second}, "rate", "2000/s", 10, 1, 64},
		{"stages after a warm-up", Spec{Stages: stages, Connections: 64, Duration: Total(stages), Warmup: 5 * time.Second},
			"stages", "stages 0→2000/30s, 2000/1m0s", 90, 5, 64},
		{"replay", Spec{Replay: &ReplaySettings{Speed: 2}, Connections: 16, Duration: time.Hour, Warmup: time.Second},
			"replay", "replay 3 events/1.5s at 2×", (750*ms + time.Nanosecond).Seconds(), 0, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l result.Load
			tc.spec.Record(&l, inputs)
			if l.Open() != tc.spec.Open() {
				t.Errorf("recorded open %v, the spec is open %v", l.Open(), tc.spec.Open())
			}
			s := l.Schedule()
			plain := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
			if s.Kind() != tc.kind || s.Label(plain) != tc.label {
				t.Errorf("read back as %s %q, want %s %q", s.Kind(), s.Label(plain), tc.kind, tc.label)
			}
			if l.DurationS != tc.durationS || l.WarmupS != tc.warmupS || l.Connections != tc.connection {
				t.Errorf("window %gs, warm-up %gs, connections %d; want %gs, %gs, %d", l.DurationS, l.WarmupS, l.Connections, tc.durationS, tc.warmupS, tc.connection)
			}
		})
	}
}
