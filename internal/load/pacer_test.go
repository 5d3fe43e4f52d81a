package load

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// Every test in this file runs in virtual time: schedules are values, asked when each send is
// due, and nothing sleeps.

// A send belongs to the phase its intended time falls in: the measured window [warm-up,
// warm-up + duration) holds the sends due from the end of the warm-up, that one included, to
// its end, that one excluded.
func TestPhaseEdges(t *testing.T) {
	for _, c := range []struct {
		name                    string
		rate                    float64
		warmup, duration        time.Duration
		firstMeasured, pastLast int64
	}{
		{"no warm-up", 200, 0, 2 * time.Second, 0, 400},
		// Send 200 is due exactly as the warm-up ends: measured. Send 600 is due exactly as the
		// window ends: not in it.
		{"edges on sends", 200, time.Second, 2 * time.Second, 200, 600},
		// At 3/s send 3 is due at 1 s exactly, the first measured, and send 6 at 2 s, past the
		// window: 3 × 1 s sends, no more.
		{"edges between sends", 3, time.Second, time.Second, 3, 6},
		// 600/s for 3 s is 1,800 sends, though 1/600 s is no whole number of nanoseconds.
		{"600/s for 3 s", 600, 0, 3 * time.Second, 0, 1800},
		{"600/s for 3 s after 1 s", 600, time.Second, 3 * time.Second, 600, 2400},
		{"warm-up a nanosecond past a send", 1000, time.Millisecond + 1, time.Millisecond - 1, 2, 2},
		{"warm-up a nanosecond short of a send", 1000, time.Millisecond - 1, time.Millisecond + 2, 1, 3},
		{"window shorter than an interval", 1, 500 * time.Millisecond, 400 * time.Millisecond, 1, 1},
		{"10,000/s for 10 s after 2 s", 10000, 2 * time.Second, 10 * time.Second, 20_000, 120_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			pl := newPlan(mustConstant(c.rate), Segment{})
			first, past := pl.window(c.warmup, c.duration)
			if first != c.firstMeasured || past != c.pastLast {
				t.Fatalf("measured sends %d to %d, want %d to %d", first, past-1, c.firstMeasured, c.pastLast-1)
			}
			end := c.warmup + c.duration
			if first > 0 && pl.due(first-1) >= c.warmup {
				t.Errorf("send %d, due at %s, left out of the window", first-1, pl.due(first-1))
			}
			if first < past && (pl.due(first) < c.warmup || pl.due(past-1) >= end) {
				t.Errorf("sends %d (due %s) to %d (due %s) not all in [%s, %s)", first, pl.due(first), past-1, pl.due(past-1), c.warmup, end)
			}
			if pl.due(past) < end {
				t.Errorf("send %d, due at %s, left out of the window", past, pl.due(past))
			}
		})
	}
}

// SendsBefore agrees with Due exactly, for every pacer, on and on either side of each due time:
// SendsBefore(d) is n such that sends 0 to n-1 are due before d and send n is not.
func TestSendsBeforeAgreesWithDue(t *testing.T) {
	for _, p := range testPacers(t) {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			sendsBefore := func(d time.Duration) int64 {
				n := SendsBefore(p, d)
				if n < 0 || (n > 0 && p.Due(n-1) >= d) || p.Due(n) < d {
					t.Fatalf("SendsBefore(%d ns) = %d: send %d due at %d ns, send %d at %d ns", d, n, n-1, p.Due(n-1), n, p.Due(n))
				}
				return n
			}
			for k := int64(0); k < 3000 && p.Due(k) < math.MaxInt64; k++ {
				due := p.Due(k)
				sendsBefore(due - 1)
				sendsBefore(due + 1)
				// These pacers never have two sends due at the same nanosecond.
				if n := sendsBefore(due); n != k {
					t.Fatalf("SendsBefore(Due(%d)) = %d", k, n)
				}
			}
			if n := sendsBefore(-time.Second); n != 0 {
				t.Errorf("SendsBefore(-1 s) = %d, want 0", n)
			}
		})
	}
}

// Segments 1/N to N/N deal the schedule out exactly: every send of the warm-up and of the
// window to one segment and one only, at the time the whole schedule has it, each segment
// within one send of its share, and (at a constant rate) each evenly spaced.
func TestSegmentsPartitionTheSchedule(t *testing.T) {
	windows := []struct{ warmup, duration time.Duration }{
		{0, time.Second},
		{time.Second, 2 * time.Second},
		{333 * time.Millisecond, 1500 * time.Millisecond},
	}
	for _, p := range testPacers(t) {
		for _, n := range []int{1, 2, 3, 7, 16} {
			for _, w := range windows {
				t.Run(fmt.Sprintf("%v/%d segments/%s+%s", p, n, w.warmup, w.duration), func(t *testing.T) {
					whole := newPlan(p, Segment{})
					first, past := whole.window(w.warmup, w.duration)
					owner := make([]int, past) // which segment took each send, 0 for none yet
					var measured []int64
					for i := 1; i <= n; i++ {
						seg := Segment{Index: i, Count: n}
						pl := newPlan(p, seg)
						segFirst, segPast := pl.window(w.warmup, w.duration)
						for j := range segPast {
							k := pl.send(j)
							if k < 0 || k >= past {
								t.Fatalf("segment %s's send %d is the schedule's %d, beyond its last, %d", seg, j, k, past-1)
							}
							if owner[k] != 0 {
								t.Fatalf("send %d in segments %d/%d and %s", k, owner[k], n, seg)
							}
							owner[k] = i
							if pl.due(j) != whole.due(k) {
								t.Fatalf("segment %s's send %d due at %s, the schedule's send %d at %s", seg, j, pl.due(j), k, whole.due(k))
							}
							if (j >= segFirst) != (k >= first) {
								t.Fatalf("send %d measured in segment %s: %v, in the whole schedule: %v", k, seg, j >= segFirst, k >= first)
							}
						}
						measured = append(measured, segPast-segFirst)
						// A plan with a period (the kernel's periodic timer keeps it) has every send
						// on it.
						if start, every, periodic := pl.period(); periodic {
							if start != p.Due(int64(i-1)) || every != p.Due(int64(n)) {
								t.Errorf("segment %s: period from %s, every %s; want every %s from %s", seg, start, every, p.Due(int64(n)), p.Due(int64(i-1)))
							}
							for j := range min(segPast, 50) {
								if pl.due(j) != start+time.Duration(j)*every {
									t.Fatalf("segment %s's send %d due at %s, not on its period", seg, j, pl.due(j))
								}
							}
						}
					}
					for k, o := range owner {
						if o == 0 {
							t.Fatalf("send %d of %d in no segment", k, past)
						}
					}
					total, sum := past-first, int64(0)
					for i, m := range measured {
						sum += m
						// |m - total/n| < 1
						if d := m*int64(n) - total; d <= -int64(n) || d >= int64(n) {
							t.Errorf("segment %d/%d measures %d sends, of %d in all: not within 1 of its share %.2f", i+1, n, m, total, float64(total)/float64(n))
						}
					}
					if sum != total {
						t.Errorf("segments measure %d sends in all, the whole schedule %d", sum, total)
					}
				})
			}
		}
	}
}

// testPacers are the schedules the virtual-time tests run over.
func testPacers(t *testing.T) []Pacer {
	t.Helper()
	ps := []Pacer{mustConstant(1), mustConstant(3), mustConstant(200), mustConstant(600), mustConstant(9999), mustConstant(33.3)}
	for _, stages := range []string{"1s:0-1000", "1s:1000-0", "1500ms:100-300,1s:300", "700ms:500-50,300ms:50"} {
		st, err := ParseStages(stages)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewStages(st)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// Ramps, as stages: a ramp's sends are the area under its rate, a ramp that falls to 0 ends, a
// flat stage is the constant rate, and the gaps follow the rate.
func TestRampStages(t *testing.T) {
	stages := func(s string) Stages {
		st, err := ParseStages(s)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewStages(st)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// 0 to 1000/s over 1 s: the area under the rate reaches 500 at 1 s, and k at √(k/500) s.
	up := stages("1s:0-1000,1s:1000")
	for _, c := range []struct {
		k   int64
		due time.Duration
	}{{0, 0}, {5, 100 * time.Millisecond}, {125, 500 * time.Millisecond}, {500, time.Second},
		{501, time.Second + time.Millisecond}, {1499, 2*time.Second - time.Millisecond}, {1500, math.MaxInt64}} {
		if got := up.Due(c.k); got != c.due {
			t.Errorf("0 to 1000/s: send %d due at %s, want %s", c.k, got, c.due)
		}
	}
	// A ramp that falls to 0 ends: 500 sends, the last just before 1 s.
	down := stages("1s:1000-0")
	if got := SendsBefore(down, time.Hour); got != 500 {
		t.Errorf("1000 to 0/s: %d sends in all, want 500", got)
	}
	if got := down.Due(500); got != math.MaxInt64 {
		t.Errorf("1000 to 0/s: send 500 due at %s, want never", got)
	}
	flat := stages("1s:200")
	for k := range int64(200) {
		if flat.Due(k) != mustConstant(200).Due(k) {
			t.Fatalf("a flat stage at 200/s: send %d due at %s, want %s", k, flat.Due(k), mustConstant(200).Due(k))
		}
	}
	r := stages("2s:100-300,1s:300")
	if gap := r.Due(1) - r.Due(0); gap < 9900*time.Microsecond || gap > 10*time.Millisecond {
		t.Errorf("100 to 300/s: first gap %s, want just under 10ms", gap)
	}
	inRamp := SendsBefore(r, 2*time.Second)
	if inRamp != 400 {
		t.Errorf("100 to 300/s over 2 s: %d sends in the ramp, want 400", inRamp)
	}
	for k := inRamp; k < inRamp+100; k++ {
		if gap := r.Due(k+1) - r.Due(k); gap < time.Second/300-1 || gap > time.Second/300+1 {
			t.Fatalf("after the ramp, sends %d and %d %s apart, want 1/300 s", k, k+1, gap)
		}
	}
	for _, p := range testPacers(t) {
		for k := range int64(3000) {
			if p.Due(k+1) < p.Due(k) {
				t.Fatalf("%v: send %d due at %s, before send %d at %s", p, k+1, p.Due(k+1), k, p.Due(k))
			}
		}
	}
}

func TestParseSegment(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Segment
	}{{"1/1", Segment{1, 1}}, {"3/4", Segment{3, 4}}, {"16/16", Segment{16, 16}}, {"1/100", Segment{1, 100}}} {
		got, err := ParseSegment(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSegment(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if got.String() != c.in {
			t.Errorf("segment %q reads back as %q", c.in, got.String())
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", `segment "": want i/N, this generator's part i of N, such as 1/4`},
		{"3", `segment "3": want i/N`},
		{"0/3", `segment "0/3": i must be from 1 to N (3), got 0`},
		{"4/3", `segment "4/3": i must be from 1 to N (3), got 4`},
		{"-1/2", `segment "-1/2": i must be from 1 to N (2), got -1`},
		{"1/0", `segment "1/0": N must be at least 1, got 0`},
		{"0/0", `segment "0/0": N must be at least 1, got 0`}, // not the zero value, 1/1
		{"1/-2", `segment "1/-2": N must be at least 1, got -2`},
		{"a/2", `segment "a/2": i "a" is not a whole number`},
		{"1/b", `segment "1/b": N "b" is not a whole number`},
		{"1/2/3", `segment "1/2/3": N "2/3" is not a whole number`},
		{"1.5/2", `segment "1.5/2": i "1.5" is not a whole number`},
		{" 1/2", `segment " 1/2": i " 1" is not a whole number`},
		{"/", `segment "/": i "" is not a whole number`},
	} {
		_, err := ParseSegment(c.in)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParseSegment(%q): %v, want an error beginning %q", c.in, err, c.want)
		}
	}

	var s Segment
	if err := s.UnmarshalText([]byte("2/5")); err != nil || s != (Segment{2, 5}) {
		t.Errorf("UnmarshalText(2/5) = %v, %v", s, err)
	}
	if err := s.UnmarshalText([]byte("6/5")); err == nil {
		t.Error("UnmarshalText(6/5) accepted")
	}
	if b, err := (Segment{2, 5}).MarshalText(); err != nil || string(b) != "2/5" {
		t.Errorf("MarshalText = %q, %v", b, err)
	}
	if zero := (Segment{}); zero.String() != "1/1" || !zero.Whole() || zero.Validate() != nil {
		t.Errorf("the zero segment reads %q, whole %v, %v; want the whole schedule, 1/1", zero.String(), zero.Whole(), zero.Validate())
	}
	if (Segment{1, 2}).Whole() {
		t.Error("1/2 reads as the whole schedule")
	}
}

func TestSpecValidateSegment(t *testing.T) {
	open := Spec{Rate: 100, Connections: 4, Duration: time.Second}
	for _, c := range []struct {
		spec Spec
		want string // "" for valid
	}{
		{open, ""},
		{withSegment(open, Segment{2, 3}), ""},
		{withSegment(open, Segment{4, 3}), "segment 4/3: i must be from 1 to N (3), got 4"},
		{withSegment(open, Segment{0, 3}), "segment 0/3: i must be from 1 to N (3), got 0"},
		{withSegment(open, Segment{1, 0}), "segment 1/0: N must be at least 1, got 0"},
		{Spec{Workers: 2, Duration: time.Second, Segment: Segment{1, 1}}, ""},
		{Spec{Workers: 2, Duration: time.Second, Segment: Segment{1, 2}}, ""},
		{Spec{Workers: 2, Duration: time.Second, Segment: Segment{3, 3}}, "segment 3/3: 2 workers cannot be split 3 ways, one at least each"},
	} {
		err := c.spec.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}

// Segments 1/N to N/N split a closed loop's workers exactly: every worker to one segment and
// one only, in order, each segment within one of its share, the remainder to the lowest.
func TestSegmentsSplitTheWorkers(t *testing.T) {
	for total := 1; total <= 40; total++ {
		for n := 1; n <= total; n++ {
			next, sizes := 0, make([]int, n)
			for i := 1; i <= n; i++ {
				first, k := Segment{Index: i, Count: n}.Workers(total)
				if first != next {
					t.Fatalf("%d workers, segment %d/%d starts at worker %d, want %d: workers skipped or run twice", total, i, n, first, next)
				}
				next += k
				sizes[i-1] = k
			}
			if next != total {
				t.Fatalf("%d workers split %d ways run %d", total, n, next)
			}
			for i, k := range sizes {
				want := total / n
				if i < total%n {
					want++
				}
				if k != want {
					t.Fatalf("%d workers split %d ways: segment %d/%d runs %d, want %d (remainder to the lowest)", total, n, i+1, n, k, want)
				}
			}
		}
	}
	if first, n := (Segment{}).Workers(7); first != 0 || n != 7 {
		t.Errorf("the whole runs workers %d+%d, want 0+7", first, n)
	}
}

func withSegment(s Spec, seg Segment) Spec {
	s.Segment = seg
	return s
}

// Whatever ParseSegment accepts is a valid segment that reads back the same from its String.
func FuzzParseSegment(f *testing.F) {
	for _, s := range []string{"1/1", "3/4", "0/3", "4/3", "1/0", "a/2", "", "/", "+1/02", "9223372036854775807/9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seg, err := ParseSegment(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("segment %q: ", s)) {
				t.Errorf("ParseSegment(%q): error %q does not name the segment", s, err)
			}
			return
		}
		if seg.Validate() != nil || seg.Index < 1 || seg.Index > seg.Count {
			t.Fatalf("ParseSegment(%q) = %+v, not a segment", s, seg)
		}
		if again, err := ParseSegment(seg.String()); err != nil || again != seg {
			t.Errorf("ParseSegment(%q) = %v, which reads back as %v, %v", s, seg, again, err)
		}
	})
}
