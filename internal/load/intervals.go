package load

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Interval is what an open-loop run did with the sends due in one stretch of its measured
// window, [From, To) from the window's start: the same accounting as the whole run's Schedule
// (Due = Sent + Unsent), and the latency of those sends. A send belongs to the interval its
// intended time falls in, whenever it went out or was answered, so an interval of a ramp is
// the rate the schedule asked for then.
type Interval struct {
	From, To time.Duration
	Due      int64 // sends due in the interval
	Sent     int64
	Unsent   int64
	Late     int64 // sent more than LateAfter after their intended time, for any reason
	// GeneratorLate counts sends the generator itself started late (Schedule.GeneratorLate).
	GeneratorLate int64
	OK, Errors    int64 // of the sent ones
	// Latency holds the ok responses' latencies from their intended times and the unsent
	// sends' lower bounds, ns: the latency of every due send, as the run's summary has it.
	Latency *hdrhistogram.Histogram
}

// Schedule is the interval's own accounting, to judge with the run's rules (Missed and the rest).
func (iv Interval) Schedule() Schedule {
	return Schedule{Intended: iv.Due, Sent: iv.Sent, Unsent: iv.Unsent, Late: iv.Late, GeneratorLate: iv.GeneratorLate}
}

// intervalHistogramDigits is coarser than the run's histograms (3 digits): a ramp holds one
// histogram per interval per recorder shard, and a percentile judged against an SLO needs 1 %,
// not 0.1 %.
const intervalHistogramDigits = 2

// intervals records the measured window's sends interval by interval, for one shard of
// connections (under its lock), merged at the end. Sends are placed by intended time, an
// offset from the schedule's start; the measured window starts at measuredFrom.
type intervals struct {
	measuredFrom, every time.Duration
	ceiling             int64
	of                  []Interval
}

func newIntervals(measuredFrom, window, every, ceiling time.Duration) *intervals {
	if every <= 0 {
		return nil
	}
	n := int((window + every - 1) / every)
	iv := &intervals{measuredFrom: measuredFrom, every: every, ceiling: int64(ceiling), of: make([]Interval, n)}
	for i := range iv.of {
		iv.of[i].From = time.Duration(i) * every
		iv.of[i].To = min(window, time.Duration(i+1)*every)
		iv.of[i].Latency = hdrhistogram.New(1, iv.ceiling, intervalHistogramDigits)
	}
	return iv
}

// at is the interval the send due at intended falls in, nil outside the measured window.
func (iv *intervals) at(intended time.Duration) *Interval {
	if iv == nil || intended < iv.measuredFrom {
		return nil
	}
	i := int((intended - iv.measuredFrom) / iv.every)
	if i >= len(iv.of) {
		return nil
	}
	return &iv.of[i]
}

func (iv *intervals) clamp(d time.Duration) int64 { return min(max(1, int64(d)), iv.ceiling) }

// sent records one sent send's answer.
func (iv *intervals) sent(intended time.Duration, ok bool, latency, lateness, generatorLateness time.Duration) {
	x := iv.at(intended)
	if x == nil {
		return
	}
	x.Sent++
	if lateness > LateAfter {
		x.Late++
	}
	if generatorLateness > LateAfter {
		x.GeneratorLate++
	}
	if !ok {
		x.Errors++
		return
	}
	x.OK++
	x.Latency.RecordValue(iv.clamp(latency)) //nolint:errcheck // clamped into range
}

// unsent records a due send that never went out, at its lower bound.
func (iv *intervals) unsent(intended, lowerBound time.Duration) {
	if x := iv.at(intended); x != nil {
		x.Unsent++
		x.Latency.RecordValue(iv.clamp(lowerBound)) //nolint:errcheck // clamped into range
	}
}

// merge adds other's counts and latencies into iv's; both cover the same window.
func (iv *intervals) merge(other *intervals) {
	if iv == nil {
		return
	}
	for i := range iv.of {
		a, b := &iv.of[i], &other.of[i]
		a.Sent += b.Sent
		a.Unsent += b.Unsent
		a.Late += b.Late
		a.GeneratorLate += b.GeneratorLate
		a.OK += b.OK
		a.Errors += b.Errors
		a.Latency.Merge(b.Latency)
	}
}

// close counts each interval's due sends from the plan (those of its sends from firstMeasured
// to pastDue−1, the sends due at all: a run stopped early was due no later ones) and returns
// the intervals; nil when the run was not accounted so.
func (iv *intervals) close(pl plan, firstMeasured, pastDue int64) []Interval {
	if iv == nil {
		return nil
	}
	sendsBefore := func(d time.Duration) int64 {
		return min(pastDue, max(firstMeasured, pl.sendsBefore(iv.measuredFrom+d)))
	}
	for i := range iv.of {
		x := &iv.of[i]
		x.Due = sendsBefore(x.To) - sendsBefore(x.From)
	}
	return iv.of
}

// RateAt is the rate the load asks for at the offset t into its measured window: its stages',
// or its constant rate; 0 for a closed loop or a replay, which have no rate to ask.
func (c Spec) RateAt(t time.Duration) float64 {
	switch {
	case c.Replay != nil:
		return 0
	case len(c.Stages) > 0:
		return RateAt(c.Stages, t)
	}
	return c.Rate
}
