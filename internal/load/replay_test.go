package load

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestReplayDue(t *testing.T) {
	ms := time.Millisecond
	offsets := []time.Duration{0, 1 * ms, 3 * ms, 3 * ms, 10 * time.Second, 10*time.Second + 1*ms}
	for _, tc := range []struct {
		name     string
		s        ReplaySettings
		want     []time.Duration
		shortend int
	}{
		{"as recorded", ReplaySettings{Speed: 1}, offsets, 0},
		{"twice as fast", ReplaySettings{Speed: 2}, []time.Duration{0, ms / 2, 3 * ms / 2, 3 * ms / 2, 5 * time.Second, 5*time.Second + ms/2}, 0},
		// 1/3 is no binary fraction: the decimal speed is read exactly, and due times round down.
		{"a third as fast", ReplaySettings{Speed: 0.3}, []time.Duration{0, 3333333, 10 * ms, 10 * ms, 33333333333, 33336666666}, 0},
		{"a long gap shortened", ReplaySettings{Speed: 1, MaxGap: time.Second}, []time.Duration{0, ms, 3 * ms, 3 * ms, 3*ms + time.Second, 4*ms + time.Second}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReplay(offsets, tc.s)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.want {
				if got := r.Due(int64(k)); got != want {
					t.Errorf("send %d due at %d, want %d", k, got, want)
				}
			}
			if r.Due(int64(len(offsets))) != math.MaxInt64 {
				t.Error("a send after the last event is due")
			}
			if r.GapsShortened != tc.shortend || r.Span != offsets[len(offsets)-1] || r.Events != len(offsets) {
				t.Errorf("shortened %d, span %s, events %d", r.GapsShortened, r.Span, r.Events)
			}
			// The window holds every event, and nothing after it.
			last := tc.want[len(tc.want)-1]
			if r.Window() != last+time.Nanosecond || SendsBefore(r, r.Window()) != int64(len(offsets)) {
				t.Errorf("window %s holds %d sends", r.Window(), SendsBefore(r, r.Window()))
			}
		})
	}
	for _, bad := range []ReplaySettings{{Speed: 0}, {Speed: -1}, {Speed: math.Inf(1)}, {Speed: 1, MaxGap: -1}} {
		if _, err := NewReplay(offsets, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// A pace whose schedule would pass what a run can last is refused, where its due times would
// otherwise wrap round (speed 1e-300 sent 300 events at once and called it a replay).
func TestReplayPastWhatCanBeScheduled(t *testing.T) {
	span := 10 * time.Second
	for _, tc := range []struct {
		name    string
		offsets []time.Duration
		s       ReplaySettings
		ok      bool
	}{
		{"a tiny speed", []time.Duration{0, span}, ReplaySettings{Speed: 1e-300}, false},
		{"just past the bound", []time.Duration{0, span}, ReplaySettings{Speed: float64(span) / float64(MaxReplayWindow+time.Second)}, false},
		{"a century and less", []time.Duration{0, MaxReplayWindow}, ReplaySettings{Speed: 1}, true},
		{"a longest duration, shortened", []time.Duration{0, math.MaxInt64}, ReplaySettings{Speed: 1, MaxGap: time.Hour}, true},
		{"one event, however slow", []time.Duration{0}, ReplaySettings{Speed: 1e-300}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReplay(tc.offsets, tc.s)
			if !tc.ok {
				if err == nil {
					t.Fatalf("accepted: window %s", r.Window())
				}
				if !strings.Contains(err.Error(), "more than a run may (100 years)") {
					t.Errorf("error %q does not say the bound", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w := r.Window(); w <= 0 || w > MaxReplayWindow+time.Nanosecond {
				t.Errorf("window %s", w)
			}
		})
	}
}
