package load

import (
	"context"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/target"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// stallingTarget answers after its service time, except that every period it stops answering
// for pause: requests arriving then wait until the pause is over, like a server in a long GC.
type stallingTarget struct {
	fakeTarget
	t0            time.Time
	service       time.Duration
	period, pause time.Duration
}

func (s *stallingTarget) Worker() target.Decider { return s }

func (s *stallingTarget) Decide(ctx context.Context, i int) verify.Outcome {
	if s.period > 0 {
		since := time.Since(s.t0)
		if into := since % s.period; into < s.pause {
			time.Sleep(s.pause - into)
		}
	}
	time.Sleep(s.service)
	return verify.Outcome{Kind: verify.Decided, Allow: i%2 == 0}
}

// Ground truth for coordinated omission: a server that pauses 1 s every 5 s, driven at
// 200 req/s for 20 s. A fifth of the requests arrive during a pause and wait up to 1 s, so the
// true p99 is about 0.95 s and p90 about 0.5 s. Measured from the actual send instead, with 8
// connections only 8 requests per pause are seen waiting, and the stall nearly disappears.
func TestOpenLoopSeesAServerStall(t *testing.T) {
	if testing.Short() {
		t.Skip("20 s of load")
	}
	s := &stallingTarget{t0: time.Now(), service: 200 * time.Microsecond, period: 5 * time.Second, pause: time.Second}
	out := Spec{Rate: 200, Connections: 8, Duration: 20 * time.Second}.Run(context.Background(), s, inputs(10), nil)
	if out.Stopped != nil {
		t.Fatal(out.Stopped)
	}
	corrected := out.Recorder.OK
	p99, p90 := time.Duration(corrected.ValueAtQuantile(99)), time.Duration(corrected.ValueAtQuantile(90))
	uncorrected := time.Duration(out.Recorder.Uncorrected.ValueAtQuantile(99))
	t.Logf("p90 %s, p99 %s, uncorrected p99 %s, sends %d of %d, late %d",
		p90, p99, uncorrected, out.Schedule.Sent, out.Schedule.Intended, out.Schedule.Late)
	if p99 < 800*time.Millisecond {
		t.Errorf("p99 %s, want at least 0.8 s (truth about 0.95 s)", p99)
	}
	if p90 < 400*time.Millisecond {
		t.Errorf("p90 %s, want at least 0.4 s (truth about 0.5 s)", p90)
	}
	if uncorrected > p99/2 {
		t.Errorf("uncorrected p99 %s should look much smaller than the corrected %s", uncorrected, p99)
	}
	if sent := out.Schedule.Sent; sent < 3800 || sent > 4000 {
		t.Errorf("%d sends, want about 4000 (200/s for 20 s)", sent)
	}

	// A closed loop with the same 8 connections hides the stall almost entirely.
	s.t0 = time.Now()
	closed := Spec{Workers: 8, Duration: 5 * time.Second}.Run(context.Background(), s, inputs(10), nil)
	closedP99 := time.Duration(closed.Recorder.OK.ValueAtQuantile(99))
	t.Logf("closed loop p99 %s", closedP99)
	if closedP99 > p99/2 {
		t.Errorf("closed-loop p99 %s; expected it to hide the stall (open loop: %s)", closedP99, p99)
	}
}

func TestOpenLoopKnownServiceTime(t *testing.T) {
	s := &stallingTarget{service: 2 * time.Millisecond}
	out := Spec{Rate: 200, Connections: 8, Duration: 3 * time.Second, Warmup: 500 * time.Millisecond}.
		Run(context.Background(), s, inputs(10), nil)
	p50 := time.Duration(out.Recorder.OK.ValueAtQuantile(50))
	t.Logf("p50 %s, uncorrected p50 %s, lateness p50 %s p90 %s p99 %s", p50, time.Duration(out.Recorder.Uncorrected.ValueAtQuantile(50)),
		time.Duration(out.Recorder.Lateness.ValueAtQuantile(50)), time.Duration(out.Recorder.Lateness.ValueAtQuantile(90)), time.Duration(out.Recorder.Lateness.ValueAtQuantile(99)))
	if p50 < 2*time.Millisecond || p50 > 2600*time.Microsecond {
		t.Errorf("p50 %s for a 2 ms service time, want 2.0 to 2.6 ms", p50)
	}
	// On a quiet machine the pacer is late for well under 1 % of sends; tests share the cores
	// with other packages' tests, so this only guards against a broken pacer.
	if out.Schedule.GeneratorLate*10 > out.Schedule.Intended {
		t.Errorf("the pacer was late for more than 10 %% of 200 req/s: %+v", out.Schedule)
	}
	if out.Recorder.Requests() != uint64(out.Schedule.Sent) || out.Schedule.Intended != 600 {
		t.Errorf("requests %d, schedule %+v; want 600 intended", out.Recorder.Requests(), out.Schedule)
	}
}

func TestOpenLoopMissedRate(t *testing.T) {
	s := &stallingTarget{service: time.Millisecond}
	// One connection to a 1 ms server cannot send 5000 a second.
	out := Spec{Rate: 5000, Connections: 1, Duration: time.Second}.Run(context.Background(), s, inputs(10), nil)
	if !out.Schedule.Missed() {
		t.Errorf("not marked missed: %+v, achieved %.0f/s", out.Schedule, out.Schedule.Achieved(time.Second))
	}
	if out.Schedule.Sent >= out.Schedule.Intended {
		t.Errorf("sent %d of %d", out.Schedule.Sent, out.Schedule.Intended)
	}
}

func TestOpenLoopValidate(t *testing.T) {
	for _, s := range []Spec{
		{Rate: 100, Duration: time.Second},
		{Rate: -1, Connections: 1, Duration: time.Second},
		{Rate: 100, Connections: 1, Requests: 10},
	} {
		if s.Validate() == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	if err := (Spec{Rate: 100, Connections: 4, Duration: time.Second}).Validate(); err != nil {
		t.Error(err)
	}
	_ = workload.Unverified
}
