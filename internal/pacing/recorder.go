// Package pacing judges a load generator's pacing from the server's side: it records when each
// request arrives (Recorder) and compares those arrivals with the ideal schedule k/rate, or a
// replay's schedule of recorded offsets (Analyze). It needs no cooperation from the generator, so it judges any tool alike, ours or
// another's. It is not a load generator and knows nothing of HTTP: the trivial server calls
// Record when a request's first byte is there.
package pacing

import (
	"sync/atomic"
	"time"
)

// DefaultCap bounds a recording: 10 million arrivals are 80 MB, about 17 minutes at 10,000
// req/s. Arrivals past the cap are counted, not stored.
const DefaultCap = 10_000_000

// Recorder stores arrival times, relative to its creation on the monotonic clock, into one
// slice allocated up front: Record is a clock read, an atomic add and a store, with no lock and
// no allocation, so recording does not slow the answer it precedes. The slice's pages are
// touched only as arrivals fill it, so an unused cap costs address space, not memory.
type Recorder struct {
	start time.Time
	at    []time.Duration
	seen  atomic.Int64
}

// NewRecorder returns a recorder that stores up to capacity arrivals.
func NewRecorder(capacity int) *Recorder {
	return &Recorder{start: time.Now(), at: make([]time.Duration, capacity)}
}

// Record notes one arrival now. It is safe for concurrent use. The clock is read before the
// slot is taken, so the stored order is not quite the arrival order when connections race:
// Analyze sorts.
func (r *Recorder) Record() {
	t := time.Since(r.start)
	if i := r.seen.Add(1) - 1; i < int64(len(r.at)) {
		r.at[i] = t
	}
}

// Seen is how many arrivals were recorded, those past the cap included.
func (r *Recorder) Seen() int64 { return r.seen.Load() }

// Cap is how many arrivals the recorder stores.
func (r *Recorder) Cap() int { return len(r.at) }

// CapReached says whether arrivals were dropped for want of room.
func (r *Recorder) CapReached() bool { return r.Seen() > int64(len(r.at)) }

// Arrivals returns the stored arrivals, in no particular order. Call it once no Record can run
// any more (the server has closed its connections and they have returned): it reads what
// Record wrote without a lock.
func (r *Recorder) Arrivals() []time.Duration {
	return r.at[:min(r.Seen(), int64(len(r.at)))]
}
