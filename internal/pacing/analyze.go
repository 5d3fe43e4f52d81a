package pacing

import (
	"math"
	"slices"
	"time"
)

// LateThreshold is the lateness past which an arrival counts as late: the and the open
// loop's own measure ("sends more than 1 ms late").
const LateThreshold = time.Millisecond

// Options say which arrivals to judge, and against what schedule.
type Options struct {
	// Rate is the rate the generator was asked for, per second: the schedule is k/Rate.
	Rate float64
	// Due, when set, is the schedule in place of k/Rate: slot k is due Due[k] after the first
	// (a replay's events at their recorded offsets divided by the speed, in order). It has a
	// slot for each send the generator was asked for and no more: arrivals past the last slot
	// are counted as Extra, not judged, since no slot was meant for them.
	Due []time.Duration
	// SkipRequests leaves out the first SkipRequests arrivals, before Skip applies: requests a
	// generator is known to send before its schedule (authzbench run --url sends one probe,
	// so an unreachable address fails before any load), however soon the schedule follows.
	SkipRequests int
	// Skip leaves out the arrivals within Skip of the first one: a warm-up, a probe the
	// generator sends before its window, or connection set-up. Without it, a probe followed by
	// a pause would make every later arrival look late by the pause.
	Skip time.Duration
	// Window, when positive, judges only the arrivals within Window after the skip, and
	// expects Rate × Window of them (with Due, the slots due within Window), so a generator
	// that stops early is charged the sends it never made. Zero judges every arrival after the
	// skip and expects the slots due up to the last one; with Due, every slot of the schedule.
	Window time.Duration
}

// Analysis is how the judged arrivals kept the schedule. Lateness is in microseconds.
type Analysis struct {
	AskedRPS      float64 `json:"asked_rps"`
	SkipSeconds   float64 `json:"skip_s"`
	WindowSeconds float64 `json:"window_s"`
	// Recorded arrivals were given; Skipped fell in the skip, AfterWindow after the window;
	// Arrivals were judged.
	Recorded    int `json:"recorded"`
	Skipped     int `json:"skipped"`
	AfterWindow int `json:"after_window"`
	Arrivals    int `json:"arrivals"`
	// Extra arrivals came after every slot of a Due schedule was taken: more than asked for.
	Extra int `json:"extra,omitempty"`
	// SpanSeconds runs from the first judged arrival to the last; AchievedRPS is the arrivals
	// per interval between them.
	SpanSeconds float64 `json:"span_s"`
	AchievedRPS float64 `json:"achieved_rps"`
	// Expected slots were due: Rate × Window, or without a window those of the aligned
	// schedule up to the last arrival; with Due, every slot (or those within Window). Missing
	// is Expected − Arrivals, negative when the generator sent more than asked at a rate.
	Expected int `json:"expected"`
	Missing  int `json:"missing"`
	// LatenessUS is each arrival's lateness against its slot of the aligned schedule.
	LatenessUS Lateness `json:"lateness_us"`
	// LateOver1ms arrivals were more than LateThreshold late.
	LateOver1ms        int     `json:"late_over_1ms"`
	LateOver1msPercent float64 `json:"late_over_1ms_percent"`
	// PerSecond splits the judged arrivals by the second of the schedule they arrived in, so a
	// stall shows where it happened.
	PerSecond []Second `json:"per_second"`
}

// Lateness percentiles, nearest rank, in microseconds.
type Lateness struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Second is one second of the aligned schedule.
type Second struct {
	Second      int     `json:"second"`
	Arrivals    int     `json:"arrivals"`
	LateOver1ms int     `json:"late_over_1ms"`
	MaxLateUS   float64 `json:"max_late_us"`
}

// Analyze judges arrival times (any order; the slice is not changed) against the schedule k/Rate,
// or against o.Due when given: the placement below is the same for any schedule, slot k's due
// time taking the place of k/Rate.
//
// The server cannot know when the generator's clock started, nor how long the network took, so
// the schedule must be placed on the server's clock. The k-th arrival in time order takes the
// k-th slot (requests are alike, so whichever came k-th fills slot k), and the schedule starts at
// t0 = min_k(a_k − k/Rate): the earliest arrival relative to its slot is exactly on time, and
// every lateness is ≥ 0. That is the latest start that leaves no arrival early, so it gives the
// smallest lateness any placement can: it never blames the generator for the constant part of
// the transport. It does not excuse a generator that starts late and catches up by bursting, or
// one that falls behind: its on-time arrivals, wherever they are, fix the schedule, and the rest
// are measured from it (aligning on the first arrival instead would excuse a slow start). What
// it cannot remove is the jitter of the transport: the arrival that fixes t0 may have had a fast
// trip, and every other lateness includes the difference. Nor can it tell which slot a request
// was meant for: a generator that drops sends and goes on is seen late, from then on, by the
// sends it dropped, which Missing counts.
func Analyze(arrivals []time.Duration, o Options) Analysis {
	a := Analysis{AskedRPS: o.Rate, SkipSeconds: o.Skip.Seconds(), WindowSeconds: o.Window.Seconds(), Recorded: len(arrivals),
		PerSecond: []Second{}}
	if len(arrivals) == 0 || (o.Rate <= 0 && len(o.Due) == 0) {
		return a
	}
	sorted := slices.Clone(arrivals)
	slices.Sort(sorted)
	counted := min(max(o.SkipRequests, 0), len(sorted))
	if counted == len(sorted) {
		a.Skipped = counted
		return a
	}
	from := sorted[counted] + o.Skip
	first, _ := slices.BinarySearch(sorted, from)
	last := len(sorted)
	if o.Window > 0 {
		last, _ = slices.BinarySearch(sorted, from+o.Window)
	}
	a.Skipped, a.AfterWindow = first, len(sorted)-last
	if len(o.Due) > 0 && last-first > len(o.Due) {
		a.Extra = last - first - len(o.Due)
		last = first + len(o.Due)
	}
	judged := sorted[first:last]
	a.Arrivals = len(judged)
	if len(judged) == 0 {
		return a
	}

	slot := func(k int) time.Duration { return time.Duration(math.Round(float64(k) * 1e9 / o.Rate)) }
	if len(o.Due) > 0 {
		slot = func(k int) time.Duration { return o.Due[k] - o.Due[0] }
	}
	start := judged[0]
	for k, at := range judged {
		start = min(start, at-slot(k))
	}
	span := judged[len(judged)-1] - judged[0]
	a.SpanSeconds = span.Seconds()
	if span > 0 {
		a.AchievedRPS = float64(len(judged)-1) / span.Seconds()
	}
	switch {
	case len(o.Due) > 0 && o.Window > 0:
		a.Expected, _ = slices.BinarySearch(o.Due, o.Due[0]+o.Window)
	case len(o.Due) > 0:
		a.Expected = len(o.Due)
	case o.Window > 0:
		a.Expected = int(math.Round(o.Window.Seconds() * o.Rate))
	default:
		// The slots from t0 to the last arrival; the epsilon keeps a slot that falls exactly on
		// the last arrival from being lost to rounding.
		a.Expected = int(math.Floor((judged[len(judged)-1]-start).Seconds()*o.Rate+1e-6)) + 1
	}
	a.Missing = a.Expected - a.Arrivals

	// judged becomes the lateness of each arrival, in place in the copy.
	var sum float64
	for k, at := range judged {
		late := at - start - slot(k)
		sec := int((at - start) / time.Second)
		for len(a.PerSecond) <= sec {
			a.PerSecond = append(a.PerSecond, Second{Second: len(a.PerSecond)})
		}
		s := &a.PerSecond[sec]
		s.Arrivals++
		if late > LateThreshold {
			a.LateOver1ms++
			s.LateOver1ms++
		}
		s.MaxLateUS = max(s.MaxLateUS, us(late))
		sum += float64(late)
		judged[k] = late
	}
	a.LateOver1msPercent = 100 * float64(a.LateOver1ms) / float64(len(judged))
	slices.Sort(judged)
	rank := func(q float64) float64 {
		// The epsilon keeps 0.99 × 100 from rounding up to rank 100.
		i := int(math.Ceil(q*float64(len(judged))-1e-9)) - 1
		return us(judged[max(0, min(i, len(judged)-1))])
	}
	a.LatenessUS = Lateness{
		P50: rank(0.50), P90: rank(0.90), P99: rank(0.99), P999: rank(0.999),
		Max: us(judged[len(judged)-1]), Mean: sum / float64(len(judged)) / 1e3,
	}
	return a
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }
