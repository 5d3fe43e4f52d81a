package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Pacer says when each send of an open-loop schedule is due, as an offset from the schedule's
// start. It is a value, not a goroutine: the open-loop driver asks it for due times and waits
// for them (pacerClock), so a schedule, its phases and its split across generators can be
// checked exactly without a clock.
//
// Send k (numbered from 0) is due at Due(k), which never decreases as k grows. Constant is the
// rate an open-loop run asks for; Stages changes it linearly, stage by stage. A pacer with a last
// send returns math.MaxInt64 for the sends after it: they are never due.
type Pacer interface {
	Due(k int64) time.Duration
}

// SendsBefore is how many sends of p are due before the offset d, which is also the index of the
// first send due at d or later. A send due exactly at a phase boundary belongs to the phase that
// begins there: the measured window [w, w+d) holds sends SendsBefore(w) to SendsBefore(w+d)−1.
// It searches Due, so it agrees with it exactly for any pacer.
func SendsBefore(p Pacer, d time.Duration) int64 {
	if d <= p.Due(0) {
		return 0
	}
	// Due(lo) < d <= Due(hi): the answer is hi once they are neighbours.
	lo, hi := int64(0), int64(1)
	for p.Due(hi) < d {
		if hi > math.MaxInt64/2 {
			return math.MaxInt64
		}
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if p.Due(mid) < d {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// Segment is one generator's share of a schedule split across Count generators ("i/N" on a
// command line): segment Index of Count takes sends Index−1, Index−1+Count, Index−1+2·Count …,
// so that Count generators, one per segment, send every send of the schedule once and none
// twice. The zero value is the whole schedule, 1/1.
//
// The schedule is dealt out in turn rather than cut into Count stretches of time: each generator
// then sends through the whole run at 1/Count of the rate, evenly (at a constant rate it keeps a
// constant period of its own, which the kernel's periodic timer holds), and has its share of the
// warm-up and of the measured window, so the server sees the arrivals one generator would have
// made. Stretches of time would have one generator send the full rate while the others wait (the
// very load one generator could not carry, which is why the schedule is split), leave the warm-up
// to the first alone, and give the peak of a ramp to one of them.
type Segment struct {
	Index, Count int
}

// WholeSchedule is the segment of a generator that sends every send: 1/1.
var WholeSchedule = Segment{Index: 1, Count: 1}

// ParseSegment reads "i/N", 1 ≤ i ≤ N.
func ParseSegment(s string) (Segment, error) {
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return Segment{}, fmt.Errorf("segment %q: want i/N, this generator's part i of N, such as 1/4", s)
	}
	i, err := strconv.Atoi(is)
	if err != nil {
		return Segment{}, fmt.Errorf("segment %q: i %q is not a whole number", s, is)
	}
	n, err := strconv.Atoi(ns)
	if err != nil {
		return Segment{}, fmt.Errorf("segment %q: N %q is not a whole number", s, ns)
	}
	seg := Segment{Index: i, Count: n}
	if err := seg.check(); err != nil { // "0/0" is not the zero value's 1/1
		return Segment{}, fmt.Errorf("segment %q: %w", s, err)
	}
	return seg, nil
}

// Validate says whether the segment is one of N: 1 ≤ i ≤ N. The zero value is valid (1/1).
func (s Segment) Validate() error {
	if s == (Segment{}) {
		return nil
	}
	return s.check()
}

// check is Validate without the zero value's exemption.
func (s Segment) check() error {
	switch {
	case s.Count < 1:
		return fmt.Errorf("N must be at least 1, got %d", s.Count)
	case s.Index < 1 || s.Index > s.Count:
		return fmt.Errorf("i must be from 1 to N (%d), got %d", s.Count, s.Index)
	}
	return nil
}

// orWhole is the segment with its zero value read as 1/1.
func (s Segment) orWhole() Segment {
	if s == (Segment{}) {
		return WholeSchedule
	}
	return s
}

// Whole reports whether the segment is the whole schedule.
func (s Segment) Whole() bool { return s.orWhole() == WholeSchedule }

func (s Segment) String() string {
	s = s.orWhole()
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// MarshalText writes "i/N".
func (s Segment) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads "i/N".
func (s *Segment) UnmarshalText(b []byte) error {
	seg, err := ParseSegment(string(b))
	if err != nil {
		return err
	}
	*s = seg
	return nil
}

// Send is the schedule's number for the segment's j-th send (from 0).
func (s Segment) Send(j int64) int64 {
	s = s.orWhole()
	return j*int64(s.Count) + int64(s.Index-1)
}

// Sends is how many of the schedule's first k sends (0 to k−1) are the segment's.
func (s Segment) Sends(k int64) int64 {
	s = s.orWhole()
	first := int64(s.Index - 1)
	if k <= first {
		return 0
	}
	return (k-first-1)/int64(s.Count) + 1 // sends first, first+N, … below k, without overflow
}

// Workers is the segment's share of a closed loop's total workers: the workers numbered first
// to first+n−1 of the whole. Each segment takes total/N, the remainder one each to the lowest
// segments, so that the N segments run every worker once.
func (s Segment) Workers(total int) (first, n int) {
	s = s.orWhole()
	base, rest := total/s.Count, total%s.Count
	i := s.Index - 1
	first = i*base + min(i, rest)
	n = base
	if i < rest {
		n++
	}
	return first, n
}

// plan is one generator's part of an open-loop run: its segment of the schedule, numbered
// from 0 (the plan's send j is the schedule's send seg.Send(j)).
type plan struct {
	pacer Pacer
	seg   Segment
}

func newPlan(p Pacer, seg Segment) plan { return plan{pacer: p, seg: seg.orWhole()} }

// send is the schedule's number for the plan's send j: it picks the input, as it would for a
// single generator.
func (p plan) send(j int64) int64 { return p.seg.Send(j) }

// due is when the plan's send j is due, an offset from the start.
func (p plan) due(j int64) time.Duration { return p.pacer.Due(p.seg.Send(j)) }

// sendsBefore is how many of the plan's sends are due before the offset d.
func (p plan) sendsBefore(d time.Duration) int64 { return p.seg.Sends(SendsBefore(p.pacer, d)) }

// period says, for a plan whose sends are evenly spaced in whole nanoseconds (a constant rate
// whose interval, times the segments, is one: 2,000/s, but not 600/s), when its first send is
// due and how far apart they are.
func (p plan) period() (first, every time.Duration, ok bool) {
	c, ok := p.pacer.(Constant)
	if !ok {
		return 0, 0, false
	}
	if every, ok = c.every(int64(p.seg.Count)); !ok {
		return 0, 0, false
	}
	return p.due(0), every, true
}

// window is where the warm-up and the measured window fall in the plan: its sends from
// firstMeasured to pastLast−1 are due in the measured window, those before in the warm-up.
func (p plan) window(warmup, duration time.Duration) (firstMeasured, pastLast int64) {
	return p.sendsBefore(warmup), p.sendsBefore(warmup + duration)
}
