package load

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/authzbench/authzbench/internal/verify"
)

// What ends a run that can measure nothing more, whichever driver runs it: a target that
// stopped answering (a --url server that died or hangs, as a server authzbench started and
// watches would end the run by exiting), or a timeout too short for a request to be sent at
// all. Both end through the run's context with a cause that says why, so the partial result is
// kept, as when a started server dies.

const (
	// notSentWindow is how many attempts the not-sent rule looks at together: enough that a
	// handful of unlucky sends cannot stop a run.
	notSentWindow = 1000
	// silentFailures is how many requests in a row may fail with no answer between them before
	// the target counts as gone, however little time that took (an in-process engine given a
	// timeout shorter than any decision fails thousands of times a second).
	silentFailures = 10_000
	// minSilence is the shortest silence that ends a run; a longer timeout lengthens it.
	minSilence = 2 * time.Second
	watchEvery = 100 * time.Millisecond
)

// Attempts counts how one worker's (or connection's) attempts ended, for WatchFailing. Only its
// owner writes it; each sits on its own cache line, so workers do not slow each other.
type Attempts struct {
	answered atomic.Uint64 // the target answered: any decision, any status, right or wrong
	failed   atomic.Uint64 // no answer: a timeout or a transport failure
	timedOut atomic.Uint64 // of the failed, those cut off by the timeout
	notSent  atomic.Uint64 // never left authzbench
	lastErr  atomic.Pointer[error]
	_        [32]byte
}

// Note counts how an attempt ended and reports whether it counts as a request: one that never
// left authzbench measured nothing of the target, and is neither recorded nor charged to it.
// On an answer it costs one atomic add on the worker's own counter.
func (a *Attempts) Note(out verify.Outcome) (counts bool) {
	switch {
	case out.NotSent:
		a.keep(a.notSent.Add(1), out.Err)
		return false
	case out.Kind == verify.TimedOut:
		a.timedOut.Add(1)
		a.keep(a.failed.Add(1), out.Err)
	case out.Kind == verify.TransportFailure:
		a.keep(a.failed.Add(1), out.Err)
	default:
		a.answered.Add(1)
	}
	return true
}

// keep saves the error of the first failure and then of every power-of-two-th, for the message
// that ends the run: a recent sample, without an allocation per failure.
func (a *Attempts) keep(n uint64, err error) {
	if err != nil && n&(n-1) == 0 {
		a.lastErr.Store(&err)
	}
}

// EnforceTimeout makes a decision that came back slower than the timeout a timeout, as a
// served request would have been cut off at the deadline: --timeout means the same for every
// target, including in-process engines that take no deadline (cedar-go) and decisions too short
// for OPA to look at its own. took is the service time alone, from the send to the answer.
func EnforceTimeout(out verify.Outcome, took, timeout time.Duration) verify.Outcome {
	if timeout > 0 && took > timeout && out.Kind != verify.TimedOut && out.Kind != verify.TransportFailure {
		return verify.Outcome{Kind: verify.TimedOut, ConnectNS: out.ConnectNS, TLSNS: out.TLSNS,
			Err: fmt.Errorf("answered in %s, after the %s timeout", took, timeout)}
	}
	return out
}

// WatchFailing ends the run, through cancel, when its target can measure nothing more:
//   - almost every attempt fails before it is sent (99 % or more of at least 1,000): the timeout is
//     too short for a connect or a write, and counting those as requests would report millions
//     of requests nobody made;
//   - no answer at all for max(2 s, twice the timeout) while requests kept failing, or for
//     10,000 failed requests in a row: the target stopped answering (refused connections), or,
//     when every one of those requests ran out of time, the timeout is shorter than the target
//     takes (an in-process engine given 1ns never fails to answer; it is cut off), and the
//     message says so first, as the README promises.
//
// A slow target is not failing: requests still in flight, not yet timed out, end nothing.
// It returns at once; the watch ends with ctx.
func WatchFailing(ctx context.Context, cancel context.CancelCauseFunc, all []*Attempts, timeout time.Duration) {
	given := timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	silence := max(minSilence, 2*timeout)
	go func() {
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		w := watcher{all: all, silence: silence, timeout: given, lastAnswerAt: time.Now()}
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				if err := w.check(now); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
}

type watcher struct {
	all     []*Attempts
	silence time.Duration
	timeout time.Duration // the run's, to name when it is what every failure ran into
	// The not-sent rule's window: totals when it began.
	windowSent, windowNotSent uint64
	// The silence rule: the answer count last seen, when it last grew, failures by then.
	answers, failedByThen, timedOutByThen uint64
	lastAnswerAt                          time.Time
}

func (w *watcher) check(now time.Time) error {
	var answered, failed, timedOut, notSent uint64
	var lastErr error
	for _, a := range w.all {
		answered += a.answered.Load()
		timedOut += a.timedOut.Load()
		failed += a.failed.Load()
		notSent += a.notSent.Load()
		if e := a.lastErr.Load(); e != nil {
			lastErr = *e
		}
	}
	sent := answered + failed
	if dn, ds := notSent-w.windowNotSent, sent-w.windowSent; dn+ds >= notSentWindow {
		if dn*100 >= (dn+ds)*99 {
			return fmt.Errorf("nothing could be sent: %d of %d attempts ended before a byte left authzbench (%v); the timeout is too short for a connect or a write: raise --timeout (timeout: in a scenario)",
				dn, dn+ds, lastErr)
		}
		w.windowNotSent, w.windowSent = notSent, sent
	}
	if answered != w.answers {
		w.answers, w.failedByThen, w.timedOutByThen, w.lastAnswerAt = answered, failed, timedOut, now
		return nil
	}
	failedSince := failed - w.failedByThen
	if quiet := now.Sub(w.lastAnswerAt); failedSince > 0 && quiet >= w.silence || failedSince >= silentFailures {
		if timedOut-w.timedOutByThen == failedSince && w.timeout > 0 {
			return fmt.Errorf("the timeout is too short, or the target stopped answering: the %d requests since the last answer all ran past the %s timeout (%v); "+
				"raise --timeout (timeout: in a scenario) above what the target takes to decide", failedSince, w.timeout, lastErr)
		}
		return fmt.Errorf("no answer from the target for %s: the %d requests since the last answer all failed (%v)",
			quiet.Round(100*time.Millisecond), failedSince, lastErr)
	}
	return nil
}
