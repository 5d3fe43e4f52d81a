package load

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"
)

// sendsDue is the closed form, in big rationals: N(d), the area under the piecewise-linear rate
// up to the offset d, for an independent check of Stages.
func sendsDue(stages []Stage, d time.Duration) *big.Rat {
	n := new(big.Rat)
	rat := func(r float64) *big.Rat { x, _ := new(big.Rat).SetString(formatRate(r)); return x }
	for _, s := range stages {
		if d <= 0 {
			break
		}
		tau := min(d, s.Over)
		// from·τ + (to − from)·τ²/(2·len), τ and len in seconds
		ts := new(big.Rat).SetFrac64(int64(tau), int64(time.Second))
		ls := new(big.Rat).SetFrac64(int64(s.Over), int64(time.Second))
		area := new(big.Rat).Mul(rat(s.From), ts)
		quad := new(big.Rat).Sub(rat(s.To), rat(s.From))
		quad.Mul(quad, ts).Mul(quad, ts).Quo(quad, new(big.Rat).Mul(big.NewRat(2, 1), ls))
		n.Add(n, area.Add(area, quad))
		d -= tau
	}
	return n
}

func ceilRat(r *big.Rat) int64 {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

func mustStages(t *testing.T, s string) ([]Stage, Stages) {
	t.Helper()
	st, err := ParseStages(s)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewStages(st)
	if err != nil {
		t.Fatal(err)
	}
	return st, p
}

// A window [0, d) of a staged schedule holds exactly ⌈N(d)⌉ sends, N the area under the rate in
// exact rationals, wherever d falls: in a ramp, at a stage's edge, in a hold at 0, after the end.
// And each send is due at the first nanosecond that makes the area pass its number.
func TestStagesDueIsTheExactArea(t *testing.T) {
	for _, spec := range []string{
		"30s:0-2000,1m:2000,30s:2000-0", // k6's example
		"1s:0-1000",
		"700ms:500-50,1500ms:100-300",
		"2s:0,1s:0-600,3s:600",      // nothing due until the ramp begins
		"1s:3,1s:3-7,333ms:33.3",    // rates no nanosecond divides
		"1h:0.1-1000,1h:1000-0.1",   // long, so float drift would show
		"10ms:1e6-1e9,10ms:1e9-1e6", // up to the ceiling
	} {
		t.Run(spec, func(t *testing.T) {
			stages, p := mustStages(t, spec)
			total := Total(stages)
			var offsets []time.Duration
			for _, f := range []float64{0.001, 0.1, 0.25, 1.0 / 3, 0.5, 0.77, 0.999999, 1, 1.5} {
				offsets = append(offsets, time.Duration(f*float64(total)))
			}
			at := time.Duration(0)
			for _, s := range stages {
				at += s.Over
				offsets = append(offsets, at-1, at, at+1)
			}
			for _, d := range offsets {
				want := ceilRat(sendsDue(stages, d))
				if d <= 0 {
					want = 0
				}
				if got := SendsBefore(p, d); got != want {
					t.Errorf("%s: %d sends due before %s, want ⌈N⌉ = %d (N = %s)", spec, got, d, want, sendsDue(stages, d).FloatString(6))
				}
			}
			end := ceilRat(sendsDue(stages, total))
			if got := p.Due(end); got != math.MaxInt64 {
				t.Errorf("send %d, past the last stage, due at %s: want never", end, got)
			}
			// Each send's due time is where the area passes its number.
			for _, k := range []int64{0, 1, 2, end / 3, end / 2, end - 1} {
				due := p.Due(k)
				if sendsDue(stages, due+1).Cmp(new(big.Rat).SetInt64(k)) <= 0 || (due > 0 && sendsDue(stages, due).Cmp(new(big.Rat).SetInt64(k)) > 0) {
					t.Errorf("send %d due at %d ns: N there %s, a nanosecond on %s", k, due, sendsDue(stages, due).FloatString(9), sendsDue(stages, due+1).FloatString(9))
				}
			}
		})
	}
}

// k6's example, by hand: 0 to 2000/s over 30 s is 30,000 sends, the hold 120,000, the ramp down
// 30,000; the first send is due at once, the 500th at √(500/(2000/60)) s ≈ 3.873 s.
func TestStagesK6Example(t *testing.T) {
	_, p := mustStages(t, "30s:0-2000,1m:2000,30s:2000-0")
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{{30 * time.Second, 30000}, {90 * time.Second, 150000}, {2 * time.Minute, 180000}, {time.Hour, 180000}} {
		if got := SendsBefore(p, c.d); got != c.want {
			t.Errorf("%d sends due before %s, want %d", got, c.d, c.want)
		}
	}
	if got := p.Due(0); got != 0 {
		t.Errorf("send 0 due at %s, want at once", got)
	}
	if got, want := p.Due(500), time.Duration(math.Sqrt(500/(2000.0/60))*1e9); got < want-1 || got > want+1 {
		t.Errorf("send 500 due at %s, want %s", got, want)
	}
	if got := p.Describe(); got != "stages 0→2000/30s, 2000/1m0s, 2000→0/30s" {
		t.Errorf("described as %q", got)
	}
	for k := range int64(3000) {
		if p.Due(k+1) < p.Due(k) {
			t.Fatalf("send %d due before send %d", k+1, k)
		}
	}
}

func TestParseStages(t *testing.T) {
	if _, err := ParseStages("1s:100,1s:2e12"); err == nil || strings.Count(err.Error(), "above the pacer's ceiling") != 1 {
		t.Errorf("a hold above the ceiling: %v, want it said once", err)
	}
	st, err := ParseStages("30s:0-2000, 1m:2000,30s:2000-0")
	if err != nil || FormatStages(st) != "30s:0-2000,1m0s:2000,30s:2000-0" {
		t.Errorf("ParseStages = %v (%s), %v", st, FormatStages(st), err)
	}
	for _, c := range []struct{ in, want string }{
		{"", `stage 1 "": want DURATION:RATE or DURATION:FROM-TO`},
		{"30s", `stage 1 "30s": want DURATION:RATE`},
		{"30:100", `stage 1 "30:100": want DURATION:RATE`},
		{"30s:x", `stage 1 "30s:x": rate "x" is not a number`},
		{"30s:1-y", `stage 1 "30s:1-y": rate "y" is not a number`},
		{"0s:100", "stage 1 (0s:100): its length must be positive"},
		{"1s:100,1s:2e12", "stage 2 (1s:2e+12): rate 2e+12/s is above the pacer's ceiling of 1e+09/s"},
		{"1s:0,2s:0", "every stage's rate is 0: nothing would be sent"},
		{"1s:NaN", "stage 1 (1s:NaN): rate must be a finite number, got NaN"},
		{"1s:-5", "stage 1 (1s:-5): rate must be positive, got -5"},
		{"1s:10--5", "stage 1 (1s:10--5): rate must be positive, got -5"},
		{"1s:10-", `stage 1 "1s:10-": rate "" is not a number`},
	} {
		_, err := ParseStages(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseStages(%q): %v, want %q", c.in, err, c.want)
		} else if strings.Count(err.Error(), c.want) > 1 {
			t.Errorf("ParseStages(%q) says it more than once: %v", c.in, err)
		}
	}
}

// A warm-up holds the first stage's starting rate before the stages, so the stages fall in the
// measured window whole: 0 to 1000/s over 200 ms then 1000/s for 200 ms is 300 measured sends
// after any warm-up, and a warm-up before 500/s holds 500/s.
func TestStagesWarmupHoldsTheFirstRate(t *testing.T) {
	for _, c := range []struct {
		stages         string
		warmup         time.Duration
		warm, measured int64
	}{
		{"200ms:0-1000,200ms:1000", 0, 0, 300},
		{"200ms:0-1000,200ms:1000", 100 * time.Millisecond, 0, 300},
		{"200ms:500,200ms:500-1000", 100 * time.Millisecond, 50, 250},
	} {
		stages, err := ParseStages(c.stages)
		if err != nil {
			t.Fatal(err)
		}
		spec := Spec{Stages: stages, Connections: 1, Duration: Total(stages), Warmup: c.warmup}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		m, err := spec.Model()
		if err != nil || m.Pacer() == nil {
			t.Fatalf("%s: model %v, %v", c.stages, m, err)
		}
		first, past := newPlan(m.Pacer(), Segment{}).window(spec.Warmup, spec.Duration)
		if first != c.warm || past-first != c.measured {
			t.Errorf("%s after %s: %d warm-up and %d measured sends, want %d and %d", c.stages, c.warmup, first, past-first, c.warm, c.measured)
		}
	}
}
