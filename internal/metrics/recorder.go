// Package metrics records latencies and outcome counts without disturbing what is measured.
// The statistics a report shows (percentiles, spreads) are the result package's: it reads them
// from the histograms recorded here, once they are merged and stored in the result document.
//
// Each load worker owns one Recorder: recording touches only that worker's memory (no locks, no
// shared cache lines, no allocation once a status code has been seen), and memory stays flat
// however many requests run. Recorders are merged after the load stops; percentiles always come
// from merged histograms, never from averaging percentiles.
package metrics

import (
	"strings"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Histogram bounds: 1 ns resolution floor up to 60 s at least, 3 significant figures.
// Nanoseconds rather than microseconds so an in-process decision of a few microseconds keeps
// three digits. A run that can wait longer than 60 s for an answer (a long --timeout, an open
// loop whose sends queue behind a stalled server) raises the ceiling to cover it: the buckets
// depend only on the floor and the significant figures, so histograms of different ceilings
// merge exactly.
const (
	lowestNanos  = 1
	highestNanos = int64(60 * time.Second)
	sigFigs      = 3
	// messageMax bounds a class's sample message: enough for an error's words or the start of
	// an error page, not a whole body in the result document.
	messageMax = 200
)

// NewHistogram returns an empty latency histogram in nanoseconds, up to 60 s.
func NewHistogram() *hdrhistogram.Histogram { return newHistogram(highestNanos) }

func newHistogram(ceiling int64) *hdrhistogram.Histogram {
	return hdrhistogram.New(lowestNanos, ceiling, sigFigs)
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

	// ceiling is the largest latency the histograms hold, in ns; Clamped counts the responses
	// (ok or not) whose latency lay beyond it and was recorded at it, so the slowest
	// percentiles read low by that many. The other histograms (connect, lateness, latency from
	// the actual send) hold parts of a response's latency, so they cannot pass the ceiling
	// unless its latency did too.
	ceiling int64
	Clamped uint64

	// Mismatches are the inputs given a wrong decision, lowest input number first, each once, at
	// most MismatchesKept: which inputs, not only how many, so a user can look at them.
	Mismatches []Mismatch

	// FirstMessages says what went wrong with the first response of each error class that
	// carried a message, by the class's report name (http_503, transport, ...).
	FirstMessages map[string]string

	// Open loop only (nil otherwise): latency of ok responses from the actual send, which is what
	// a tool without coordinated-omission correction would report, and how late each send
	// started after its intended time.
	Uncorrected *hdrhistogram.Histogram
	Lateness    *hdrhistogram.Histogram
	Late        uint64 // sends that started later than the late threshold, for any reason
	// GeneratorLate counts the late sends the generator itself was late for, a connection free.
	GeneratorLate uint64
	// Unsent holds, for each send that came due but never went out, its lower bound: from its
	// intended time to when the run gave up on it (counted as class unsent).
	Unsent *hdrhistogram.Histogram

	// Connect time of the measured requests that opened a connection; nil until one did.
	Connect *hdrhistogram.Histogram
	// TLS and Exchange are the other parts of those requests' latency: the TLS handshake (nil
	// until one was timed) and what followed the connection's opening, the request written and
	// its answer read. Connect, TLS and Exchange add up to the request's latency.
	TLS, Exchange *hdrhistogram.Histogram
	// Reconnects counts measured requests that found their kept-alive connection closed by the
	// server and went out on a new one (counted in Connect too, never as errors).
	Reconnects uint64

	// Allowed and Denied are the ok responses' latencies apart by the decision they carried;
	// nil until one did. A denied check walks every branch, an allowed one may stop early.
	Allowed, Denied *hdrhistogram.Histogram

	// The server's own timers for the ok responses that reported them; nil until one did.
	ServerEval, ServerHandler *hdrhistogram.Histogram
	// Timed is a bounded sample of those responses with their client latency, for the
	// attribution of their time; nil until one reported both timers. It is the result
	// document's own type (result is a leaf) so that workers, repetitions and documents are
	// thinned by one rule and merge alike.
	Timed    *result.Sample
	timedCap int // ShareTimedSample's bound on Timed; 0: result.SampleCap

	// Live counters for a progress line; written by the owning worker only.
	liveOK, liveErrors atomic.Uint64
	_                  [48]byte // keep neighbouring recorders' counters off this cache line
}

type statusKey struct {
	Class  verify.Class
	Status int
}

// NewRecorder returns an empty recorder whose histograms hold up to 60 s.
func NewRecorder() *Recorder { return NewRecorderUpTo(0) }

// NewRecorderUpTo returns an empty recorder whose histograms hold latencies up to ceiling, or
// up to 60 s if that is more.
func NewRecorderUpTo(ceiling time.Duration) *Recorder {
	c := max(int64(ceiling), highestNanos)
	return &Recorder{OK: newHistogram(c), Errors: newHistogram(c), Statuses: map[statusKey]uint64{}, ceiling: c}
}

// NewOpenRecorder returns an empty recorder for an open-loop run, up to 60 s.
func NewOpenRecorder() *Recorder { return NewOpenRecorderUpTo(0) }

// NewOpenRecorderUpTo returns an empty recorder for an open-loop run, up to ceiling (at least
// 60 s).
func NewOpenRecorderUpTo(ceiling time.Duration) *Recorder {
	r := NewRecorderUpTo(ceiling)
	r.Uncorrected, r.Lateness, r.Unsent = newHistogram(r.ceiling), newHistogram(r.ceiling), newHistogram(r.ceiling)
	return r
}

// Ceiling is the largest latency the recorder's histograms hold.
func (r *Recorder) Ceiling() time.Duration { return time.Duration(r.ceiling) }

// RecordSend adds what an open-loop send adds beyond Record: how late it started (in all, and
// through the generator's own fault) and, for an ok response, its latency measured from the
// actual send.
func (r *Recorder) RecordSend(ok bool, lateness, generatorLateness, fromActualSend, lateAfter time.Duration) {
	if lateness > lateAfter {
		r.Late++
	}
	if generatorLateness > lateAfter {
		r.GeneratorLate++
	}
	r.Lateness.RecordValue(r.clamp(int64(lateness))) //nolint:errcheck // clamped into range
	if ok {
		r.Uncorrected.RecordValue(r.clamp(int64(fromActualSend))) //nolint:errcheck // clamped into range
	}
}

// RecordUnsent counts an open-loop send that came due but never went out, charged its lower
// bound: from its intended time to when the run gave up on it.
func (r *Recorder) RecordUnsent(lowerBound time.Duration) {
	r.Counts[verify.Unsent]++
	if int64(lowerBound) > r.ceiling {
		r.Clamped++
	}
	r.Unsent.RecordValue(r.clamp(int64(lowerBound))) //nolint:errcheck // clamped into range
	r.liveErrors.Add(1)
}

// Corrected is the open-loop latency of every due send from its intended time: the ok
// responses, and the unsent sends at their lower bound, so sends a stall kept from going out
// cannot hide. Nil outside open loop.
func (r *Recorder) Corrected() *hdrhistogram.Histogram {
	if r.Unsent == nil {
		return nil
	}
	h := newHistogram(r.ceiling)
	h.Merge(r.OK)
	h.Merge(r.Unsent)
	return h
}

func (r *Recorder) clamp(ns int64) int64 {
	return min(max(ns, lowestNanos), r.ceiling)
}

// RecordConnect adds the connect time of a request that opened a connection.
func (r *Recorder) RecordConnect(ns int64) {
	if ns <= 0 {
		return
	}
	if r.Connect == nil {
		r.Connect = newHistogram(r.ceiling)
	}
	r.Connect.RecordValue(r.clamp(ns)) //nolint:errcheck // clamped into range
}

// RecordConnectParts adds the parts of a request's latency when it opened a connection: its
// TCP connect, TLS handshake (0 in clear) and the rest, the exchange. A request that reused a
// connection (connectNS 0) has no parts: its latency is all exchange, already recorded.
func (r *Recorder) RecordConnectParts(connectNS, tlsNS int64, latency time.Duration) {
	if connectNS <= 0 {
		return
	}
	r.RecordConnect(connectNS)
	if tlsNS > 0 {
		if r.TLS == nil {
			r.TLS = newHistogram(r.ceiling)
		}
		r.TLS.RecordValue(r.clamp(tlsNS)) //nolint:errcheck // clamped into range
	}
	if r.Exchange == nil {
		r.Exchange = newHistogram(r.ceiling)
	}
	r.Exchange.RecordValue(r.clamp(int64(latency) - connectNS - max(tlsNS, 0))) //nolint:errcheck // clamped into range
}

// RecordServer adds the server's own timers of an ok response, when it reported them.
func (r *Recorder) RecordServer(evalNS, handlerNS int64) {
	if evalNS <= 0 && handlerNS <= 0 {
		return
	}
	if r.ServerEval == nil {
		r.ServerEval, r.ServerHandler = newHistogram(r.ceiling), newHistogram(r.ceiling)
	}
	if evalNS > 0 {
		r.ServerEval.RecordValue(r.clamp(evalNS)) //nolint:errcheck // clamped into range
	}
	if handlerNS > 0 {
		r.ServerHandler.RecordValue(r.clamp(handlerNS)) //nolint:errcheck // clamped into range
	}
}

// ShareTimedSample bounds this recorder's sample of timed responses to its share of the run's,
// when that many recorders share the run: each then holds at most its share (and no less than
// minTimedShare), and merged they thin to the same rate as one recorder would have.
// Without it, a thousand workers could each keep a whole run's sample.
func (r *Recorder) ShareTimedSample(recorders int) {
	r.timedCap = max(result.SampleCap/max(recorders, 1), minTimedShare)
	if r.Timed != nil {
		r.Timed.Cap = r.timedCap
	}
}

// minTimedShare keeps a worker's share of the sample from thinning it too soon.
const minTimedShare = 1024

// RecordTimed offers an ok response that reported both server timers to the sample, with its
// latency as recorded (in open loop from the intended send) and, in open loop, how late its
// send went out (queued; 0 in closed loop).
func (r *Recorder) RecordTimed(latency, queued time.Duration, evalNS, handlerNS int64) {
	if evalNS <= 0 || handlerNS <= 0 {
		return // one timer alone cannot split the time
	}
	if r.Timed == nil {
		r.Timed = &result.Sample{Cap: r.timedCap}
	}
	r.Timed.Add(result.Triple{ClientNS: int64(latency), HandlerNS: handlerNS, EvalNS: evalNS, QueuedNS: max(int64(queued), 0)})
}

// Record adds one classified response and its latency.
func (r *Recorder) Record(c verify.Class, status int, latency time.Duration) {
	if int64(latency) > r.ceiling {
		r.Clamped++ // recorded at the ceiling rather than lost, and counted so the report says so
	}
	ns := r.clamp(int64(latency))
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

// RecordDecision adds an ok response's latency to its decision's histogram.
func (r *Recorder) RecordDecision(allow bool, latency time.Duration) {
	h := &r.Denied
	if allow {
		h = &r.Allowed
	}
	if *h == nil {
		*h = newHistogram(r.ceiling)
	}
	(*h).RecordValue(r.clamp(int64(latency))) //nolint:errcheck // clamped into range
}

// RecordMessage keeps what went wrong with a response Record has just counted, if it was the
// first of its error class: the target's error (the OS's words, the engine's, the start of an
// error page) or, for a wrong decision, what was expected and what came. Past a class's first
// response it costs one comparison, so a storm of errors stays cheap.
func (r *Recorder) RecordMessage(c verify.Class, expect workload.Expect, out verify.Outcome) {
	if c == verify.OK {
		return
	}
	if verify.HasStatus(c) {
		if r.Statuses[statusKey{c, out.Status}] != 1 {
			return
		}
	} else if r.Counts[c] != 1 {
		return
	}
	var msg string
	switch {
	case out.Err != nil:
		msg = out.Err.Error()
	case c == verify.WrongDecision:
		msg = "expected " + decisionWord(expect == workload.ExpectAllow) + ", the engine decided " + decisionWord(out.Allow)
	default:
		return
	}
	if len(msg) > messageMax {
		msg = strings.ToValidUTF8(msg[:messageMax], "") + "…"
	}
	if r.FirstMessages == nil {
		r.FirstMessages = map[string]string{}
	}
	r.FirstMessages[verify.Name(c, out.Status)] = msg
}

// MismatchesKept bounds the wrong decisions a recorder names: enough to see a pattern, few
// enough for a result document.
const MismatchesKept = 20

// Mismatch is an input that got a wrong decision.
type Mismatch struct {
	Input  int // index into the workload's inputs
	Expect workload.Expect
	Allow  bool // what the engine decided
}

// RecordMismatch keeps input among the lowest-numbered inputs given a wrong decision. It does
// nothing for any other class, so a correct decision costs one comparison; a wrong one, at
// most a scan of MismatchesKept entries.
func (r *Recorder) RecordMismatch(c verify.Class, input int, expect workload.Expect, out verify.Outcome) {
	if c != verify.WrongDecision {
		return
	}
	r.Mismatches = keepMismatch(r.Mismatches, Mismatch{Input: input, Expect: expect, Allow: out.Allow})
}

// keepMismatch inserts m into ms, which is sorted by input and holds each input once, keeping
// the MismatchesKept lowest: the same inputs whichever worker met them first.
func keepMismatch(ms []Mismatch, m Mismatch) []Mismatch {
	at := len(ms)
	for i, x := range ms {
		if x.Input == m.Input {
			return ms
		}
		if x.Input > m.Input {
			at = i
			break
		}
	}
	if at == MismatchesKept {
		return ms
	}
	if ms == nil {
		ms = make([]Mismatch, 0, MismatchesKept)
	}
	if len(ms) < MismatchesKept {
		ms = append(ms, Mismatch{})
	}
	copy(ms[at+1:], ms[at:len(ms)-1])
	ms[at] = m
	return ms
}

func decisionWord(allow bool) string {
	if allow {
		return "allow"
	}
	return "deny"
}

// Live returns the running ok and error counts; safe to call from another goroutine.
func (r *Recorder) Live() (ok, errors uint64) { return r.liveOK.Load(), r.liveErrors.Load() }

// Merge folds other into r. Histograms merge exactly, whatever their ceilings: r's grow to
// other's first when other's is higher. Each class keeps r's first message if it has one.
func (r *Recorder) Merge(other *Recorder) {
	if other.ceiling > r.ceiling {
		r.raiseCeiling(other.ceiling)
	}
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
	r.Clamped += other.Clamped
	for _, m := range other.Mismatches {
		r.Mismatches = keepMismatch(r.Mismatches, m)
	}
	for class, msg := range other.FirstMessages {
		if _, ok := r.FirstMessages[class]; !ok {
			if r.FirstMessages == nil {
				r.FirstMessages = map[string]string{}
			}
			r.FirstMessages[class] = msg
		}
	}
	r.Reconnects += other.Reconnects
	for _, h := range []struct{ into, from **hdrhistogram.Histogram }{
		{&r.Connect, &other.Connect}, {&r.TLS, &other.TLS}, {&r.Exchange, &other.Exchange},
		{&r.Allowed, &other.Allowed}, {&r.Denied, &other.Denied}} {
		if *h.from != nil {
			if *h.into == nil {
				*h.into = newHistogram(r.ceiling)
			}
			(*h.into).Merge(*h.from)
		}
	}
	if other.ServerEval != nil {
		if r.ServerEval == nil {
			r.ServerEval, r.ServerHandler = newHistogram(r.ceiling), newHistogram(r.ceiling)
		}
		r.ServerEval.Merge(other.ServerEval)
		r.ServerHandler.Merge(other.ServerHandler)
	}
	if other.Timed != nil && other.Timed.Seen > 0 {
		if r.Timed == nil {
			r.Timed = &result.Sample{Cap: r.timedCap}
		}
		r.Timed.Merge(other.Timed)
	}
	if other.Uncorrected != nil {
		if r.Uncorrected == nil {
			r.Uncorrected, r.Lateness, r.Unsent = newHistogram(r.ceiling), newHistogram(r.ceiling), newHistogram(r.ceiling)
		}
		r.Uncorrected.Merge(other.Uncorrected)
		r.Lateness.Merge(other.Lateness)
		r.Unsent.Merge(other.Unsent)
		r.Late += other.Late
		r.GeneratorLate += other.GeneratorLate
	}
	r.liveOK.Add(other.liveOK.Load())
	r.liveErrors.Add(other.liveErrors.Load())
}

// raiseCeiling moves every histogram r has into one that holds up to ceiling: same floor and
// significant figures, so the same buckets, and nothing recorded moves.
func (r *Recorder) raiseCeiling(ceiling int64) {
	r.ceiling = ceiling
	for _, h := range []**hdrhistogram.Histogram{&r.OK, &r.Errors, &r.Uncorrected, &r.Lateness, &r.Unsent, &r.Connect, &r.TLS, &r.Exchange, &r.ServerEval, &r.ServerHandler, &r.Allowed, &r.Denied} {
		if *h == nil {
			continue
		}
		bigger := newHistogram(ceiling)
		bigger.Merge(*h)
		*h = bigger
	}
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
