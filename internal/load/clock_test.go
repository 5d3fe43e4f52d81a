package load

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// The clock never lets a send out before it is due, whichever way it waits: at GOMAXPROCS 1 a
// periodic timer for a constant rate (a segment's period included) and a timer armed for each
// send of a ramp; with more slots a sleep. This is the one place the pacer meets real time; how
// late it may be on a busy machine is the open-loop tests' business.
func TestPacerClockNeverEarly(t *testing.T) {
	st, err := ParseStages("30ms:2000-8000,1s:8000")
	if err != nil {
		t.Fatal(err)
	}
	ramp, err := NewStages(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{1, 2} {
		for _, pl := range []plan{newPlan(mustConstant(2000), Segment{}), newPlan(mustConstant(6000), Segment{Index: 2, Count: 3}), newPlan(mustConstant(600), Segment{Index: 1, Count: 2}), newPlan(ramp, Segment{})} {
			t.Run(fmt.Sprintf("GOMAXPROCS %d/%v %s", procs, pl.pacer, pl.seg), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				start := time.Now().Add(5 * time.Millisecond)
				clock, err := newPacerClock(start, pl)
				if err != nil {
					t.Fatal(err)
				}
				defer clock.close()
				const sends = 100
				for j := range int64(sends) {
					due := pl.due(j)
					if !clock.waitFor(j, due) {
						t.Fatalf("send %d: the clock stopped", j)
					}
					if now := time.Since(start); now < due {
						t.Fatalf("send %d let out at %s, before it was due at %s", j, now, due)
					}
				}
				// Late by any margin is a busy machine's doing; seconds late is a clock that lost sends.
				if late := time.Since(start) - pl.due(sends-1); late > 2*time.Second {
					t.Errorf("the last send let out %s after it was due", late)
				}
				clock.stop()
				if clock.waitFor(1e9, time.Hour) {
					t.Error("a stopped clock waited on")
				}
			})
		}
	}
}
