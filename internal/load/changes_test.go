package load

import (
	"context"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/change/changetest"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// lagged is a target over the ground-truth service, in process: it takes writes, and its
// answers name their version when named says so.
type lagged struct {
	noWatchTarget
	svc   *changetest.Service
	named bool
}

type noWatchTarget struct{}

func (noWatchTarget) Start(context.Context, *workload.Workload) error { return nil }
func (noWatchTarget) Died() <-chan struct{}                           { return nil }
func (noWatchTarget) Err() error                                      { return nil }
func (noWatchTarget) Info() kinds.Info                                { return kinds.Info{} }
func (noWatchTarget) Stop(context.Context) error                      { return nil }

func (l *lagged) Worker() kinds.Decider { return l }

func (l *lagged) Decide(_ context.Context, i int) verify.Outcome {
	allow, version, _ := l.svc.Decide(i)
	// The rest of the service's time, after it decided: answers come back 7 to 13 ms after they
	// were decided, about 3 % of the lag, and a worker's next question comes that long after its
	// last, so that some arrive past the hold and are answered stale. Drawn, not fixed: a
	// closed-loop worker held to the end of one change's lag and then asking every 20 ms
	// exactly arrived again at the next change's acknowledgement, 400 ms on, was held again,
	// and so never asked its input while only the first change was visible: that change was
	// seen one change late (CI's race run once read half the changes so).
	time.Sleep(time.Duration(7+rand.IntN(7)) * time.Millisecond)
	return verify.Outcome{Kind: verify.Decided, Allow: allow, Versioned: l.named, Version: int64(version)}
}

func (l *lagged) Apply(_ context.Context, version int, _ change.Change) change.Ack {
	if err := l.svc.Apply(version); err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	return change.Ack{}
}

// flipping is a stream over 4 inputs (0 and 2 allowed, 1 and 3 denied at first): change k
// flips input k%4, so every change can be seen.
func flipping(t *testing.T, n int) *change.Stream {
	t.Helper()
	in := inputs(4)
	exp := make([]workload.Expect, len(in))
	now := make([]bool, len(in))
	for i, x := range in {
		exp[i], now[i] = x.Expect, x.Expect == workload.ExpectAllow
	}
	changes := make([]change.Change, n)
	for k := range changes {
		i := (k + 1) % 4
		now[i] = !now[i]
		changes[k] = change.Change{Sets: map[int]bool{i: now[i]}}
	}
	s, err := change.NewStream(exp, changes)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Against a service whose writes become visible a known lag after they are acknowledged, a run
// reads that lag as each change's time to visible, counts the stale answers the service logged,
// and counts as wrong, exactly, the answers naming a version the service never had.
func TestChangesAgainstGroundTruth(t *testing.T) {
	// 10 % of the lag outlasts the 10 ms the answers take after they are decided, and the time
	// until an input a change flips is asked again, on a loaded machine under -race too.
	const lag = 600 * time.Millisecond
	for _, c := range []struct {
		name  string
		named bool
		open  bool
		// served: sent over HTTP, so that the open loop's event loop judges, not its goroutines
		served bool
	}{{"closed loop, answers naming their version", true, false, false}, {"closed loop, answers known by their decision", false, false, false},
		{"open loop, answers naming their version", true, true, false}, {"open loop over HTTP, answers naming their version", true, true, true}} {
		t.Run(c.name, func(t *testing.T) {
			s := flipping(t, 40)
			// The hold must outlast the time from a request's sending to its arrival at the
			// service, or the service logs as stale an answer sent before the writer heard of the
			// acknowledgement, which no judge can call stale (CI's race run once saw 5 of 2,000
			// over HTTP with 5 ms). A closed loop's worker asks again 10 ms after an answer, so
			// there the hold stays under that, or every worker would be held past each change.
			hold := 5 * time.Millisecond
			if c.open {
				hold = 150 * time.Millisecond
			}
			svc := &changetest.Service{Stream: s, Lag: lag, Hold: hold}
			if c.named {
				svc.WrongEvery = 97
			}
			tg := &lagged{svc: svc, named: c.named}
			// 9 workers over the 4 inputs: worker k asks k, k+9, k+18 ..., so each asks every
			// input in turn (with 8, each asked one input only, and two workers held past a
			// change left theirs unasked until the next).
			spec := Spec{Workers: 9, Duration: 5 * time.Second, Timeout: time.Second,
				Changes: &Changes{Stream: s, Applier: tg, Rate: 2, Allowed: time.Second}}
			if c.open {
				spec.Workers, spec.Rate, spec.Connections = 0, 400, 128 // enough for the answers held up to a lag
			}
			var target kinds.Target = tg
			if c.served {
				target = serveOverHTTP(t, tg)
			}
			out := spec.Run(context.Background(), target, inputs(4), nil)
			if out.Stopped != nil {
				t.Fatal(out.Stopped)
			}
			if c.served && out.Schedule.Sender != loopSender() {
				t.Errorf("sent by %s, want %s", out.Schedule.Sender, loopSender())
			}
			ch := out.Changes
			logged := svc.Logged()
			verdicts := ch.Tally.Verdicts
			judged := verdicts[change.Fresh] + verdicts[change.Stale] + verdicts[change.StaleBeyond] + verdicts[change.Wrong]
			if judged != uint64(logged.Answers) || out.Recorder.Requests() != uint64(logged.Answers) {
				t.Fatalf("judged %d answers, recorded %d, the service gave %d", judged, out.Recorder.Requests(), logged.Answers)
			}
			wantStale := logged.StaleDiffering // known by its decision alone, a stale answer shows only when it differs
			if c.named {
				wantStale = logged.Stale
			}
			if got := verdicts[change.Stale] + verdicts[change.StaleBeyond]; got != uint64(wantStale) || wantStale == 0 {
				t.Errorf("stale: %d, the service logged %d (of %d answers)", got, wantStale, logged.Answers)
			}
			if verdicts[change.StaleBeyond] != 0 {
				t.Errorf("%d stale beyond a promise of 1s, with a lag of %s", verdicts[change.StaleBeyond], lag)
			}
			if got := verdicts[change.Wrong]; got != uint64(logged.Wrong) || out.Recorder.Counts[verify.WrongDecision] != uint64(logged.Wrong) || (c.named && got == 0) {
				t.Errorf("wrong: judged %d, counted %d wrong decisions, the service logged %d", got, out.Recorder.Counts[verify.WrongDecision], logged.Wrong)
			}
			var visible []time.Duration
			for _, v := range ch.Tally.Visibility(s, ch.Log) {
				if v.Seen {
					visible = append(visible, v.ToVisible)
				}
			}
			if len(visible) < 5 {
				t.Fatalf("%d changes seen (of %d applied), want at least 5", len(visible), ch.Log.Applied())
			}
			sort.Slice(visible, func(a, b int) bool { return visible[a] < visible[b] })
			t.Logf("%d answers: %v verdicts; service log %+v; time to visible %v", logged.Answers, verdicts, logged, visible)
			if med := visible[len(visible)/2]; med < lag*9/10 || med > lag*11/10 {
				t.Errorf("time to visible: median %s of %v, want %s within 10%%", med, visible, lag)
			}
		})
	}
}

// blockingWrites acknowledges the first write and holds the second until the run stops.
type blockingWrites struct{ second chan struct{} }

func (b *blockingWrites) Apply(ctx context.Context, version int, _ change.Change) change.Ack {
	if version == 1 {
		return change.Ack{}
	}
	close(b.second)
	<-ctx.Done()
	return change.Ack{Class: "transport", Err: ctx.Err()}
}

// Stopped while a write is in flight (Ctrl-C), the run keeps what it measured and never counts
// that write as applied, nor as failed.
func TestChangesStoppedWithAWriteInFlight(t *testing.T) {
	s := flipping(t, 5)
	svc := &changetest.Service{Stream: s}
	tg := &lagged{svc: svc}
	writes := &blockingWrites{second: make(chan struct{})}
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { <-writes.second; time.Sleep(50 * time.Millisecond); cancel(context.Canceled) }()
	spec := Spec{Workers: 2, Duration: time.Minute, Timeout: time.Second, Changes: &Changes{Stream: s, Applier: writes, Rate: 20}}
	out := spec.Run(ctx, tg, inputs(4), nil)
	if out.Stopped == nil || out.Recorder.Requests() == 0 {
		t.Fatalf("stopped %v with %d requests: want a stopped run that kept what it measured", out.Stopped, out.Recorder.Requests())
	}
	log := out.Changes.Log
	if log.Applied() != 1 || len(log.Writes) != 2 || log.Writes[1].Class != change.Interrupted || out.Changes.WriteErr != nil {
		t.Errorf("applied %d, writes %+v, write error %v", log.Applied(), log.Writes, out.Changes.WriteErr)
	}
}

// A write that holds every decision back for 200 ms (a store locked to commit) is a pause an
// open loop reads, in the longest gap without an answer and in the latency of the decisions
// sent near the change, beside the steady state's.
func TestChangesOpenLoopSeesThePause(t *testing.T) {
	const stall = 200 * time.Millisecond
	s := flipping(t, 10)
	svc := &changetest.Service{Stream: s, Stall: stall}
	tg := &lagged{svc: svc}
	spec := Spec{Rate: 200, Connections: 64, Duration: 3 * time.Second, Timeout: 2 * time.Second,
		Changes: &Changes{Stream: s, Applier: tg, Rate: 0.4}}
	out := spec.Run(context.Background(), tg, inputs(4), nil)
	if out.Stopped != nil {
		t.Fatal(out.Stopped)
	}
	tl := out.Changes.Tally
	if p := tl.Pause(); p < stall*8/10 || p > stall*3 {
		t.Errorf("pause %s, want about %s", p, stall)
	}
	near, steady := time.Duration(tl.NearLatency.ValueAtQuantile(99)), time.Duration(tl.SteadyLatency.ValueAtQuantile(99))
	if tl.SteadyLatency.TotalCount() == 0 || near < stall/2 || steady > near/2 {
		t.Errorf("P99 near a change %s, steady %s (%d decisions): want the stall near and not away", near, steady, tl.SteadyLatency.TotalCount())
	}
}

// A run bounded by a request budget ends when the budget is spent, not when the stream's next
// change is due.
func TestChangesEndWithARequestBudget(t *testing.T) {
	s := flipping(t, 5)
	svc := &changetest.Service{Stream: s}
	tg := &lagged{svc: svc}
	spec := Spec{Workers: 2, Requests: 20, MaxTime: time.Minute, Timeout: time.Second, Changes: &Changes{Stream: s, Applier: tg, Rate: 0.05}}
	begun := time.Now()
	out := spec.Run(context.Background(), tg, inputs(4), nil)
	if out.Stopped != nil || out.Recorder.Requests() != 20 {
		t.Fatalf("stopped %v after %d requests", out.Stopped, out.Recorder.Requests())
	}
	if took := time.Since(begun); took > 5*time.Second || out.Changes.Log.Applied() != 1 {
		t.Errorf("took %s, applied %d: want the run over with its budget, the first change applied", took, out.Changes.Log.Applied())
	}
}
