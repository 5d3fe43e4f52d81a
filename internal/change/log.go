package change

import (
	"sync/atomic"
	"time"
)

// Log is the writer's record of the stream as it was applied: when each change was sent and
// when it was acknowledged, and what the engine returned. One writer appends to it, in order;
// every judge reads it at once, without a lock: a change's times are written before the count
// that publishes them.
//
// Times are offsets from Base on the monotonic clock, so that a load worker converts its own
// offsets with one addition and reads no clock to be judged.
type Log struct {
	Base time.Time
	// start[k-1] and ack[k-1] are change k's; ack is 0 until acknowledged.
	start, ack []time.Duration
	// started and acked count the changes sent and acknowledged: changes go one at a time, in
	// order, so each is a prefix.
	started, acked atomic.Int64
	// Writes holds what became of each change sent, in order; the writer's alone until it
	// returns.
	Writes []Write
}

// Write is what became of one change sent.
type Write struct {
	Version int           // the version it makes
	Start   time.Duration // sent, from Base
	// Ack is when it was acknowledged, from Base; 0 when it was not.
	Ack time.Duration
	// Token is what the engine returned to name the write (SpiceDB's written_at), if anything.
	Token string
	// Class names the error when it was not acknowledged: http_409, transport, timeout, refused,
	// deadlock, ...; "interrupted" when the run stopped while it was in flight.
	Class string
	Err   error
}

// Acknowledged reports whether the write was acknowledged: only then does it count.
func (w Write) Acknowledged() bool { return w.Class == "" }

// NewLog returns an empty log for a stream of n changes, its clock starting at base.
func NewLog(n int, base time.Time) *Log {
	return &Log{Base: base, start: make([]time.Duration, n), ack: make([]time.Duration, n)}
}

// Started records that change k (from 1) was sent at offset at.
func (l *Log) Started(k int, at time.Duration) {
	l.start[k-1] = at
	l.started.Store(int64(k))
}

// Acknowledged records that change k was acknowledged at offset at.
func (l *Log) Acknowledged(k int, at time.Duration) {
	l.ack[k-1] = max(at, 1) // 0 means not acknowledged
	l.acked.Store(int64(k))
}

// AckedBefore is the last version acknowledged before offset s: what an answer sent at s must
// reflect at least. The scan starts from the newest: answers are judged as they come, so s is
// recent and few changes were acknowledged since.
func (l *Log) AckedBefore(s time.Duration) int {
	k := int(l.acked.Load())
	for k > 0 && l.ack[k-1] >= s {
		k--
	}
	return k
}

// StartedBy is the last version whose change was sent at or before offset e: the newest an
// answer received at e may reflect.
func (l *Log) StartedBy(e time.Duration) int {
	k := int(l.started.Load())
	for k > 0 && l.start[k-1] > e {
		k--
	}
	return k
}

// AckOf is when change k (from 1) was acknowledged, 0 if not (yet).
func (l *Log) AckOf(k int) time.Duration {
	if k < 1 || int64(k) > l.acked.Load() {
		return 0
	}
	return l.ack[k-1]
}

// StartOf is when change k (from 1) was sent, 0 if not (yet).
func (l *Log) StartOf(k int) time.Duration {
	if k < 1 || int64(k) > l.started.Load() {
		return 0
	}
	return l.start[k-1]
}

// Applied is the number of changes acknowledged.
func (l *Log) Applied() int { return int(l.acked.Load()) }
