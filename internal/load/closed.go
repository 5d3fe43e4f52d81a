package load

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// runClosed runs the closed loop.
func (c Spec) runClosed(ctx context.Context, t kinds.Target, inputs []workload.Input, progress func(Progress)) Outcome {
	if c.MaxTime <= 0 {
		c.MaxTime = 10 * time.Minute
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchDied(ctx, t, cancel)
	expects := expectsOf(inputs)
	draws := c.Draw.Sequence(len(inputs))
	// A shard runs its share of the workers under their numbers in the whole, so that the
	// shards together send the inputs the whole would have, each from the same place.
	firstWorker, workersHere := c.Segment.Workers(c.Workers)
	attempts := make([]*Attempts, workersHere)
	for id := range attempts {
		attempts[id] = new(Attempts)
	}
	WatchFailing(ctx, cancel, attempts, c.Timeout)
	var phase atomic.Int32
	if c.Warmup == 0 {
		phase.Store(phaseMeasure) // no warm-up: not a single request may go unrecorded
		if c.Measuring != nil {
			c.Measuring()
		}
	}
	limit := c.Duration
	if c.Requests > 0 {
		limit = c.MaxTime
	}
	wd := c.newWorld(c.Warmup + limit + max(c.Timeout, 5*time.Second) + time.Second)
	measureStart := time.Now()
	usageStart := metrics.SelfUsage()
	recorders := make([]*metrics.Recorder, workersHere)
	quotas := splitQuota(c.Requests, c.Workers)[firstWorker:]
	var workers group
	for id := range workersHere {
		recorders[id] = metrics.NewRecorderUpTo(c.Ceiling)
		recorders[id].ShareTimedSample(workersHere)
		w := worker{decider: t.Worker(), rec: recorders[id], expects: expects, draws: draws, attempts: attempts[id], timeout: c.Timeout,
			first: (firstWorker + id) % len(expects), step: c.Workers, limited: c.Requests > 0, quota: quotas[id], phase: &phase,
			judging: wd.worker()}
		workers.start(w.decider, func() { w.run(ctx) })
	}
	allDone := workers.done()

	live := func(warm bool, since time.Time) {
		if progress == nil {
			return
		}
		p := Progress{Warmup: warm, Elapsed: time.Since(since)}
		for _, r := range recorders {
			ok, errs := r.Live()
			p.OK += ok
			p.Errors += errs
		}
		progress(p)
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()

	// Warm-up: workers run, nothing is recorded.
	warmStart := time.Now()
	warmEnd := time.After(c.Warmup)
warm:
	for c.Warmup > 0 {
		select {
		case <-warmEnd:
			break warm
		case <-ctx.Done():
			phase.Store(phaseStop)
			<-allDone
			// Nothing was recorded yet: say so, or a table of zeros reads as a run without errors.
			return Outcome{Recorder: merge(recorders), Stopped: fmt.Errorf("in the warm-up, before anything was measured: %w", context.Cause(ctx)),
				Changes: wd.outcome()}
		case <-tick.C:
			live(true, warmStart)
		}
	}

	if c.Warmup > 0 {
		if c.Measuring != nil {
			c.Measuring() // the warm-up's requests still going, counted as the warm-up's
		}
		usageStart = metrics.SelfUsage()
		measureStart = time.Now()
		phase.Store(phaseMeasure)
	}
	wd.write(ctx, cancel, measureStart.Sub(wd.base()), measureStart.Sub(wd.base())+limit)
	deadline := time.After(limit)
	var stopped error
measure:
	for {
		select {
		case <-allDone:
			// The workers are done when their budget is spent, and when the run is stopped: with
			// both at hand (this goroutine was away at the stop), select may take either, and a
			// stopped run must not read as whole.
			if ctx.Err() != nil && !budgetSpent(recorders, quotas) {
				stopped = context.Cause(ctx)
			}
			break measure
		case <-deadline:
			if c.Requests > 0 {
				stopped = fmt.Errorf("request budget not reached within %s", c.MaxTime)
			}
			break measure
		case <-ctx.Done():
			stopped = context.Cause(ctx)
			break measure
		case <-tick.C:
			live(false, measureStart)
		}
	}
	phase.Store(phaseStop)
	<-allDone
	elapsed := time.Since(measureStart)
	usageEnd := metrics.SelfUsage()
	live(false, measureStart)
	changes := wd.outcome()
	if stopped == nil && changes != nil && changes.WriteErr != nil {
		stopped = changes.WriteErr
	}
	return Outcome{Recorder: merge(recorders), Elapsed: elapsed, Stopped: stopped,
		UsageStart: usageStart, UsageEnd: usageEnd, MeasuredFrom: measureStart, Changes: changes}
}

// budgetSpent reports whether the workers, done, recorded every request of their quotas (a
// request budget; without one, quotas are 0 and nothing ends a run but its time or a stop).
func budgetSpent(recorders []*metrics.Recorder, quotas []int64) bool {
	var asked, done int64
	for id, r := range recorders {
		asked += quotas[id]
		done += int64(r.Requests())
	}
	return asked > 0 && done >= asked
}

// group runs load workers and says when all have returned.
type group struct{ wg sync.WaitGroup }

// start runs fn in its own goroutine and releases the decider's connection when fn returns.
func (g *group) start(d kinds.Decider, fn func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer kinds.CloseDecider(d)
		fn()
	}()
}

// done is closed when every worker has returned.
func (g *group) done() <-chan struct{} {
	ch := make(chan struct{})
	go func() { g.wg.Wait(); close(ch) }()
	return ch
}

// recordResponse classifies one response and records everything it carries: its latency (in
// the ok or the error histogram), the parts of its service time (latency less queued: from
// the send to the answer) a new connection took (connect, TLS, the exchange after them) and,
// for ok responses, the server's own timers and whether it had an expectation to check. Both
// drivers record through it. The sample of timed responses takes latency as given: in open loop
// from the intended send, so that a send's wait for a connection counts as waiting in the
// attribution, not as the server's, and queued (open loop: how late the send went out; 0 in
// closed loop) says how much of it.
func recordResponse(rec *metrics.Recorder, input int, expect workload.Expect, out verify.Outcome, latency, queued time.Duration) verify.Class {
	class := verify.Classify(expect, out)
	rec.Record(class, out.Status, latency)
	rec.RecordMessage(class, expect, out)
	rec.RecordMismatch(class, input, expect, out)
	rec.RecordConnectParts(out.ConnectNS, out.TLSNS, latency-queued)
	if class == verify.OK {
		if out.Kind == verify.Decided {
			rec.RecordDecision(out.Allow, latency)
		}
		rec.RecordServer(out.ServerEvalNS, out.ServerHandlerNS)
		rec.RecordTimed(latency, queued, out.ServerEvalNS, out.ServerHandlerNS)
		if expect == workload.Unverified {
			rec.UnverifiedOK++
		}
	}
	return class
}

// splitQuota divides a request budget among workers up front, so no worker contends with
// another for a shared counter.
func splitQuota(total int64, workers int) []int64 {
	q := make([]int64, workers)
	if total <= 0 {
		return q
	}
	for i := range q {
		q[i] = total / int64(workers)
		if int64(i) < total%int64(workers) {
			q[i]++
		}
	}
	return q
}

func merge(rs []*metrics.Recorder) *metrics.Recorder {
	out := metrics.NewRecorder()
	for _, r := range rs {
		out.Merge(r)
	}
	return out
}

type worker struct {
	decider kinds.Decider
	rec     *metrics.Recorder
	expects []workload.Expect
	draws   []int32 // the inputs drawn (Draw.Sequence); nil: each in turn
	first   int
	step    int
	limited bool  // a request budget is set: stop after quota measured requests
	quota   int64 // this worker's share of the budget; may be 0 when workers outnumber requests
	phase   *atomic.Int32
	// attempts counts how every attempt ended, for WatchFailing; timeout is --timeout, which a
	// decision slower than it is charged as.
	attempts *Attempts
	timeout  time.Duration
	// judging judges each measured answer in a run with changes; nil in a frozen world.
	judging *judging
}

// run sends requests back to back. Worker k takes inputs k, k+W, k+2W ... so that together the
// workers walk the inputs round-robin in file order, or the drawn sequence in its order.
func (w *worker) run(ctx context.Context) {
	n := len(w.expects)
	next := int64(w.first) // the place in the walk
	i := pick(w.draws, next, n)
	var sent int64
	// Latency is the difference of two offsets from a fixed time: time.Since reads the monotonic
	// clock alone, where time.Now reads the wall clock as well. Two clock reads a decision
	// instead of three: 50 ns against 71 in a bare loop here, a visible share of a
	// sub-microsecond decision (docs/benchmarks.md).
	base := time.Now()
	w.judging.from(base)
	measuring := false
	var reconnectsBefore int64
	defer func() {
		if measuring {
			w.rec.Reconnects += uint64(kinds.ReconnectsOf(w.decider) - reconnectsBefore)
		}
	}()
	for {
		p := w.phase.Load()
		if p == phaseStop {
			return
		}
		if p == phaseMeasure && !measuring {
			measuring, reconnectsBefore = true, kinds.ReconnectsOf(w.decider)
		}
		if w.limited && p == phaseMeasure && sent >= w.quota {
			return
		}
		start := time.Since(base)
		out := w.decider.Decide(ctx, i)
		latency := time.Since(base) - start
		if ctx.Err() != nil {
			return // interrupted mid-request: neither a success nor the server's error
		}
		out = EnforceTimeout(out, latency, w.timeout)
		if !w.attempts.Note(out) {
			continue // never sent: not a request; the same input goes next time
		}
		if p == phaseMeasure {
			expect := w.expects[i]
			if w.judging != nil {
				expect = w.judging.expect(i, expect, out, start, start+latency, latency)
			}
			recordResponse(w.rec, i, expect, out, latency, 0)
			sent++
		}
		next += int64(w.step)
		i = pick(w.draws, next, n)
	}
}

// watchDied cancels the run when the target's system under test goes away.
func watchDied(ctx context.Context, t kinds.Target, cancel context.CancelCauseFunc) {
	died := t.Died()
	if died == nil {
		return
	}
	go func() {
		select {
		case <-died:
			cancel(t.Err())
		case <-ctx.Done():
		}
	}()
}

func expectsOf(inputs []workload.Input) []workload.Expect {
	expects := make([]workload.Expect, len(inputs))
	for i, in := range inputs {
		expects[i] = in.Expect
	}
	return expects
}
