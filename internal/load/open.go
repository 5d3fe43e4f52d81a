package load

import (
	"context"
	"math"
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

// runOpen sends request k at start + k/rate, whatever happened to earlier requests. Up to
// Connections requests are in flight; a send that comes due while all are busy waits, and its
// latency is measured from its intended time, so a server that stalls is charged for every
// request that arrived during the stall (the correction for coordinated omission). The
// latency from the actual send is kept too, to show how much smaller it would have looked.
func (c Spec) runOpen(ctx context.Context, t target.Target, inputs []workload.Input, progress func(Progress)) Outcome {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchDied(ctx, t, cancel)
	expects := expectsOf(inputs)

	interval := float64(time.Second) / c.Rate
	// Start a little ahead so every connection's goroutine is running when the first send is due.
	start := time.Now().Add(20 * time.Millisecond)
	warmEnd := start.Add(c.Warmup)
	end := warmEnd.Add(c.Duration)
	firstMeasured := int64(math.Ceil(float64(c.Warmup) / interval))
	pastLast := int64(math.Ceil(float64(c.Warmup+c.Duration) / interval))

	// Connections can number in the thousands, so they share a few recorders (a short lock at
	// the end of each request) rather than each holding its own histograms.
	shards := make([]*shard, min(c.Connections, 2*runtime.GOMAXPROCS(0)))
	for i := range shards {
		shards[i] = &shard{rec: metrics.NewOpenRecorderUpTo(c.Ceiling)}
	}
	// One pacer hands out sends at their intended times to whichever connection is free; when
	// none is, the send waits, and that wait is part of its latency.
	due := make(chan int64)
	pacerLate := make(chan int64, 1)
	go func() { pacerLate <- pace(ctx, due, start, warmEnd, end, interval) }()
	var workers group
	for id := range c.Connections {
		w := openWorker{decider: t.Worker(), shard: shards[id%len(shards)], expects: expects,
			due: due, start: start, warmEnd: warmEnd, interval: interval}
		workers.start(w.decider, func() { w.run(ctx) })
	}
	allDone := workers.done()

	var usageStart metrics.Usage
	measuring := false
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var stopped error
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
			stopped = context.Cause(ctx)
			<-allDone
			break wait
		case <-tick.C:
			report()
		}
	}
	usageEnd := metrics.SelfUsage()
	if !measuring {
		usageStart = usageEnd
	}
	report()
	generatorLate := <-pacerLate
	rec := metrics.NewOpenRecorder()
	for _, s := range shards {
		rec.Merge(s.rec)
	}
	elapsed := c.Duration
	if stopped != nil {
		elapsed = max(0, time.Since(warmEnd))
	}
	return Outcome{
		Recorder: rec, Elapsed: elapsed, Stopped: stopped, UsageStart: usageStart, UsageEnd: usageEnd, MeasuredFrom: warmEnd,
		Schedule: &Schedule{Intended: pastLast - firstMeasured, Sent: int64(rec.Requests()), Late: int64(rec.Late),
			GeneratorLate: generatorLate, LateAfter: LateAfter},
	}
}

type shard struct {
	mu  sync.Mutex
	rec *metrics.Recorder
}

type openWorker struct {
	decider        target.Decider
	shard          *shard
	expects        []workload.Expect
	due            <-chan int64
	start, warmEnd time.Time
	interval       float64 // nanoseconds between intended sends
}

func (w *openWorker) run(ctx context.Context) {
	n := int64(len(w.expects))
	warmup := w.warmEnd.Sub(w.start)
	for slot := range w.due {
		// Times are offsets from start, read from the monotonic clock alone (as the closed-loop
		// worker does).
		intended := time.Duration(float64(slot) * w.interval)
		sent := time.Since(w.start)
		i := int(slot % n)
		out := w.decider.Decide(ctx, i)
		done := time.Since(w.start)
		if ctx.Err() != nil {
			return
		}
		if sent < warmup {
			continue // a warm-up send; one sent after the warm-up counts even if it was due
			// before, so a backlog the warm-up built is charged to the measured phase
		}
		w.shard.mu.Lock()
		class := recordResponse(w.shard.rec, i, w.expects[i], out, done-intended)
		w.shard.rec.RecordSend(class == verify.OK, sent-intended, done-sent, LateAfter)
		w.shard.mu.Unlock()
	}
}

// pace sends slot k on due at start + k*interval until end, then closes due. A slot that no
// connection takes before end is not sent (and the schedule says so). It returns how many
// measured sends the pacer itself woke up late for: the generator's own lateness, apart from
// sends that waited for a free connection.
func pace(ctx context.Context, due chan<- int64, start, warmEnd, end time.Time, interval float64) (generatorLate int64) {
	defer close(due)
	stop := time.NewTimer(time.Until(end))
	defer stop.Stop()
	for slot := int64(0); ; slot++ {
		intended := start.Add(time.Duration(float64(slot) * interval))
		if !intended.Before(end) {
			return generatorLate
		}
		if time.Until(intended) > 0 {
			sleepUntil(intended)
			if time.Since(intended) > LateAfter && !intended.Before(warmEnd) {
				generatorLate++
			}
		}
		select {
		case due <- slot:
		case <-stop.C:
			return generatorLate
		case <-ctx.Done():
			return generatorLate
		}
	}
}

// sleepUntil waits until t. The Go runtime's timers can wake up to a millisecond late (its
// network poller sleeps in whole milliseconds), which at hundreds of requests a second would
// make most sends late; so the last stretch is a precise sleep of the thread itself.
func sleepUntil(t time.Time) {
	wait := time.Until(t)
	if wait > 2*time.Millisecond {
		time.Sleep(wait - time.Millisecond)
		wait = time.Until(t)
	}
	if wait > 0 {
		preciseSleep(wait)
	}
}
