package load

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// Stage is one stretch of an open-loop schedule: over Over, the rate goes linearly from From to
// To sends a second (From = To holds it). Written as k6's ramping-arrival-rate writes its stages:
// "30s:0-2000" ramps, "1m:2000" holds.
type Stage struct {
	Over     time.Duration
	From, To float64
}

func (s Stage) String() string {
	if s.hold() {
		return s.Over.String() + ":" + formatRate(s.From)
	}
	return s.Over.String() + ":" + formatRate(s.From) + "-" + formatRate(s.To)
}

// hold says whether the stage keeps one rate: From and To alike, NaN's included (NaN != NaN
// made a hold of NaN a ramp, and its refusal was said twice).
func (s Stage) hold() bool { return math.Float64bits(s.From) == math.Float64bits(s.To) }

func formatRate(r float64) string { return strconv.FormatFloat(r, 'g', -1, 64) }

// ParseStages reads "30s:0-2000,1m:2000,30s:2000-0": stages in order, each DURATION:RATE (held)
// or DURATION:FROM-TO (a linear ramp), rates in sends a second.
func ParseStages(s string) ([]Stage, error) {
	var out []Stage
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		dur, rates, ok := strings.Cut(part, ":")
		over, err := time.ParseDuration(dur)
		if !ok || err != nil {
			return nil, fmt.Errorf("stage %d %q: want DURATION:RATE or DURATION:FROM-TO, such as 30s:0-2000 or 1m:2000", i+1, part)
		}
		// FROM-TO: the dash after the first character, so that "-5" reads as a (refused) rate.
		from, to, ramp := rates, "", false
		if i := strings.Index(rates[min(1, len(rates)):], "-"); i >= 0 {
			from, to, ramp = rates[:i+1], rates[i+2:], true
		}
		st := Stage{Over: over}
		if st.From, err = strconv.ParseFloat(from, 64); err != nil {
			return nil, fmt.Errorf("stage %d %q: rate %q is not a number", i+1, part, from)
		}
		st.To = st.From
		if ramp {
			if st.To, err = strconv.ParseFloat(to, 64); err != nil {
				return nil, fmt.Errorf("stage %d %q: rate %q is not a number", i+1, part, to)
			}
		}
		out = append(out, st)
	}
	return out, CheckStages(out)
}

// FormatStages writes stages as ParseStages reads them.
func FormatStages(stages []Stage) string {
	parts := make([]string, len(stages))
	for i, s := range stages {
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}

// CheckStages refuses stages no schedule can keep: a stage not positive in length, a rate
// negative, not finite or above MaxRate, or no send at all.
func CheckStages(stages []Stage) error {
	if len(stages) == 0 {
		return errors.New("no stages")
	}
	var errs []error
	sends := false
	for i, s := range stages {
		if s.Over <= 0 {
			errs = append(errs, fmt.Errorf("stage %d (%s): its length must be positive", i+1, s))
		}
		rates := []float64{s.From, s.To}
		if s.hold() {
			rates = rates[:1] // a hold: its one rate, said once
		}
		for _, r := range rates {
			if r != 0 {
				if err := CheckRate(r); err != nil {
					errs = append(errs, fmt.Errorf("stage %d (%s): rate %w", i+1, s, err))
				}
			}
		}
		sends = sends || s.From > 0 || s.To > 0
	}
	if !sends && len(errs) == 0 {
		errs = append(errs, errors.New("every stage's rate is 0: nothing would be sent"))
	}
	return errors.Join(errs...)
}

// Total is how long the stages last.
func Total(stages []Stage) time.Duration {
	var d time.Duration
	for _, s := range stages {
		d += s.Over
	}
	return d
}

// Stages is the open-loop schedule of k6's ramping-arrival-rate: a piecewise-linear rate. The
// sends due by the offset t are the area under the rate, N(t); send k is due at the first
// nanosecond t with N(t+1) > k, so that a window [0, d) holds exactly ⌈N(d)⌉ sends, as the
// constant rate's does (for which this is ⌊k/rate⌋). N is computed in integers, exactly, from
// the rates as written: a float root finds the nanosecond, and an exact comparison settles it,
// so no error accumulates over stages or hours. After the last stage nothing more is due.
type Stages struct {
	stages []Stage
	// held counts the leading stages a warm-up added (Spec.Model): sent, but not the stages
	// asked for, which the run's result records.
	held int
	// In integers: rate r is p/q sends a second (q a power of ten, shared); 2e9·q·N(t) is, for t
	// in stage i at τ = t − start[i], (k2[i]·len[i] + 2·from[i]·τ·len[i] + (to[i]−from[i])·τ²) / len[i].
	q             *big.Int
	from, to      []*big.Int
	start, length []int64
	k2            []*big.Int // 2e9·q·N at the start of each stage, and at the end (one more)
	cumulative    []float64  // N at each stage's start, for the float root
}

// NewStages builds the schedule of the stages, which CheckStages must pass.
func NewStages(stages []Stage) (Stages, error) {
	if err := CheckStages(stages); err != nil {
		return Stages{}, err
	}
	s := Stages{stages: stages, q: big.NewInt(1)}
	rats := make([][2]*big.Rat, len(stages))
	for i, st := range stages {
		for j, r := range []float64{st.From, st.To} {
			x, ok := new(big.Rat).SetString(formatRate(r))
			if !ok {
				return Stages{}, fmt.Errorf("stage %d: rate %g is not a decimal number", i+1, r)
			}
			rats[i][j] = x
			if x.Denom().Cmp(s.q) > 0 { // powers of ten: the largest is a multiple of the rest
				s.q = new(big.Int).Set(x.Denom())
			}
		}
	}
	num := func(r *big.Rat) *big.Int { // r × q, an integer
		n := new(big.Int).Mul(r.Num(), s.q)
		return n.Quo(n, r.Denom())
	}
	k2 := new(big.Int)
	var at int64
	unit := new(big.Float).SetInt(new(big.Int).Mul(big.NewInt(2e9), s.q))
	for i, st := range stages {
		s.from, s.to = append(s.from, num(rats[i][0])), append(s.to, num(rats[i][1]))
		s.start, s.length = append(s.start, at), append(s.length, int64(st.Over))
		s.k2 = append(s.k2, new(big.Int).Set(k2))
		n, _ := new(big.Float).Quo(new(big.Float).SetInt(k2), unit).Float64()
		s.cumulative = append(s.cumulative, n)
		// The stage adds (from + to)·len to 2e9·q·N.
		add := new(big.Int).Add(s.from[i], s.to[i])
		k2.Add(k2, add.Mul(add, big.NewInt(int64(st.Over))))
		if at > math.MaxInt64-int64(st.Over) {
			return Stages{}, errors.New("the stages last longer than any run can")
		}
		at += int64(st.Over)
	}
	s.k2 = append(s.k2, k2)
	return s, nil
}

// exceeds reports whether N(t) > k, exactly.
func (s Stages) exceeds(t, k int64) bool {
	bound := new(big.Int).Mul(big.NewInt(k), big.NewInt(2e9))
	bound.Mul(bound, s.q) // 2e9·q·k
	last := len(s.stages) - 1
	if t <= 0 {
		return bound.Sign() < 0 // N(0) = 0
	}
	if t >= s.start[last]+s.length[last] {
		return s.k2[last+1].Cmp(bound) > 0
	}
	i := last
	for i > 0 && s.start[i] > t {
		i--
	}
	tau, l := big.NewInt(t-s.start[i]), big.NewInt(s.length[i])
	// k2·len + 2·from·τ·len + (to − from)·τ² > bound·len
	lhs := new(big.Int).Mul(s.k2[i], l)
	term := new(big.Int).Mul(s.from[i], tau)
	term.Mul(term, l)
	lhs.Add(lhs, term.Lsh(term, 1))
	term.Sub(s.to[i], s.from[i])
	term.Mul(term, tau)
	lhs.Add(lhs, term.Mul(term, tau))
	return lhs.Cmp(bound.Mul(bound, l)) > 0
}

// Due is the first nanosecond t with N(t+1) > k; math.MaxInt64 (never) for the sends past the
// last stage's end.
func (s Stages) Due(k int64) time.Duration {
	if k < 0 {
		k = 0
	}
	last := len(s.stages) - 1
	if !s.exceeds(s.start[last]+s.length[last], k) {
		return math.MaxInt64
	}
	// The stage whose sends include k, and the float root of N(t) = k in it.
	i := last
	for i > 0 && s.cumulative[i] > float64(k) {
		i--
	}
	st := s.stages[i]
	over := st.Over.Seconds()
	n := float64(k) - s.cumulative[i]
	var tau float64
	if n > 0 {
		c := (st.To - st.From) / (2 * over)
		if d := st.From + math.Sqrt(max(0, st.From*st.From+4*c*n)); d > 0 {
			tau = 2 * n / d
		}
	}
	guess := s.start[i] + int64(math.Min(tau*1e9, float64(s.length[i])))
	// Settle it exactly: the least t with N(t+1) > k. The guess is within a few nanoseconds
	// but for rounding at a stage's edge (a hold at 0 after it, say), so gallop from it: the
	// answer lies between the last step that fell short and the first that did not.
	due := func(t int64) bool { return s.exceeds(t+1, k) }
	lo, hi := guess-1, guess // due(lo) false, due(hi) true, once found
	for step := int64(1); lo >= 0 && due(lo); step *= 2 {
		hi, lo = lo, max(-1, lo-step)
	}
	for step := int64(1); !due(hi); step *= 2 {
		lo, hi = hi, hi+step
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if due(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return time.Duration(hi)
}

// Pacer is the stages' schedule itself.
func (s Stages) Pacer() Pacer { return s }

// Describe is "stages 0→2000/30s, 2000/1m0s, 2000→0/30s".
func (s Stages) Describe() string { return DescribeStages(s.stages) }

// Record keeps the stages asked for, as --stages writes them, without a warm-up's hold.
func (s Stages) Record(l *result.Load) {
	l.Model, l.Stages = result.OpenLoop, FormatStages(s.stages[s.held:])
}

func (s Stages) String() string { return FormatStages(s.stages) }

// DescribeStages labels stages as every report does: "stages 0→2000/30s, 2000/1m0s, 2000→0/30s".
func DescribeStages(stages []Stage) string { return result.StagesLabel(FormatStages(stages)) }

// RateAt is the rate the stages ask for at the offset t from their start; 0 outside them.
func RateAt(stages []Stage, t time.Duration) float64 {
	if t < 0 {
		return 0
	}
	for _, s := range stages {
		if t <= s.Over {
			return s.From + (s.To-s.From)*float64(t)/float64(s.Over)
		}
		t -= s.Over
	}
	return 0
}
