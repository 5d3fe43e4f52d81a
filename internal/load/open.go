package load

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// LateAfter is how far behind its intended time a send may start before it counts as late.
const LateAfter = time.Millisecond

// startLead is how far ahead of the first send the schedule starts, so every connection's
// goroutine is running when the first send is due.
const startLead = 20 * time.Millisecond

// runOpen sends request k when the pacer says it is due (at a constant rate, start + k/rate),
// whatever happened to earlier requests; with a segment i/N, only its share of the sends. Up to
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
func (c Spec) runOpen(ctx context.Context, t kinds.Target, pacer Pacer, inputs []workload.Input, progress func(Progress)) Outcome {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchDied(ctx, t, cancel)
	expects := expectsOf(inputs)

	// This generator's sends, numbered from 0: those from firstMeasured to pastLast-1 are due in
	// the measured window, the ones before in the warm-up (each in the phase its intended time
	// falls in).
	pl := newPlan(pacer, c.Segment)
	firstMeasured, pastLast := pl.window(c.Warmup, c.Duration)
	start := time.Now().Add(startLead)
	warmEnd := start.Add(c.Warmup)
	end := warmEnd.Add(c.Duration)
	defer atMeasure(c.Measuring, warmEnd)()
	giveUp := end.Add(max(0, c.Timeout))
	wd := c.newWorld(giveUp.Sub(time.Now()) + max(c.Timeout, 5*time.Second) + time.Second)

	// Every connection's decider, made before the engine is chosen: the event loop serves them
	// when every one is plain keep-alive HTTP/1.1 (kinds.PlainHTTP), the goroutines otherwise
	// (TLS, HTTP/2, gRPC, in-process engines, a connection per request, a wrapped decider).
	deciders := make([]kinds.Decider, c.Connections)
	for id := range deciders {
		deciders[id] = t.Worker()
	}
	// A run with changes judges each answer by its send and receipt, which either engine knows.
	xs := plainExchanges(deciders)
	// Connections can number in the thousands, so they share a few recorders (a short lock at
	// the end of each request) rather than each holding its own histograms; an event loop has
	// one of its own.
	nShards := min(c.Connections, 2*runtime.GOMAXPROCS(0))
	if xs != nil {
		nShards = min(c.Connections, runtime.GOMAXPROCS(0))
	}
	shards := make([]*shard, nShards)
	for i := range shards {
		shards[i] = &shard{rec: metrics.NewOpenRecorderUpTo(c.Ceiling)}
		shards[i].rec.ShareTimedSample(len(shards))
		shards[i].intervals = newIntervals(c.Warmup, c.Duration, c.Intervals, shards[i].rec.Ceiling())
		shards[i].judging = wd.worker()
		shards[i].judging.from(start)
	}
	// How every connection's attempts end, so a target that stopped answering, or a timeout too
	// short to send anything, ends the run as a dead server would (failing.go).
	attempts := make([]*Attempts, c.Connections)
	for id := range attempts {
		attempts[id] = new(Attempts)
	}
	w := openWindow{start: start, giveUp: giveUp, pl: pl, firstMeasured: firstMeasured, pastLast: pastLast, draws: c.Draw.Sequence(len(inputs))}
	var allDone <-chan struct{}
	var ends func() []sendingEnd
	var err error
	sender := SenderGoroutines
	if xs != nil {
		sender = SenderEventLoop
		allDone, ends, err = c.startLoops(ctx, xs, attempts, shards, expects, w)
		defer func() {
			for _, d := range deciders {
				kinds.CloseDecider(d)
			}
		}()
	} else {
		allDone, ends, err = c.startGoroutines(ctx, deciders, attempts, shards, expects, w)
	}
	if err != nil {
		return Outcome{Recorder: metrics.NewOpenRecorder(), Stopped: err, Schedule: &Schedule{}}
	}
	// The watch ends when the run gives up sending: past it the run only waits for the answers
	// of sends already out, each cut off by its own timeout, and a silence then (a target that
	// stalled to the end, answering after the window) is measured, not a reason to stop a run
	// that is over. CI once saw the watch mark such a run stopped, its ticker beating the last
	// sender's return.
	watching, stopWatching := context.WithDeadline(ctx, giveUp)
	defer stopWatching()
	WatchFailing(watching, cancel, attempts, c.Timeout)
	wd.write(ctx, cancel, warmEnd.Sub(wd.base()), end.Sub(wd.base()))

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
			// The senders are done when every send went out and was answered, and when the run
			// is stopped: with both at hand (this goroutine was away at the stop), select may
			// take either, and a stopped run must not read as whole (its never-sent sends
			// charged as unsent, or its last answers' wait cut short unsaid), as the stop's own
			// case below has it. Sending stopped when the last sender cut short stopped; with
			// none cut short, the stop ended the wait for the last answers, now.
			if ctx.Err() != nil {
				stopped = context.Cause(ctx)
				for _, e := range ends() {
					if e.next < pastLast && e.at.After(stoppedAt) {
						stoppedAt = e.at
					}
				}
				if stoppedAt.IsZero() {
					stoppedAt = time.Now()
				}
			}
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
	rec := metrics.NewOpenRecorder()
	for _, s := range shards {
		rec.Merge(s.rec)
	}
	intervals := shards[0].intervals
	for _, s := range shards[1:] {
		intervals.merge(s.intervals)
	}

	// The measured time runs from the end of the warm-up to the last measured answer, and at
	// least to the end of the window: throughput divides by the time the ok answers took.
	elapsed := max(finished.Sub(warmEnd), c.Duration)
	pastDue := pastLast
	if stopped != nil {
		// Stopped early: only the sends due before the stop were due at all.
		elapsed = max(0, stoppedAt.Sub(warmEnd))
		pastDue = min(pastLast, max(firstMeasured, pl.sendsBefore(stoppedAt.Sub(start))))
	}
	var together int64
	for _, e := range ends() {
		together += e.together
		// The sends from e.next on, every e.stride-th, were never handed out.
		j := e.next
		for j < firstMeasured {
			j += e.stride
		}
		for ; j < pastDue; j += e.stride {
			intended := pl.due(j)
			rec.RecordUnsent(e.at.Sub(start) - intended)
			intervals.unsent(intended, e.at.Sub(start)-intended)
		}
	}
	unsent := int64(rec.Counts[verify.Unsent])
	changes := wd.outcome()
	return Outcome{
		Changes:  changes,
		Recorder: rec, Elapsed: elapsed, Stopped: stopped, UsageStart: usageStart, UsageEnd: usageEnd, MeasuredFrom: warmEnd,
		Schedule: &Schedule{Intended: pastDue - firstMeasured, Sent: int64(rec.Requests()) - unsent, Unsent: unsent,
			Late: int64(rec.Late), GeneratorLate: int64(rec.GeneratorLate), Sender: sender, Together: together},
		Intervals: intervals.close(pl, firstMeasured, pastDue),
	}
}

// openWindow is when a run's sends are due: the plan, its sends from firstMeasured to
// pastLast-1 in the measured window (those before in the warm-up), start + due(j) for send j,
// and giveUp, when the run gives up on those still waiting for a connection.
type openWindow struct {
	start, giveUp           time.Time
	pl                      plan
	firstMeasured, pastLast int64
	draws                   []int32 // the inputs drawn (Draw.Sequence); nil: each in turn
}

// sendingEnd is where one engine's sending stopped: the plan's sends from next on, every
// stride-th, were never handed out.
type sendingEnd struct {
	pacerEnd
	stride int64
	// together counts measured sends that a coalesce window sent at a wake-up after another (the
	// event loop only).
	together int64
}

// startGoroutines starts the goroutine engine: one pacer hands out sends at their intended
// times to whichever connection's goroutine is free; when none is, the send waits, and that
// wait is part of its latency.
func (c Spec) startGoroutines(ctx context.Context, deciders []kinds.Decider, attempts []*Attempts, shards []*shard,
	expects []workload.Expect, w openWindow) (<-chan struct{}, func() []sendingEnd, error) {
	clock, err := newPacerClock(w.start, w.pl)
	if err != nil {
		for _, d := range deciders {
			kinds.CloseDecider(d)
		}
		return nil, nil, err
	}
	stopClock := context.AfterFunc(ctx, clock.stop)
	due := make(chan dueSend)
	var paced pacerEnd
	pacerDone := make(chan struct{})
	go func() {
		defer close(pacerDone)
		defer close(due)
		paced = pace(ctx, clock, due, w.start, w.giveUp, w.pl, w.firstMeasured, w.pastLast)
	}()
	var workers group
	for id, d := range deciders {
		w := openWorker{decider: d, shard: shards[id%len(shards)], expects: expects, draws: w.draws,
			due: due, start: w.start, attempts: attempts[id], timeout: c.Timeout}
		workers.start(w.decider, func() { w.run(ctx) })
	}
	workersDone := workers.done()
	done := make(chan struct{})
	go func() {
		<-workersDone
		<-pacerDone
		stopClock()
		clock.close()
		close(done)
	}()
	return done, func() []sendingEnd { return []sendingEnd{{pacerEnd: paced, stride: 1}} }, nil
}

type shard struct {
	mu        sync.Mutex
	rec       *metrics.Recorder
	intervals *intervals // nil unless the run is accounted interval by interval
	judging   *judging   // nil in a frozen world
}

// dueSend is one send the pacer hands to a connection.
type dueSend struct {
	send     int64         // the schedule's number for it, which picks the input
	intended time.Duration // when it was due, an offset from the start
	measured bool          // due in the measured window, not in the warm-up
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
	decider kinds.Decider
	shard   *shard
	expects []workload.Expect
	draws   []int32 // the inputs drawn; nil: each in turn
	due     <-chan dueSend
	start   time.Time
	// attempts counts how every attempt ended, for WatchFailing; timeout is --timeout, which a
	// decision slower than it is charged as.
	attempts *Attempts
	timeout  time.Duration
}

func (w *openWorker) run(ctx context.Context) {
	n := len(w.expects)
	measuring := false
	var reconnectsBefore int64
	defer func() {
		if measuring {
			w.shard.mu.Lock()
			w.shard.rec.Reconnects += uint64(kinds.ReconnectsOf(w.decider) - reconnectsBefore)
			w.shard.mu.Unlock()
		}
	}()
	for d := range w.due {
		if d.measured && !measuring {
			measuring, reconnectsBefore = true, kinds.ReconnectsOf(w.decider)
		}
		// Times are offsets from start, read from the monotonic clock alone (as the closed-loop
		// worker does).
		intended := d.intended
		sent := time.Since(w.start)
		i := pick(w.draws, d.send, n)
		out := w.decider.Decide(ctx, i)
		done := time.Since(w.start)
		if ctx.Err() != nil {
			return
		}
		out = EnforceTimeout(out, done-sent, w.timeout)
		sentOnTheWire := w.attempts.Note(out)
		if !d.measured {
			continue // due in the warm-up, whenever it was sent
		}
		if !sentOnTheWire {
			// Its timeout passed before a byte left authzbench: a due send that never went out,
			// charged like the ones no connection took, from its intended time to now.
			w.shard.mu.Lock()
			w.shard.rec.RecordUnsent(done - intended)
			w.shard.intervals.unsent(intended, done-intended)
			w.shard.mu.Unlock()
			continue
		}
		var generatorLateness time.Duration
		if !d.waited {
			generatorLateness = sent - d.ready
		}
		w.shard.mu.Lock()
		expect := w.expects[i]
		if w.shard.judging != nil {
			expect = w.shard.judging.expect(i, expect, out, sent, done, done-intended)
		}
		class := recordResponse(w.shard.rec, i, expect, out, done-intended, sent-intended)
		w.shard.rec.RecordSend(class == verify.OK, sent-intended, generatorLateness, done-sent, LateAfter)
		w.shard.intervals.sent(intended, class == verify.OK, done-intended, sent-intended, generatorLateness)
		w.shard.mu.Unlock()
	}
}

// pacerEnd says where the pacer stopped: the plan's sends from next on were never handed out,
// and it stopped at at.
type pacerEnd struct {
	next int64
	at   time.Time
}

// pace hands the plan's send j to a free connection when it is due, for j below pastLast. A send
// that comes due while every connection is busy waits for one; the pacer gives up at giveUp (or
// when ctx ends) on the send it holds and every later one.
func pace(ctx context.Context, clock *pacerClock, due chan<- dueSend, start, giveUp time.Time, pl plan, firstMeasured, pastLast int64) pacerEnd {
	stop := time.NewTimer(time.Until(giveUp))
	defer stop.Stop()
	var unblocked time.Duration // when the pacer last got a busy connection to take a send
	for j := int64(0); j < pastLast; j++ {
		intended := pl.due(j)
		if !clock.waitFor(j, intended) || ctx.Err() != nil {
			return pacerEnd{j, time.Now()}
		}
		d := dueSend{send: pl.send(j), intended: intended, measured: j >= firstMeasured, ready: max(intended, unblocked)}
		select {
		case due <- d:
			continue
		case <-stop.C:
			// Connections that never block would otherwise keep the pacer handing out a fast
			// schedule's sends long past giveUp: at 1e9/s a one-second window is 1e9 sends.
			return pacerEnd{j, time.Now()}
		default:
		}
		d.waited = true
		select {
		case due <- d:
			unblocked = time.Since(start)
		case <-stop.C:
			return pacerEnd{j, time.Now()}
		case <-ctx.Done():
			return pacerEnd{j, time.Now()}
		}
	}
	return pacerEnd{pastLast, time.Now()}
}
