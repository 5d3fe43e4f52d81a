package load

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"time"
)

// MaxRate is the highest rate a schedule may ask for: one send a nanosecond. Every due time is a
// whole number of nanoseconds on the monotonic clock, and the kernel's timers count no finer, so
// a faster schedule could not be kept: it would be recorded as asked and sent slower.
const MaxRate = 1e9

// CheckRate refuses a rate no schedule can keep: not a finite positive number, or above
// MaxRate. Every rate a run, a sweep step, a ramp or a capacity search asks for passes here.
func CheckRate(rate float64) error {
	switch {
	case math.IsNaN(rate) || math.IsInf(rate, 0):
		return fmt.Errorf("must be a finite number, got %g", rate)
	case rate <= 0:
		return fmt.Errorf("must be positive, got %g", rate)
	case rate > MaxRate:
		return fmt.Errorf("%g/s is above the pacer's ceiling of %g/s (one send a nanosecond, the resolution of its clock)", rate, MaxRate)
	}
	return nil
}

// Constant sends at a constant rate: send k is due at k/Rate seconds, exactly. The rate is read
// as the decimal it is written as (600, 33.3, 0.1), not as the binary fraction nearest to it,
// so that a window of d seconds holds exactly ⌈rate × d⌉ sends: 600/s for 3 s is 1,800 sends, and
// 0.1/s for 10 s one. Due times are rounded down to the nanosecond, which keeps the count exact:
// ⌊k/rate⌋ < d exactly when k/rate < d, for a window d of whole nanoseconds.
type Constant struct {
	Rate float64
	// The interval 1e9/Rate nanoseconds as whole + num/den, den > num ≥ 0. whole is
	// math.MaxInt64 when the interval is longer than any offset: only send 0 is ever due.
	whole, num, den uint64
}

// ConstantRate is the constant schedule for rate sends a second; rate must pass CheckRate.
func ConstantRate(rate float64) (Constant, error) {
	if err := CheckRate(rate); err != nil {
		return Constant{}, fmt.Errorf("rate %w", err)
	}
	// The shortest decimal that reads back as rate is what the user wrote (for up to 17
	// significant digits), and a rational number exactly.
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(rate, 'g', -1, 64))
	if !ok {
		return Constant{}, fmt.Errorf("rate %g: not a decimal number", rate)
	}
	interval := new(big.Rat).Quo(big.NewRat(int64(time.Second), 1), r)
	whole, rest := new(big.Int).QuoRem(interval.Num(), interval.Denom(), new(big.Int))
	c := Constant{Rate: rate, whole: math.MaxInt64, num: 0, den: 1}
	if !interval.Denom().IsUint64() {
		return Constant{}, errors.New("rate " + strconv.FormatFloat(rate, 'g', -1, 64) + ": too many digits to schedule exactly")
	}
	if whole.IsInt64() {
		c.whole, c.num, c.den = whole.Uint64(), rest.Uint64(), interval.Denom().Uint64()
	}
	return c, nil
}

// Due is ⌊k × 1e9/Rate⌋ nanoseconds, computed in 128-bit integers, never in floating point;
// math.MaxInt64 (never) beyond what an offset can hold.
func (c Constant) Due(k int64) time.Duration {
	if k <= 0 {
		return 0
	}
	hi, whole := bits.Mul64(uint64(k), c.whole)
	fhi, flo := bits.Mul64(uint64(k), c.num)
	frac, _ := bits.Div64(fhi, flo, c.den) // fhi < den, as num < den
	due, carry := bits.Add64(whole, frac, 0)
	if hi != 0 || carry != 0 || due > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(due)
}

// every is the exact gap between sends n apart, when it is a whole number of nanoseconds.
func (c Constant) every(n int64) (time.Duration, bool) {
	hi, lo := bits.Mul64(uint64(n), c.num)
	if _, rem := bits.Div64(hi, lo, c.den); rem != 0 || c.whole == math.MaxInt64 {
		return 0, false
	}
	gap := c.Due(n)
	return gap, gap < math.MaxInt64
}

func (c Constant) String() string { return strconv.FormatFloat(c.Rate, 'g', -1, 64) + "/s" }
