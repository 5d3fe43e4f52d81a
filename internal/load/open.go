package load

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/target"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// LateAfter is how far behind its intended time a send may start before it counts as late.
const LateAfter = time.Millisecond

// startLead is how far ahead of the first send the schedule starts, so every connection's
// goroutine is running when the first send is due.
const startLead = 20 * time.Millisecond

// runOpen sends request k at start + k/rate, whatever happened to earlier requests. Up to
// Connections requests are in flight; a send that comes due while all are busy waits, and its
// latency is measured from its intended time, so a server that stalls is charged for every
// request that arrived during the stall (the correction for coordinated omission). The
// latency from the actual send is kept too, to show how much smaller it would have looked.
//
// Every send due in the measured window is accounted for. Sends still waiting for a free
// connection when the window closes go on waiting (they were due, as a real client's queued
// requests would be) until Timeout after the window; the run gives up on those still unsent
// then, and charges each one, as class unsent, its lower bound: from its intended time to the
// moment the run gave up on it. Sends in flight when the window closes are awaited (each is
// bounded by the target's own request timeout). A send belongs to the phase its intended time
// falls in: one due in the warm-up but sent after it is warm-up, and discarded.
func (c Spec) runOpen(ctx context.Context, t target.Target, inputs []workload.Input, progress func(Progress)) Outcome {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchDied(ctx, t, cancel)
	expects := expectsOf(inputs)

	// A whole number of nanoseconds between sends, so the kernel's periodic timer and the
	// intended times agree exactly; rounding down sends at most one part in the interval's
	// nanoseconds faster than asked (1e-5 at 10,000 req/s).
	interval := max(1, time.Duration(float64(time.Second)/c.Rate))
	start := time.Now().Add(startLead)
	warmEnd := start.Add(c.Warmup)
	end := warmEnd.Add(c.Duration)
	giveUp := end.Add(max(0, c.Timeout))
	firstMeasured := ceilDiv(c.Warmup, interval)
	pastLast := ceilDiv(c.Warmup+c.Duration, interval)

	clock, err := newPacerClock(start, interval)
	if err != nil {
		return Outcome{Recorder: metrics.NewOpenRecorder(), Stopped: err, Schedule: &Schedule{LateAfter: LateAfter}}
	}
	defer clock.close()
	defer context.AfterFunc(ctx, clock.stop)()

	// Connections can number in the thousands, so they share a few recorders (a short lock at
	// the end of each request) rather than each holding its own histograms.
	shards := make([]*shard, min(c.Connections, 2*runtime.GOMAXPROCS(0)))
	for i := range shards {
		shards[i] = &shard{rec: metrics.NewOpenRecorderUpTo(c.Ceiling)}
	}
	// One pacer hands out sends at their intended times to whichever connection is free; when
	// none is, the send waits, and that wait is part of its latency.
	due := make(chan dueSend)
	paced := make(chan pacerEnd, 1)
	go func() {
		defer close(due)
		paced <- pace(ctx, clock, due, start, giveUp, interval, pastLast)
	}()
	// How every connection's attempts end, so a target that stopped answering, or a timeout too
	// short to send anything, ends the run as a dead server would (failing.go).
	attempts := make([]*Attempts, c.Connections)
	for id := range attempts {
		attempts[id] = new(Attempts)
	}
	WatchFailing(ctx, cancel, attempts, c.Timeout)
	var workers group
	for id := range c.Connections {
		w := openWorker{decider: t.Worker(), shard: shards[id%len(shards)], expects: expects,
			due: due, start: start, firstMeasured: firstMeasured, interval: interval,
			attempts: attempts[id], timeout: c.Timeout}
		workers.start(w.decider, func() { w.run(ctx) })
	}
	allDone := workers.done()

	var usageStart metrics.Usage
	measuring := false
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var stopped error
	var stoppedAt time.Time
	report := func() {
		if progress == nil {
			return
		}
		now := time.Now()
		p := Progress{Warmup: now.Before(warmEnd), Elapsed: now.Sub(start)}
		if !p.Warmup {
			p.Elapsed = now.Sub(warmEnd)
		}
		for _, s := range shards {
			ok, errs := s.rec.Live()
			p.OK += ok
			p.Errors += errs
		}
		progress(p)
	}
	warmTimer := time.NewTimer(time.Until(warmEnd))
	defer warmTimer.Stop()
wait:
	for {
		select {
		case <-allDone:
			break wait
		case <-warmTimer.C:
			usageStart, measuring = metrics.SelfUsage(), true
		case <-ctx.Done():
			stopped, stoppedAt = context.Cause(ctx), time.Now()
			<-allDone
			break wait
		case <-tick.C:
			report()
		}
	}
	finished := time.Now()
	usageEnd := metrics.SelfUsage()
	if !measuring {
		usageStart = usageEnd
	}
	report()
	pe := <-paced
	rec := metrics.NewOpenRecorder()
	for _, s := range shards {
		rec.Merge(s.rec)
	}

	// The measured time runs from the end of the warm-up to the last measured answer, and at
	// least to the end of the window: throughput divides by the time the ok answers took.
	elapsed := max(finished.Sub(warmEnd), c.Duration)
	dueSlots := pastLast
	if stopped != nil {
		// Stopped early: only the sends due before the stop were due at all.
		elapsed = max(0, stoppedAt.Sub(warmEnd))
		dueSlots = min(pastLast, max(firstMeasured, ceilDiv(stoppedAt.Sub(start), interval)))
	}
	for slot := max(pe.next, firstMeasured); slot < dueSlots; slot++ {
		rec.RecordUnsent(pe.at.Sub(start) - time.Duration(slot)*interval)
	}
	unsent := int64(rec.Counts[verify.Unsent])
	return Outcome{
		Recorder: rec, Elapsed: elapsed, Stopped: stopped, UsageStart: usageStart, UsageEnd: usageEnd, MeasuredFrom: warmEnd,
		Schedule: &Schedule{Intended: dueSlots - firstMeasured, Sent: int64(rec.Requests()) - unsent, Unsent: unsent,
			Late: int64(rec.Late), GeneratorLate: int64(rec.GeneratorLate), LateAfter: LateAfter},
	}
}

type shard struct {
	mu  sync.Mutex
	rec *metrics.Recorder
}

// dueSend is one send the pacer hands to a connection.
type dueSend struct {
	slot int64
	// ready is when the pacer could first act on the send (an offset from the start): its
	// intended time, or later if the pacer was still waiting then for a connection to take the
	// previous send. A delay beyond ready is the generator's own (a late wake-up, the pacer or
	// the connection descheduled).
	ready time.Duration
	// waited: every connection was busy when the send was handed out, and it waited for one to
	// come free; its delay is the server's doing.
	waited bool
}

type openWorker struct {
	decider       target.Decider
	shard         *shard
	expects       []workload.Expect
	due           <-chan dueSend
	start         time.Time
	firstMeasured int64 // the first slot due in the measured window
	interval      time.Duration
	// attempts counts how every attempt ended, for WatchFailing; timeout is --timeout, which a
	// decision slower than it is charged as.
	attempts *Attempts
	timeout  time.Duration
}

func (w *openWorker) run(ctx context.Context) {
	n := int64(len(w.expects))
	measuring := false
	var reconnectsBefore int64
	defer func() {
		if measuring {
			w.shard.mu.Lock()
			w.shard.rec.Reconnects += uint64(Reconnects(w.decider) - reconnectsBefore)
			w.shard.mu.Unlock()
		}
	}()
	for d := range w.due {
		if d.slot >= w.firstMeasured && !measuring {
			measuring, reconnectsBefore = true, Reconnects(w.decider)
		}
		// Times are offsets from start, read from the monotonic clock alone (as the closed-loop
		// worker does).
		intended := time.Duration(d.slot) * w.interval
		sent := time.Since(w.start)
		i := int(d.slot % n)
		out := w.decider.Decide(ctx, i)
		done := time.Since(w.start)
		if ctx.Err() != nil {
			return
		}
		out = EnforceTimeout(out, done-sent, w.timeout)
		sentOnTheWire := w.attempts.Note(out)
		if d.slot < w.firstMeasured {
			continue // due in the warm-up, whenever it was sent
		}
		if !sentOnTheWire {
			// Its timeout passed before a byte left authzbench: a due send that never went out,
			// charged like the ones no connection took, from its intended time to now.
			w.shard.mu.Lock()
			w.shard.rec.RecordUnsent(done - intended)
			w.shard.mu.Unlock()
			continue
		}
		var generatorLateness time.Duration
		if !d.waited {
			generatorLateness = sent - d.ready
		}
		w.shard.mu.Lock()
		class := recordResponse(w.shard.rec, i, w.expects[i], out, done-intended)
		w.shard.rec.RecordSend(class == verify.OK, sent-intended, generatorLateness, done-sent, LateAfter)
		w.shard.mu.Unlock()
	}
}

// pacerEnd says where the pacer stopped: slots from next on were never handed out, and it
// stopped at at.
type pacerEnd struct {
	next int64
	at   time.Time
}

// pace hands slot k to a free connection at start + k*interval, for slots below pastLast. A
// slot that comes due while every connection is busy waits for one; the pacer gives up at
// giveUp (or when ctx ends) on the slot it holds and every later one.
func pace(ctx context.Context, clock *pacerClock, due chan<- dueSend, start, giveUp time.Time, interval time.Duration, pastLast int64) pacerEnd {
	stop := time.NewTimer(time.Until(giveUp))
	defer stop.Stop()
	var unblocked time.Duration // when the pacer last got a busy connection to take a send
	for slot := int64(0); slot < pastLast; slot++ {
		intended := time.Duration(slot) * interval
		if !clock.waitFor(slot) || ctx.Err() != nil {
			return pacerEnd{slot, time.Now()}
		}
		d := dueSend{slot: slot, ready: max(intended, unblocked)}
		select {
		case due <- d:
			continue
		default:
		}
		d.waited = true
		select {
		case due <- d:
			unblocked = time.Since(start)
		case <-stop.C:
			return pacerEnd{slot, time.Now()}
		case <-ctx.Done():
			return pacerEnd{slot, time.Now()}
		}
	}
	return pacerEnd{pastLast, time.Now()}
}

// ceilDiv is how many whole intervals it takes to cover d: the number of sends due in d.
func ceilDiv(d, interval time.Duration) int64 {
	return int64((d + interval - 1) / interval)
}
