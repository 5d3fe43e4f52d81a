// Package metrics records latencies and outcome counts without disturbing what is measured,
// and turns them into the statistics a report shows.
//
// Each load worker owns one Recorder: recording touches only that worker's memory (no locks, no
// shared cache lines, no allocation once a status code has been seen), and memory stays flat
// however many requests run. Recorders are merged after the load stops; percentiles always come
// from merged histograms, never from averaging percentiles.
package metrics

import (
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/verify"
)

// Histogram bounds: 1 ns resolution floor up to 60 s, 3 significant figures. Nanoseconds rather
// than microseconds so an in-process decision of a few microseconds keeps three digits.
const (
	lowestNanos  = 1
	highestNanos = int64(60 * time.Second)
	sigFigs      = 3
)

// NewHistogram returns an empty latency histogram in nanoseconds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(lowestNanos, highestNanos, sigFigs)
}

// Recorder holds one worker's measurements.
type Recorder struct {
	OK     *hdrhistogram.Histogram // latencies of ok responses
	Errors *hdrhistogram.Histogram // latencies of every other response, kept apart

	Counts   [verify.NumClasses]uint64
	Statuses map[statusKey]uint64 // http_<code> and exit_<code>, by code
	okNanos  int64                // exact sum, so the mean is not a histogram approximation
	// UnverifiedOK counts ok responses to inputs that carried no expected decision.
	UnverifiedOK uint64

	// Live counters for a progress line; written by the owning worker only.
	liveOK, liveErrors atomic.Uint64
	_                  [48]byte // keep neighbouring recorders' counters off this cache line
}

type statusKey struct {
	Class  verify.Class
	Status int
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{OK: NewHistogram(), Errors: NewHistogram(), Statuses: map[statusKey]uint64{}}
}

// Record adds one classified response and its latency.
func (r *Recorder) Record(c verify.Class, status int, latency time.Duration) {
	ns := int64(latency)
	if ns > highestNanos {
		ns = highestNanos // counted at the ceiling rather than lost
	} else if ns < lowestNanos {
		ns = lowestNanos
	}
	r.Counts[c]++
	if c == verify.OK {
		r.OK.RecordValue(ns) //nolint:errcheck // clamped into range above
		r.okNanos += ns
		r.liveOK.Add(1)
		return
	}
	if verify.HasStatus(c) {
		r.Statuses[statusKey{c, status}]++
	}
	r.Errors.RecordValue(ns) //nolint:errcheck // clamped into range above
	r.liveErrors.Add(1)
}

// Live returns the running ok and error counts; safe to call from another goroutine.
func (r *Recorder) Live() (ok, errors uint64) { return r.liveOK.Load(), r.liveErrors.Load() }

// Merge folds other into r. Histograms merge exactly.
func (r *Recorder) Merge(other *Recorder) {
	r.OK.Merge(other.OK)
	r.Errors.Merge(other.Errors)
	for i, n := range other.Counts {
		r.Counts[i] += n
	}
	for k, n := range other.Statuses {
		r.Statuses[k] += n
	}
	r.okNanos += other.okNanos
	r.UnverifiedOK += other.UnverifiedOK
	r.liveOK.Add(other.liveOK.Load())
	r.liveErrors.Add(other.liveErrors.Load())
}

// Requests is the number of responses recorded, of every class.
func (r *Recorder) Requests() uint64 {
	var n uint64
	for _, c := range r.Counts {
		n += c
	}
	return n
}

// ErrorCount is the number of responses that were not ok.
func (r *Recorder) ErrorCount() uint64 { return r.Requests() - r.Counts[verify.OK] }

// ErrorClasses returns the count of each non-ok class by its report name (http_400, ...).
func (r *Recorder) ErrorClasses() map[string]uint64 {
	out := map[string]uint64{}
	for c := verify.Class(1); c < verify.NumClasses; c++ {
		if r.Counts[c] == 0 || verify.HasStatus(c) {
			continue
		}
		out[verify.Name(c, 0)] = r.Counts[c]
	}
	for k, n := range r.Statuses {
		out[verify.Name(k.Class, k.Status)] += n
	}
	return out
}

// MeanOKNanos is the exact mean latency of ok responses.
func (r *Recorder) MeanOKNanos() float64 {
	n := r.Counts[verify.OK]
	if n == 0 {
		return 0
	}
	return float64(r.okNanos) / float64(n)
}
