package result

// Interval is one stretch of an open-loop repetition's measured window, accounted apart (a
// capacity ramp's, say): the sends due in it by their intended times, and what became of them,
// with the same accounting as the repetition's (due = sent + unsent). RateFrom and RateTo are
// the rates the schedule asked for at its start and end. HDR holds the ok responses' latencies
// from their intended times and the unsent sends' lower bounds, ns (2 significant digits).
type Interval struct {
	FromS     float64     `json:"from_s"` // from the start of the measured window
	ToS       float64     `json:"to_s"`
	RateFrom  float64     `json:"rate_from"`
	RateTo    float64     `json:"rate_to"`
	Due       int64       `json:"due"`
	Sent      int64       `json:"sent"`
	Unsent    int64       `json:"unsent,omitempty"`
	Late      int64       `json:"late_sends,omitempty"`
	GenLate   int64       `json:"generator_late_sends,omitempty"`
	OK        int64       `json:"ok"`
	Errors    int64       `json:"errors,omitempty"`
	LatencyUS Percentiles `json:"latency_us"`
	HDR       string      `json:"hdr"`
	// Verdict is the interval judged against the SLO of the capacity ramp it belongs to, Why
	// the figure that decided it ("p99 3.2ms <= 5ms"); GeneratorBound, that it broke because
	// the generator fell behind. Empty outside a capacity ramp.
	Verdict        Verdict `json:"verdict,omitempty"`
	Why            string  `json:"why,omitempty"`
	GeneratorBound bool    `json:"generator_bound,omitempty"`
}

// Verdict is an interval's standing against an SLO.
type Verdict string

const (
	Met    Verdict = "met"
	Broke  Verdict = "broke"
	TooFew Verdict = "too_few" // too few sends due to judge a percentile: neither met nor broken
)

// RampKnee finds a ramp's estimate in its judged intervals: the last that met the SLO before the
// first that broke it (intervals with too few sends are passed over). Either is -1 when there
// is none: no interval met the SLO before one broke it, or none broke.
func RampKnee(ivs []Interval) (met, broke int) {
	met, broke = -1, -1
	for i, iv := range ivs {
		switch iv.Verdict {
		case Met:
			met = i
		case Broke:
			return met, i
		}
	}
	return met, broke
}

// MeanRate is the rate the interval's sends were due at on average: for a linear ramp, the rate
// at its middle.
func (iv Interval) MeanRate() float64 { return (iv.RateFrom + iv.RateTo) / 2 }
