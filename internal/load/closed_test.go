package load

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// fakeTarget answers allow for even inputs after an optional delay, and counts what it was asked.
type fakeTarget struct {
	delay   time.Duration
	calls   atomic.Int64
	mu      sync.Mutex
	seen    map[int]int
	died    chan struct{}
	diedErr error
}

func (f *fakeTarget) Start(context.Context, *workload.Workload) error { return nil }
func (f *fakeTarget) Worker() kinds.Decider                           { return f }
func (f *fakeTarget) Died() <-chan struct{}                           { return f.died }
func (f *fakeTarget) Err() error                                      { return f.diedErr }
func (f *fakeTarget) Info() kinds.Info                                { return kinds.Info{} }
func (f *fakeTarget) Stop(context.Context) error                      { return nil }

func (f *fakeTarget) Decide(ctx context.Context, i int) verify.Outcome {
	f.calls.Add(1)
	f.mu.Lock()
	f.seen[i]++
	f.mu.Unlock()
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return verify.Outcome{Kind: verify.TimedOut}
		}
	}
	return verify.Outcome{Kind: verify.Decided, Allow: i%2 == 0}
}

func inputs(n int) []workload.Input {
	in := make([]workload.Input, n)
	for i := range in {
		in[i] = workload.Input{Expect: workload.ExpectDeny}
		if i%2 == 0 {
			in[i].Expect = workload.ExpectAllow
		}
	}
	return in
}

// Closed-loop shards run their share of the workers under their numbers in the whole: two
// shards of a 3-worker, 300-request budget send 300 requests between them, every input as often
// as one unsharded run would (30 times), the first shard with two workers, the second with one.
func TestClosedLoopShardsSendWhatTheWholeWould(t *testing.T) {
	f := &fakeTarget{seen: map[int]int{}}
	var total uint64
	for i, want := range []uint64{200, 100} {
		spec := Spec{Workers: 3, Requests: 300, Segment: Segment{Index: i + 1, Count: 2}}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		out := spec.Run(context.Background(), f, inputs(10), nil)
		if out.Stopped != nil {
			t.Fatal(out.Stopped)
		}
		if got := out.Recorder.Requests(); got != want {
			t.Errorf("shard %d/2 recorded %d, want %d: its workers' share of the budget", i+1, got, want)
		}
		total += out.Recorder.Requests()
	}
	if total != 300 || f.calls.Load() != 300 {
		t.Errorf("shards recorded %d, asked %d; want the whole's 300", total, f.calls.Load())
	}
	for i := range 10 {
		if f.seen[i] != 30 {
			t.Errorf("input %d sent %d times, want 30 as unsharded (%v)", i, f.seen[i], f.seen)
			break
		}
	}
}

func TestRequestBudgetIsExactAndRoundRobin(t *testing.T) {
	f := &fakeTarget{seen: map[int]int{}}
	out := Spec{Workers: 3, Requests: 300}.Run(context.Background(), f, inputs(10), nil)
	if out.Stopped != nil {
		t.Fatal(out.Stopped)
	}
	if got := out.Recorder.Requests(); got != 300 || out.Recorder.Counts[verify.OK] != 300 {
		t.Errorf("recorded %d (ok %d), want 300", got, out.Recorder.Counts[verify.OK])
	}
	if f.calls.Load() != 300 {
		t.Errorf("target asked %d times, want 300: no warm-up was requested", f.calls.Load())
	}
	// 3 workers stepping by 3 through 10 inputs visit every input equally: 30 each.
	for i := range 10 {
		if f.seen[i] != 30 {
			t.Errorf("input %d sent %d times, want 30 (%v)", i, f.seen[i], f.seen)
			break
		}
	}
}

// More workers than requests: the workers whose share is zero must send nothing measured and
// return, not run unbounded until MaxTime (a zero share once meant "no budget").
func TestRequestBudgetSmallerThanWorkers(t *testing.T) {
	for _, warmup := range []time.Duration{0, 20 * time.Millisecond} {
		f := &fakeTarget{seen: map[int]int{}}
		start := time.Now()
		out := Spec{Workers: 4, Requests: 1, Warmup: warmup, MaxTime: 5 * time.Second}.Run(context.Background(), f, inputs(4), nil)
		if out.Stopped != nil {
			t.Fatalf("warm-up %s: %v", warmup, out.Stopped)
		}
		if got := out.Recorder.Requests(); got != 1 {
			t.Errorf("warm-up %s: recorded %d, want 1", warmup, got)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("warm-up %s: a one-request run took %s", warmup, took)
		}
	}
}

func TestWarmupIsDiscarded(t *testing.T) {
	f := &fakeTarget{seen: map[int]int{}, delay: time.Millisecond}
	out := Spec{Workers: 2, Requests: 20, Warmup: 100 * time.Millisecond}.Run(context.Background(), f, inputs(4), nil)
	if got := out.Recorder.Requests(); got != 20 {
		t.Errorf("recorded %d, want 20", got)
	}
	if f.calls.Load() <= 20 {
		t.Errorf("target asked %d times; the warm-up should have sent more than the 20 measured", f.calls.Load())
	}
}

func TestDurationBoundsTheRun(t *testing.T) {
	f := &fakeTarget{seen: map[int]int{}, delay: time.Millisecond}
	start := time.Now()
	out := Spec{Workers: 2, Duration: 200 * time.Millisecond}.Run(context.Background(), f, inputs(4), nil)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a 200 ms run took %s", took)
	}
	if out.Elapsed < 200*time.Millisecond || out.Recorder.Requests() == 0 {
		t.Errorf("elapsed %s with %d requests", out.Elapsed, out.Recorder.Requests())
	}
}

func TestRequestBudgetIsBoundedInTime(t *testing.T) {
	f := &fakeTarget{seen: map[int]int{}, delay: 10 * time.Millisecond}
	out := Spec{Workers: 1, Requests: 1_000_000, MaxTime: 100 * time.Millisecond}.Run(context.Background(), f, inputs(2), nil)
	if out.Stopped == nil {
		t.Error("a budget not reached within MaxTime must be reported")
	}
}

func TestCancelStopsAndKeepsWhatWasMeasured(t *testing.T) {
	f := &fakeTarget{seen: map[int]int{}, delay: time.Millisecond}
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("interrupted by test")) })
	out := Spec{Workers: 2, Duration: time.Minute}.Run(ctx, f, inputs(4), nil)
	if out.Stopped == nil || out.Stopped.Error() != "interrupted by test" {
		t.Fatalf("stopped: %v", out.Stopped)
	}
	if out.Recorder.Requests() == 0 || out.Recorder.ErrorCount() != 0 {
		t.Errorf("requests %d, errors %d: measured requests are kept, interrupted ones are not errors",
			out.Recorder.Requests(), out.Recorder.ErrorCount())
	}
}

// Workers also return when the run is stopped, so the run can find its workers done and its
// stop both at hand; which it takes first must not matter: a stopped run is always reported
// stopped, never as one whose budget was spent (CI saw an interrupted run written as whole
// once, a busy machine having kept the run's own goroutine off the CPU at the stop). Here the
// stop comes while the run's goroutine is away (reporting progress) until the workers are done:
// back, it has both at hand, and Go's select picks one at random.
func TestCancelIsReportedWhateverTheWorkersDoFirst(t *testing.T) {
	for try := range 12 {
		ctx, cancel := context.WithCancelCause(context.Background())
		away := func(Progress) {
			cancel(errors.New("interrupted by test"))
			time.Sleep(20 * time.Millisecond) // the workers see the stop and return meanwhile
		}
		out := Spec{Workers: 2, Duration: time.Minute}.Run(ctx, &fakeTarget{seen: map[int]int{}}, inputs(4), away)
		if out.Stopped == nil {
			t.Fatalf("try %d: a run stopped after its first progress report was reported whole", try)
		}
	}
	// A budget spent is a run whole, even when the stop comes as the last worker returns.
	ctx, cancel := context.WithCancelCause(context.Background())
	f := &fakeTarget{seen: map[int]int{}}
	out := Spec{Workers: 2, Requests: 100, MaxTime: time.Minute}.Run(ctx, f, inputs(4), nil)
	cancel(errors.New("interrupted by test"))
	if out.Stopped != nil || out.Recorder.Requests() != 100 {
		t.Errorf("a spent budget of 100: %d requests, stopped %v", out.Recorder.Requests(), out.Stopped)
	}
}

func TestTargetDeathStopsTheRun(t *testing.T) {
	f := &fakeTarget{seen: map[int]int{}, delay: time.Millisecond, died: make(chan struct{})}
	f.diedErr = errors.New("server exited")
	time.AfterFunc(50*time.Millisecond, func() { close(f.died) })
	out := Spec{Workers: 2, Duration: time.Minute}.Run(context.Background(), f, inputs(4), nil)
	if out.Stopped == nil || out.Stopped.Error() != "server exited" {
		t.Fatalf("stopped: %v", out.Stopped)
	}
}

func TestSplitQuota(t *testing.T) {
	got := splitQuota(10, 4)
	want := []int64{3, 3, 2, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("splitQuota(10, 4) = %v, want %v", got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := (Spec{Workers: 0, Duration: time.Second}).Validate(); err == nil {
		t.Error("zero workers accepted")
	}
	if err := (Spec{Workers: 1}).Validate(); err == nil {
		t.Error("neither duration nor requests accepted")
	}
	if err := (Spec{Workers: 1, Requests: 5, Warmup: -time.Second}).Validate(); err == nil {
		t.Error("negative warm-up accepted")
	}
	// More sockets than any open-file limit allows: refused before the load, not counted as
	// "too many open files" transport errors part-way.
	for _, s := range []Spec{{Workers: 1 << 31, Duration: time.Second}, {Rate: 10, Connections: 1 << 31, Duration: time.Second}} {
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "open files") {
			t.Errorf("%+v: err %v, want a refusal naming the open-file limit", s, err)
		}
	}
}
