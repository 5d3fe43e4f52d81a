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

	// Open loop only (nil otherwise): latency of ok responses from the actual send, which is what
	// a tool without coordinated-omission correction would report, and how late each send
	// started after its intended time.
	Uncorrected *hdrhistogram.Histogram
	Lateness    *hdrhistogram.Histogram
	Late        uint64 // sends that started later than the late threshold

	// Connect time of the measured requests that opened a connection; nil until one did.
	Connect *hdrhistogram.Histogram
	// Reconnects counts measured requests that found their kept-alive connection closed by the
	// server and went out on a new one (counted in Connect too, never as errors).
	Reconnects uint64

	// The server's own timers for the ok responses that reported them; nil until one did.
	ServerEval, ServerHandler *hdrhistogram.Histogram

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

// NewOpenRecorder returns an empty recorder for an open-loop run.
func NewOpenRecorder() *Recorder {
	r := NewRecorder()
	r.Uncorrected, r.Lateness = NewHistogram(), NewHistogram()
	return r
}

// RecordSend adds what an open-loop send adds beyond Record: how late it started and, for an ok
// response, its latency measured from the actual send.
func (r *Recorder) RecordSend(ok bool, lateness, fromActualSend, lateAfter time.Duration) {
	if lateness > lateAfter {
		r.Late++
	}
	r.Lateness.RecordValue(clamp(int64(lateness))) //nolint:errcheck // clamped into range
	if ok {
		r.Uncorrected.RecordValue(clamp(int64(fromActualSend))) //nolint:errcheck // clamped into range
	}
}

func clamp(ns int64) int64 {
	return min(max(ns, lowestNanos), highestNanos)
}

// RecordConnect adds the connect time of a request that opened a connection.
func (r *Recorder) RecordConnect(ns int64) {
	if ns <= 0 {
		return
	}
	if r.Connect == nil {
		r.Connect = NewHistogram()
	}
	r.Connect.RecordValue(clamp(ns)) //nolint:errcheck // clamped into range
}

// RecordServer adds the server's own timers of an ok response, when it reported them.
func (r *Recorder) RecordServer(evalNS, handlerNS int64) {
	if evalNS <= 0 && handlerNS <= 0 {
		return
	}
	if r.ServerEval == nil {
		r.ServerEval, r.ServerHandler = NewHistogram(), NewHistogram()
	}
	if evalNS > 0 {
		r.ServerEval.RecordValue(clamp(evalNS)) //nolint:errcheck // clamped into range
	}
	if handlerNS > 0 {
		r.ServerHandler.RecordValue(clamp(handlerNS)) //nolint:errcheck // clamped into range
	}
}

// Record adds one classified response and its latency.
func (r *Recorder) Record(c verify.Class, status int, latency time.Duration) {
	ns := clamp(int64(latency)) // beyond the ceiling: counted there rather than lost
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
	r.Reconnects += other.Reconnects
	if other.Connect != nil {
		if r.Connect == nil {
			r.Connect = NewHistogram()
		}
		r.Connect.Merge(other.Connect)
	}
	if other.ServerEval != nil {
		if r.ServerEval == nil {
			r.ServerEval, r.ServerHandler = NewHistogram(), NewHistogram()
		}
		r.ServerEval.Merge(other.ServerEval)
		r.ServerHandler.Merge(other.ServerHandler)
	}
	if other.Uncorrected != nil {
		if r.Uncorrected == nil {
			r.Uncorrected, r.Lateness = NewHistogram(), NewHistogram()
		}
		r.Uncorrected.Merge(other.Uncorrected)
		r.Lateness.Merge(other.Lateness)
		r.Late += other.Late
	}
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
