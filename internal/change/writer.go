package change

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Applier sends one change to the system under test and returns once it is acknowledged or
// has failed: what a target that takes writes gives the writer (kinds.Writable).
type Applier interface {
	Apply(ctx context.Context, version int, c Change) Ack
}

// Preparer is an Applier that builds what it sends from the whole stream before the clock
// starts (OPA's bundle server builds each version's bundle), so that a write sends what was
// built and its latency is the engine's, not the building's. Its error refuses the stream.
type Preparer interface {
	Prepare(ctx context.Context, changes []Change) error
}

// Ack is what became of one write.
type Ack struct {
	// Token is what the engine returned to name the write, if anything (SpiceDB's written_at).
	Token string
	// Class names the error when the write was not acknowledged (http_409, transport, timeout,
	// refused, deadlock, conflict, ...); empty when it was.
	Class string
	Err   error
}

// Interrupted is the class of a write in flight when the run stopped: never counted as
// applied, whatever the engine did with it.
const Interrupted = "interrupted"

// Writer applies a stream's changes in order, one at a time, at Rate changes a second, and
// records each in the log.
type Writer struct {
	Stream  *Stream
	Log     *Log
	Applier Applier
	Rate    float64 // changes a second; each is due at From + (k-1)/Rate
	// Timeout bounds each write; 0: 5 s.
	Timeout time.Duration
	// Done, when closed, starts no more writes: the load is over. A write in flight finishes.
	Done <-chan struct{}
}

// Check reports a rate that cannot pace a stream.
func CheckRate(rate float64) error {
	if !(rate > 0) || rate > 1e6 {
		return fmt.Errorf("%v: want a rate of changes above 0 and at most 1e6 a second, such as 10/s", rate)
	}
	return nil
}

// Run applies the changes due from offset from on (from the log's Base), each when due or, when
// the one before took longer, right after it. It returns when every change was applied, a write
// failed (the changes after it assume it applied: the stream stops there, the failure in the
// log), until is reached, or ctx ends (a write then in flight is recorded as Interrupted, never
// as applied). Every write is bounded by the timeout, so Run is bounded by until plus one.
func (w *Writer) Run(ctx context.Context, from, until time.Duration) error {
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	period := time.Duration(float64(time.Second) / w.Rate)
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for k := 1; k <= w.Stream.Len(); k++ {
		due := from + time.Duration(k-1)*period
		if due >= until {
			return nil
		}
		if wait := due - time.Since(w.Log.Base); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return nil
			case <-w.Done:
				return nil
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		select {
		case <-w.Done:
			return nil
		default:
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		start := time.Since(w.Log.Base)
		w.Log.Started(k, start)
		ack := w.Applier.Apply(wctx, k, w.Stream.Changes[k-1])
		end := time.Since(w.Log.Base)
		timedOut := wctx.Err() != nil && ctx.Err() == nil
		cancel()
		write := Write{Version: k, Start: start, Token: ack.Token, Class: ack.Class, Err: ack.Err}
		switch {
		case ack.Class == "" && ack.Err == nil:
			write.Ack = end
			w.Log.Acknowledged(k, end)
		case ctx.Err() != nil:
			write.Class, write.Err = Interrupted, errors.Join(ack.Err, context.Cause(ctx))
		case timedOut && ack.Class == "":
			write.Class = "timeout"
		case ack.Class == "":
			write.Class = "error"
		}
		w.Log.Writes = append(w.Log.Writes, write)
		if !write.Acknowledged() {
			if write.Class == Interrupted {
				return nil
			}
			where := ""
			if src := w.Stream.Changes[k-1].Source; src != "" {
				where = " (" + src + ")"
			}
			return fmt.Errorf("change %d%s not applied (%s): %w; the changes after it were not sent", k, where, write.Class, write.Err)
		}
	}
	return nil
}
