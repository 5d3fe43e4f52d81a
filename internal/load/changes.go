package load

import (
	"context"
	"time"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Changes is the world changing during a run: a writer applies the stream beside the load, in
// order, at Rate changes a second from the start of the measured phase, and every measured
// decision is judged against the versions it may reflect (change.Judge) instead of one fixed
// expectation. A run without changes takes none of these paths.
type Changes struct {
	// Source names where the changes came from, for the result: a file, a built-in family.
	Source  string
	Stream  *change.Stream
	Applier change.Applier
	Rate    float64
	// Allowed is how old a stale answer may be within the consistency's promise; 0: none may.
	Allowed time.Duration
	// WriteTimeout bounds each write; 0: 5 s.
	WriteTimeout time.Duration
}

// ChangesOutcome is what became of the changes and how the answers were judged.
type ChangesOutcome struct {
	Log   *change.Log
	Judge *change.Judge
	Tally *change.Tally // every worker's, merged
	// WriteErr is the write that failed, which stopped the stream and the run; nil when none.
	WriteErr error
	// MeasuredFrom is the start of the measured window, from the log's base: the log's times
	// less it are the window's, as the run's intervals are.
	MeasuredFrom time.Duration
}

// world is a run's changes under way: the log the writer fills and the judge every worker
// reads.
type world struct {
	changes *Changes
	log     *change.Log
	judge   *change.Judge
	tallies []*change.Tally
	span    time.Duration // how long after the log's base an answer may come back
	ceiling time.Duration
	done    chan struct{}
	loadEnd chan struct{} // closed when the load is over: the writer starts no more writes
	err     error
	from    time.Duration // the measured window's start, from the log's base
}

func (c Spec) newWorld(span time.Duration) *world {
	if c.Changes == nil {
		return nil
	}
	log := change.NewLog(c.Changes.Stream.Len(), time.Now())
	return &world{changes: c.Changes, log: log, judge: &change.Judge{Stream: c.Changes.Stream, Log: log, Allowed: c.Changes.Allowed},
		span: span, ceiling: c.Ceiling}
}

// worker returns a judging share for one worker (or shard); nil without changes.
func (w *world) worker() *judging {
	if w == nil {
		return nil
	}
	t := change.NewTally(w.changes.Stream.Len(), 0, w.span, w.ceiling)
	w.tallies = append(w.tallies, t)
	return &judging{judge: w.judge, tally: t}
}

// base is the time the log's offsets are from.
func (w *world) base() time.Time {
	if w == nil {
		return time.Time{}
	}
	return w.log.Base
}

// write starts the writer: changes due from from on (offsets from the log's base) until until.
// A failed write stops the run with its error.
func (w *world) write(ctx context.Context, cancel context.CancelCauseFunc, from, until time.Duration) {
	if w == nil {
		return
	}
	w.done, w.loadEnd, w.from = make(chan struct{}), make(chan struct{}), from
	wr := change.Writer{Stream: w.changes.Stream, Log: w.log, Applier: w.changes.Applier, Rate: w.changes.Rate, Timeout: w.changes.WriteTimeout,
		Done: w.loadEnd}
	go func() {
		defer close(w.done)
		if err := wr.Run(ctx, from, until); err != nil {
			w.err = err
			cancel(err)
		}
	}()
}

// outcome stops the writer (a write in flight finishes), waits for it and merges the workers'
// tallies; nil without changes. Called once the load is over: a run that ended early (its
// request budget spent) must not wait for the stream's next change.
func (w *world) outcome() *ChangesOutcome {
	if w == nil {
		return nil
	}
	if w.done != nil {
		close(w.loadEnd)
		<-w.done
	}
	merged := change.NewTally(w.changes.Stream.Len(), 0, w.span, w.ceiling)
	for _, t := range w.tallies {
		merged.Merge(t)
	}
	return &ChangesOutcome{Log: w.log, Judge: w.judge, Tally: merged, WriteErr: w.err, MeasuredFrom: w.from}
}

// judging is one worker's share of a run with changes.
type judging struct {
	judge *change.Judge
	tally *change.Tally
	shift time.Duration // the worker's clock base less the log's
}

// from says that the worker's clock offsets are taken from base.
func (j *judging) from(base time.Time) {
	if j != nil {
		j.shift = base.Sub(j.judge.Log.Base)
	}
}

// expect judges one measured answer, sent and received at offsets of the worker's clock, and
// returns the expectation to classify it by: the answer's own decision when some version it may
// reflect gives it, the other one when none does (a wrong decision), the input's own when it has
// none or the answer is no decision.
func (j *judging) expect(i int, fixed workload.Expect, out verify.Outcome, sent, received, latency time.Duration) workload.Expect {
	j.tally.Answered(received + j.shift)
	if out.Kind != verify.Decided || fixed == workload.Unverified {
		return fixed
	}
	a := change.Answer{Input: i, Allow: out.Allow, Named: out.Versioned, Version: int(out.Version),
		Sent: sent + j.shift, Received: received + j.shift}
	right := j.tally.Record(j.judge, a, latency) != change.Wrong
	if out.Allow == right {
		return workload.ExpectAllow
	}
	return workload.ExpectDeny
}
