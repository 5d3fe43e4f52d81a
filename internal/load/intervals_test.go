package load

import (
	"context"
	"testing"
	"time"
)

// A ramp accounted interval by interval: each interval is due the sends whose intended times
// fall in it (0 to 1000/s over 1 s is ⌈N(t)⌉ = 32, 125, 282 and 500 sends by each quarter), every
// due send is sent or unsent in the interval it was due in, and the intervals add up to the
// run's schedule. The one connection stalls from send 200 (due at 632 ms) until long after the
// window, so the last quarter's sends never go out and are charged there, not elsewhere.
func TestIntervalsAccountForEveryDueSend(t *testing.T) {
	if testing.Short() {
		t.Skip("2 s of load")
	}
	forEachEngine(t, intervalsAccountForEveryDueSend)
}

func intervalsAccountForEveryDueSend(t *testing.T, e openEngine) {
	stages, err := ParseStages("1s:0-1000")
	if err != nil {
		t.Fatal(err)
	}
	target := &stallingTarget{stallFrom: 200, stallUntil: time.Now().Add(1800 * time.Millisecond)}
	spec := Spec{Stages: stages, Connections: 1, Duration: time.Second, Warmup: 100 * time.Millisecond,
		Timeout: 50 * time.Millisecond, Intervals: 250 * time.Millisecond}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	out := spec.Run(context.Background(), e.serve(t, target), inputs(1000), nil)
	if out.Stopped != nil {
		t.Fatal(out.Stopped)
	}
	if len(out.Intervals) != 4 {
		t.Fatalf("%d intervals, want 4: %+v", len(out.Intervals), out.Intervals)
	}
	var sum Schedule
	for i, iv := range out.Intervals {
		t.Logf("interval %d [%s, %s): due %d sent %d unsent %d ok %d errors %d late %d", i, iv.From, iv.To, iv.Due, iv.Sent, iv.Unsent, iv.OK, iv.Errors, iv.Late)
		if want := []int64{32, 93, 157, 218}[i]; iv.Due != want {
			t.Errorf("interval %d due %d sends, want %d", i, iv.Due, want)
		}
		if iv.Sent+iv.Unsent != iv.Due {
			t.Errorf("interval %d: sent %d + unsent %d != due %d", i, iv.Sent, iv.Unsent, iv.Due)
		}
		if got := iv.Latency.TotalCount(); got != iv.OK+iv.Unsent {
			t.Errorf("interval %d: latency holds %d, want ok %d + unsent %d", i, got, iv.OK, iv.Unsent)
		}
		sum.Intended += iv.Due
		sum.Sent += iv.Sent
		sum.Unsent += iv.Unsent
		sum.Late += iv.Late
		sum.GeneratorLate += iv.GeneratorLate
	}
	sum.Sender = out.Schedule.Sender // the run's, not a count the intervals add up
	if sum != *out.Schedule {
		t.Errorf("intervals add up to %+v, the run's schedule is %+v", sum, *out.Schedule)
	}
	if first := out.Intervals[0]; first.Unsent != 0 || first.OK != first.Due {
		t.Errorf("first interval, before the stall: %+v, want every send ok", first)
	}
	if last := out.Intervals[3]; last.Sent != 0 || last.Unsent != last.Due {
		t.Errorf("last interval, in the stall: sent %d unsent %d of %d due, want all unsent", last.Sent, last.Unsent, last.Due)
	}
}
