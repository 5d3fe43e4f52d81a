package pacing

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

// schedule returns n arrivals at offset + k×interval, passed through shape (nil: as they are).
func schedule(n int, offset, interval time.Duration, shape func(k int, at time.Duration) time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for k := range out {
		out[k] = offset + time.Duration(k)*interval
		if shape != nil {
			out[k] = shape(k, out[k])
		}
	}
	return out
}

// stalled is a 1,000 req/s schedule whose generator stalls for 5 ms at 500 ms and then sends
// the five sends it owes at once: they arrive at 505 ms, late by 5, 4, 3, 2 and 1 ms.
func stalled() []time.Duration {
	return schedule(1000, 0, ms, func(k int, at time.Duration) time.Duration {
		if k >= 500 && k < 505 {
			return 505 * ms
		}
		return at
	})
}

// unevenDue is a replay's schedule with uneven gaps: 50 events 1 ms apart, a 300 ms pause, then
// 50 events 2 ms apart (the last due at 447 ms).
func unevenDue() []time.Duration {
	due := make([]time.Duration, 100)
	for k := range due {
		if k < 50 {
			due[k] = time.Duration(k) * ms
		} else {
			due[k] = 349*ms + time.Duration(k-50)*2*ms
		}
	}
	return due
}

// onSchedule is every slot of due, offset on the server's clock, passed through shape (nil: as
// they are).
func onSchedule(due []time.Duration, offset time.Duration, shape func(k int, at time.Duration) time.Duration) []time.Duration {
	out := make([]time.Duration, len(due))
	for k, d := range due {
		out[k] = offset + d
		if shape != nil {
			out[k] = shape(k, out[k])
		}
	}
	return out
}

func TestAnalyze(t *testing.T) {
	shuffled := stalled()
	due := unevenDue()
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, tc := range []struct {
		name     string
		arrivals []time.Duration
		opts     Options
		want     Analysis // the fields checked: counts, lateness, rates
	}{
		{
			name:     "perfect schedule",
			arrivals: schedule(1000, 0, ms, nil),
			opts:     Options{Rate: 1000},
			want:     Analysis{Recorded: 1000, Arrivals: 1000, Expected: 1000, AchievedRPS: 1000, SpanSeconds: 0.999},
		},
		{
			// The server's clock has nothing to do with the generator's: a schedule that starts
			// 3.7 s into the recording is as perfect.
			name:     "perfect schedule, late start",
			arrivals: schedule(1000, 3700*ms, ms, nil),
			opts:     Options{Rate: 1000},
			want:     Analysis{Recorded: 1000, Arrivals: 1000, Expected: 1000, AchievedRPS: 1000, SpanSeconds: 0.999},
		},
		{
			name:     "one 5 ms stall",
			arrivals: stalled(),
			opts:     Options{Rate: 1000},
			want: Analysis{Recorded: 1000, Arrivals: 1000, Expected: 1000, AchievedRPS: 1000, SpanSeconds: 0.999,
				LateOver1ms: 4, LateOver1msPercent: 0.4,
				LatenessUS: Lateness{P999: 4000, Max: 5000, Mean: 15}},
		},
		{
			name:     "one 5 ms stall, arrivals out of order",
			arrivals: shuffled,
			opts:     Options{Rate: 1000},
			want: Analysis{Recorded: 1000, Arrivals: 1000, Expected: 1000, AchievedRPS: 1000, SpanSeconds: 0.999,
				LateOver1ms: 4, LateOver1msPercent: 0.4,
				LatenessUS: Lateness{P999: 4000, Max: 5000, Mean: 15}},
		},
		{
			// 10 % slow: arrival k at 1.1 k ms, late by 0.1 k ms, so lateness grows linearly and
			// the slots due over the 1.0989 s span are 1,099: 99 missing.
			name:     "generator 10 % slow",
			arrivals: schedule(1000, 0, 1100*time.Microsecond, nil),
			opts:     Options{Rate: 1000},
			want: Analysis{Recorded: 1000, Arrivals: 1000, Expected: 1099, Missing: 99, AchievedRPS: 1000 / 1.1, SpanSeconds: 1.0989,
				LateOver1ms: 989, LateOver1msPercent: 98.9,
				LatenessUS: Lateness{P50: 49900, P90: 89900, P99: 98900, P999: 99800, Max: 99900, Mean: 49950}},
		},
		{
			// 10 % fast: the last arrival is the most ahead of its slot, so it is on time, and
			// the schedule starts 100 ms before the first: to the server, a fast generator and one
			// that started late and hurried are alike, and the achieved rate tells them apart.
			name:     "generator 10 % fast",
			arrivals: schedule(1001, 0, 900*time.Microsecond, nil),
			opts:     Options{Rate: 1000},
			want: Analysis{Recorded: 1001, Arrivals: 1001, Expected: 1001, AchievedRPS: 1000 / 0.9, SpanSeconds: 0.9,
				LateOver1ms: 990, LateOver1msPercent: 100 * 990 / 1001.0,
				LatenessUS: Lateness{P50: 50000, P90: 90000, P99: 99000, P999: 99900, Max: 100000, Mean: 50000}},
		},
		{
			// A generator late from its first 100 sends that catches up by bursting is not
			// excused: the on-time arrivals fix the schedule.
			name: "slow start, then on time",
			arrivals: schedule(1000, 0, ms, func(k int, at time.Duration) time.Duration {
				if k < 100 {
					return 100 * ms
				}
				return at
			}),
			opts: Options{Rate: 1000},
			want: Analysis{Recorded: 1000, Arrivals: 1000, Expected: 1000, AchievedRPS: 999 / 0.899, SpanSeconds: 0.899,
				LateOver1ms: 99, LateOver1msPercent: 9.9,
				LatenessUS: Lateness{P99: 90000, P999: 99000, Max: 100000, Mean: 5.05 * 1000}},
		},
		{
			// A probe, a 300 ms pause, then a perfect schedule: judged whole, every arrival after
			// the probe is 299 ms late; skipping the first 100 ms judges the schedule alone.
			name:     "probe then schedule, skipped",
			arrivals: append([]time.Duration{0}, schedule(1000, 300*ms, ms, nil)...),
			opts:     Options{Rate: 1000, Skip: 100 * ms},
			want:     Analysis{SkipSeconds: 0.1, Recorded: 1001, Skipped: 1, Arrivals: 1000, Expected: 1000, AchievedRPS: 1000, SpanSeconds: 0.999},
		},
		{
			name:     "probe then schedule, not skipped",
			arrivals: append([]time.Duration{0}, schedule(1000, 300*ms, ms, nil)...),
			opts:     Options{Rate: 1000},
			want: Analysis{Recorded: 1001, Arrivals: 1001, Expected: 1300, Missing: 299, AchievedRPS: 1000 / 1.299, SpanSeconds: 1.299,
				LateOver1ms: 1000, LateOver1msPercent: 100 * 1000 / 1001.0,
				LatenessUS: Lateness{P50: 299000, P90: 299000, P99: 299000, P999: 299000, Max: 299000, Mean: 299000 * 1000 / 1001.0}},
		},
		{
			// A window of 0.5 s after a 0.2 s skip judges slots 200 to 699, expects 500, and
			// leaves the 300 after it out.
			name:     "window",
			arrivals: schedule(1000, 0, ms, nil),
			opts:     Options{Rate: 1000, Skip: 200 * ms, Window: 500 * ms},
			want: Analysis{SkipSeconds: 0.2, WindowSeconds: 0.5, Recorded: 1000, Skipped: 200, AfterWindow: 300,
				Arrivals: 500, Expected: 500, AchievedRPS: 1000, SpanSeconds: 0.499},
		},
		{
			// A generator that stops half way through its window is charged what it never sent.
			name:     "window, generator stops early",
			arrivals: schedule(500, 0, ms, nil),
			opts:     Options{Rate: 1000, Window: time.Second},
			want:     Analysis{WindowSeconds: 1, Recorded: 500, Arrivals: 500, Expected: 1000, Missing: 500, AchievedRPS: 1000, SpanSeconds: 0.499},
		},
		{
			// A generator that drops the 5 sends of a stall and goes on is seen from the server
			// as late by 5 ms from then on: the server cannot tell which slot a request was
			// meant for, so the k-th arrival answers for the k-th slot, and the 5 are missing.
			name: "5 sends dropped",
			arrivals: schedule(1000, 0, ms, func(k int, at time.Duration) time.Duration {
				if k >= 500 {
					return at + 5*ms
				}
				return at
			}),
			opts: Options{Rate: 1000},
			want: Analysis{Recorded: 1000, Arrivals: 1000, Expected: 1005, Missing: 5, AchievedRPS: 999 / 1.004, SpanSeconds: 1.004,
				LateOver1ms: 500, LateOver1msPercent: 50,
				LatenessUS: Lateness{P90: 5000, P99: 5000, P999: 5000, Max: 5000, Mean: 2500}},
		},
		{
			// A replay kept to the log's schedule, uneven gaps and all, is on time.
			name:     "replay on its schedule",
			arrivals: onSchedule(due, 7*time.Second, nil),
			opts:     Options{Due: due},
			want:     Analysis{Recorded: 100, Arrivals: 100, Expected: 100, AchievedRPS: 99 / 0.447, SpanSeconds: 0.447},
		},
		{
			// Events 60 to 63 held back to event 64's time: late by 8, 6, 4 and 2 ms, the
			// log's 2 ms gaps apart.
			name: "replay with a stall",
			arrivals: onSchedule(due, 0, func(k int, at time.Duration) time.Duration {
				if k >= 60 && k < 64 {
					return due[64]
				}
				return at
			}),
			opts: Options{Due: due},
			want: Analysis{Recorded: 100, Arrivals: 100, Expected: 100, AchievedRPS: 99 / 0.447, SpanSeconds: 0.447,
				LateOver1ms: 4, LateOver1msPercent: 4,
				LatenessUS: Lateness{P99: 6000, P999: 8000, Max: 8000, Mean: 200}},
		},
		{
			// run --url's probe, 500 ms before the replay: left out by count, the replay is on
			// time however soon after the probe it came.
			name:     "replay after a probe, skipped by count",
			arrivals: append([]time.Duration{0}, onSchedule(due, 500*ms, nil)...),
			opts:     Options{Due: due, SkipRequests: 1},
			want:     Analysis{Recorded: 101, Skipped: 1, Arrivals: 100, Expected: 100, AchievedRPS: 99 / 0.447, SpanSeconds: 0.447},
		},
		{
			// Not left out, the probe takes slot 0 and every event answers for the slot after
			// its own, so each is late by the probe's lead less its gap to the next event: 499
			// ms for the 49 1 ms gaps, 498 for the 49 2 ms ones, 200 across the pause. The last
			// event has no slot.
			name:     "replay after a probe, not skipped",
			arrivals: append([]time.Duration{0}, onSchedule(due, 500*ms, nil)...),
			opts:     Options{Due: due},
			want: Analysis{Recorded: 101, Arrivals: 100, Extra: 1, Expected: 100, AchievedRPS: 99 / 0.945, SpanSeconds: 0.945,
				LateOver1ms: 99, LateOver1msPercent: 99,
				LatenessUS: Lateness{P50: 498000, P90: 499000, P99: 499000, P999: 499000, Max: 499000, Mean: (200 + 49*498 + 49*499) * 1000 / 100.0}},
		},
		{
			name:     "replay, generator stops early",
			arrivals: onSchedule(due[:80], 0, nil),
			opts:     Options{Due: due},
			want:     Analysis{Recorded: 80, Arrivals: 80, Expected: 100, Missing: 20, AchievedRPS: 79 / 0.407, SpanSeconds: 0.407},
		},
		{
			// 100 ms holds the first 50 events; the 50 after the pause are after the window.
			name:     "replay, window",
			arrivals: onSchedule(due, 0, nil),
			opts:     Options{Due: due, Window: 100 * ms},
			want:     Analysis{WindowSeconds: 0.1, Recorded: 100, AfterWindow: 50, Arrivals: 50, Expected: 50, AchievedRPS: 1000, SpanSeconds: 0.049},
		},
		{
			name:     "one arrival",
			arrivals: []time.Duration{42 * ms},
			opts:     Options{Rate: 1000},
			want:     Analysis{Recorded: 1, Arrivals: 1, Expected: 1},
		},
		{
			name: "nothing",
			opts: Options{Rate: 1000},
			want: Analysis{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.arrivals)
			got := Analyze(tc.arrivals, tc.opts)
			if !slices.Equal(before, tc.arrivals) {
				t.Error("Analyze changed its input")
			}
			want := tc.want
			want.AskedRPS = tc.opts.Rate
			check := func(name string, got, want float64) {
				t.Helper()
				if d := got - want; d > 1e-6*max(1, want) || d < -1e-6*max(1, want) {
					t.Errorf("%s = %v, want %v", name, got, want)
				}
			}
			for _, c := range []struct {
				name      string
				got, want int
			}{
				{"recorded", got.Recorded, want.Recorded}, {"skipped", got.Skipped, want.Skipped},
				{"after window", got.AfterWindow, want.AfterWindow}, {"arrivals", got.Arrivals, want.Arrivals},
				{"expected", got.Expected, want.Expected}, {"missing", got.Missing, want.Missing},
				{"late over 1 ms", got.LateOver1ms, want.LateOver1ms}, {"extra", got.Extra, want.Extra},
			} {
				if c.got != c.want {
					t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
				}
			}
			check("asked rps", got.AskedRPS, want.AskedRPS)
			check("skip", got.SkipSeconds, want.SkipSeconds)
			check("window", got.WindowSeconds, want.WindowSeconds)
			check("span", got.SpanSeconds, want.SpanSeconds)
			check("achieved rps", got.AchievedRPS, want.AchievedRPS)
			check("late percent", got.LateOver1msPercent, want.LateOver1msPercent)
			check("p50", got.LatenessUS.P50, want.LatenessUS.P50)
			check("p90", got.LatenessUS.P90, want.LatenessUS.P90)
			check("p99", got.LatenessUS.P99, want.LatenessUS.P99)
			check("p99.9", got.LatenessUS.P999, want.LatenessUS.P999)
			check("max", got.LatenessUS.Max, want.LatenessUS.Max)
			check("mean", got.LatenessUS.Mean, want.LatenessUS.Mean)
			perSecond := 0
			for _, s := range got.PerSecond {
				perSecond += s.Arrivals
			}
			if perSecond != got.Arrivals {
				t.Errorf("per-second arrivals add up to %d, want %d", perSecond, got.Arrivals)
			}
		})
	}
}

// The stall shows in the second it happened in, and only there.
func TestAnalyzePerSecondPlacesTheStall(t *testing.T) {
	arrivals := schedule(3000, 0, ms, func(k int, at time.Duration) time.Duration {
		if k >= 1500 && k < 1505 {
			return 1505 * ms
		}
		return at
	})
	got := Analyze(arrivals, Options{Rate: 1000})
	want := []Second{{0, 1000, 0, 0}, {1, 1000, 4, 5000}, {2, 1000, 0, 0}}
	if !slices.Equal(got.PerSecond, want) {
		t.Errorf("per second %+v, want %+v", got.PerSecond, want)
	}
}

func TestRecorderCap(t *testing.T) {
	r := NewRecorder(3)
	for range 5 {
		r.Record()
	}
	if got := r.Arrivals(); len(got) != 3 || r.Seen() != 5 || !r.CapReached() {
		t.Fatalf("stored %d, seen %d, cap reached %v; want 3, 5, true", len(got), r.Seen(), r.CapReached())
	}
	if a := r.Arrivals(); !slices.IsSorted(a) || a[0] < 0 {
		t.Errorf("one goroutine's arrivals %v are not in clock order", a)
	}
	r = NewRecorder(3)
	r.Record()
	if len(r.Arrivals()) != 1 || r.CapReached() {
		t.Errorf("stored %d, cap reached %v; want 1, false", len(r.Arrivals()), r.CapReached())
	}
}

// Concurrent recorders each get a slot of their own: nothing lost, nothing written twice.
func TestRecorderConcurrent(t *testing.T) {
	r := NewRecorder(DefaultCap / 100)
	done := make(chan struct{})
	for range 8 {
		go func() {
			for range 1000 {
				r.Record()
			}
			done <- struct{}{}
		}()
	}
	for range 8 {
		<-done
	}
	a := r.Arrivals()
	if len(a) != 8000 || slices.Contains(a, 0) {
		t.Errorf("stored %d arrivals (want 8000), an unwritten slot among them: %v", len(a), slices.Contains(a, 0))
	}
}

// The same arrivals, a replay kept to its log's uneven schedule, are on time against the log and
// far off against any constant rate: judged against k/rate at the replay's own average rate,
// the 300 ms pause makes the first half late by up to the pause.
func TestAnalyzeJudgesAReplayAgainstItsLog(t *testing.T) {
	due := unevenDue()
	arrivals := onSchedule(due, time.Second, nil)
	log := Analyze(arrivals, Options{Due: due})
	rate := Analyze(arrivals, Options{Rate: 99 / 0.447})
	if log.LatenessUS.Max != 0 || log.LateOver1ms != 0 || log.Missing != 0 {
		t.Errorf("against the log: max %.0f µs, %d late, %d missing; want all on time", log.LatenessUS.Max, log.LateOver1ms, log.Missing)
	}
	if rate.LatenessUS.P50 < 50_000 || rate.LateOver1ms < 50 {
		t.Errorf("against k/rate: p50 %.0f µs, %d late; want the pause to show (p50 over 50 ms)", rate.LatenessUS.P50, rate.LateOver1ms)
	}
}
