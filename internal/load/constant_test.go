package load

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"
)

func mustConstant(rate float64) Constant {
	c, err := ConstantRate(rate)
	if err != nil {
		panic(err)
	}
	return c
}

// A constant rate's send k is due at k/rate, rounded down to the nanosecond, computed from the
// rate as written: checked here against big rationals, far beyond any real run's sends.
func TestConstantRateDueIsTheExactSchedule(t *testing.T) {
	for _, rate := range []float64{1, 3, 7, 200, 600, 1000, 3333, 10000, 44100, 1e6, 0.1, 33.3, 2.5e-3, 123456.789, 999_999_999, MaxRate} {
		t.Run(fmt.Sprintf("%g/s", rate), func(t *testing.T) {
			p := mustConstant(rate)
			r, _ := new(big.Rat).SetString(fmt.Sprint(rate))
			for _, k := range []int64{0, 1, 2, 3, 10, 599, 600, 601, 12_345, 1_000_000, 999_999_999, 1 << 40} {
				// ⌊k × 1e9 / rate⌋
				exact := new(big.Rat).Quo(new(big.Rat).SetInt64(k), r)
				exact.Mul(exact, big.NewRat(int64(time.Second), 1))
				want := new(big.Int).Quo(exact.Num(), exact.Denom())
				if !want.IsInt64() {
					if got := p.Due(k); got != math.MaxInt64 {
						t.Errorf("send %d due at %d ns, want never (beyond any offset)", k, got)
					}
					continue
				}
				if got := p.Due(k); int64(got) != want.Int64() {
					t.Errorf("send %d due at %d ns, want %s ns", k, got, want)
				}
			}
		})
	}
}

// A window of d holds exactly rate × d sends, rounded up, whatever the rate and the window: send
// k is in it when k/rate < d. The old whole-nanosecond interval sent 1,801 in 600/s × 3 s.
func TestConstantRateWindowHoldsRateTimesWindow(t *testing.T) {
	for _, c := range []struct {
		rate   float64
		window time.Duration
		want   int64
	}{
		{600, 3 * time.Second, 1800},
		{600, 500 * time.Millisecond, 300},
		{3, time.Second, 3},
		{3, time.Second + 1, 4},
		{0.1, 10 * time.Second, 1}, // 0.1 as written, not the binary 0.1000000000000000055…
		{0.1, 10*time.Second + 1, 2},
		{33.3, 10 * time.Second, 333},
		{7, 1 * time.Hour, 25200},
		{44100, 1 * time.Second, 44100},
		{MaxRate, time.Second, 1e9},
		{1e-3, time.Hour, 4},
	} {
		p := mustConstant(c.rate)
		if got := SendsBefore(p, c.window); got != c.want {
			t.Errorf("%g/s for %s: %d sends due, want %d", c.rate, c.window, got, c.want)
		}
		// Split 1/N to N/N, the shards add up to the same sends exactly.
		for _, n := range []int{2, 3, 7} {
			var sum int64
			for i := 1; i <= n; i++ {
				sum += newPlan(p, Segment{Index: i, Count: n}).sendsBefore(c.window)
			}
			if sum != c.want {
				t.Errorf("%g/s for %s in %d shards: %d sends due in all, want %d", c.rate, c.window, n, sum, c.want)
			}
		}
	}
}

// A rate the pacer cannot keep is refused, naming the ceiling, rather than run slower than the
// result records.
func TestCheckRate(t *testing.T) {
	for _, c := range []struct {
		rate float64
		want string // "" for valid
	}{
		{1, ""}, {MaxRate, ""}, {1e-6, ""},
		{1e12, "1e+12/s is above the pacer's ceiling of 1e+09/s"},
		{math.Nextafter(MaxRate, math.Inf(1)), "above the pacer's ceiling"},
		{0, "must be positive, got 0"},
		{-5, "must be positive, got -5"},
		{math.NaN(), "must be a finite number, got NaN"},
		{math.Inf(1), "must be a finite number, got +Inf"},
	} {
		err := CheckRate(c.rate)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckRate(%g) = %v, want %q", c.rate, err, c.want)
		}
		if _, err := ConstantRate(c.rate); (c.want == "") != (err == nil) {
			t.Errorf("ConstantRate(%g): %v; CheckRate and ConstantRate disagree", c.rate, err)
		}
	}
}

// A plan is periodic (the kernel's periodic timer at GOMAXPROCS 1) only when its gap is a whole
// number of nanoseconds; otherwise the timer would drift from the exact schedule.
func TestConstantPeriodOnlyWhenExact(t *testing.T) {
	for _, c := range []struct {
		rate     float64
		segments int
		every    time.Duration // 0: not periodic
	}{
		{2000, 1, 500 * time.Microsecond}, {2000, 3, 1500 * time.Microsecond},
		{600, 1, 0}, {600, 3, 5 * time.Millisecond}, {3, 1, 0}, {3, 3, time.Second},
	} {
		_, every, ok := newPlan(mustConstant(c.rate), Segment{Index: 1, Count: c.segments}).period()
		if ok != (c.every != 0) || every != c.every {
			t.Errorf("%g/s in %d segments: period %s (%v), want %s", c.rate, c.segments, every, ok, c.every)
		}
	}
}
