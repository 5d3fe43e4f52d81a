package load

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// ReplaySettings ask for a workload's recorded events to be sent at the pace they were
// recorded: event k at its offset from the first, divided by Speed (2: twice as fast). MaxGap,
// when positive, shortens every recorded pause longer than it to it, so a log with a night's
// silence in it replays its busy stretches back to back; 0 keeps every gap.
type ReplaySettings struct {
	Speed  float64
	MaxGap time.Duration
}

// Check refuses settings no replay can follow.
func (s ReplaySettings) Check() error {
	switch {
	case math.IsNaN(s.Speed) || math.IsInf(s.Speed, 0) || s.Speed <= 0:
		return fmt.Errorf("speed must be a positive number, got %g", s.Speed)
	case s.Speed > 1e6:
		return fmt.Errorf("speed %g: at most 1e6 (a recorded microsecond a picosecond)", s.Speed)
	case s.MaxGap < 0:
		return fmt.Errorf("max gap must not be negative, got %s", s.MaxGap)
	}
	return nil
}

// Replay is the schedule of a recorded workload: send k is due at event k's recorded offset
// (gaps over MaxGap shortened to it) divided by the speed, rounded down to the nanosecond and
// computed in integers from the speed as the decimal it is written as, so the accounting of due
// sends is exact. Sends after the last event are never due: the replay sends each event once.
type Replay struct {
	Settings ReplaySettings
	// Events is how many events the replay sends; Span the recorded time from the first to the
	// last (before any gap is shortened); GapsShortened how many gaps were over MaxGap.
	Events        int
	Span          time.Duration
	GapsShortened int
	due           []time.Duration
}

// MaxReplayWindow is the longest a paced replay may last: a century is past any replay anyone
// means (a wrong timestamp or speed), and a window so bounded still adds to the timeout and the
// run's deadlines without passing Go's longest duration (292 years), where it would wrap round
// and schedule every send at once, or none.
const MaxReplayWindow = 100 * 365 * 24 * time.Hour

// NewReplay is the schedule of events at these recorded offsets from the first (in order:
// offsets never decrease). A schedule that would last more than MaxReplayWindow is refused.
func NewReplay(offsets []time.Duration, s ReplaySettings) (Replay, error) {
	if err := s.Check(); err != nil {
		return Replay{}, err
	}
	if len(offsets) == 0 {
		return Replay{}, errors.New("replay: no events")
	}
	speed, ok := new(big.Rat).SetString(strconv.FormatFloat(s.Speed, 'g', -1, 64))
	if !ok {
		return Replay{}, fmt.Errorf("speed %g: not a decimal number", s.Speed)
	}
	r := Replay{Settings: s, Events: len(offsets), Span: offsets[len(offsets)-1] - offsets[0], due: make([]time.Duration, len(offsets))}
	var kept time.Duration // the recorded offset with long gaps shortened
	due := make([]*big.Int, len(offsets))
	for k, off := range offsets {
		if k > 0 {
			gap := off - offsets[k-1]
			if gap < 0 {
				return Replay{}, fmt.Errorf("replay: event %d is recorded before event %d", k+1, k)
			}
			if s.MaxGap > 0 && gap > s.MaxGap {
				gap = s.MaxGap
				r.GapsShortened++
			}
			kept += gap
		}
		// ⌊kept × den / num⌋ for speed = num/den: exact, however small the speed.
		due[k] = new(big.Int).Mul(big.NewInt(int64(kept)), speed.Denom())
		due[k].Quo(due[k], speed.Num())
	}
	// The last event is due latest.
	if last := due[len(due)-1]; last.Cmp(big.NewInt(int64(MaxReplayWindow))) > 0 {
		secs, _ := new(big.Float).Quo(new(big.Float).SetInt(last), big.NewFloat(1e9)).Float64()
		shorten := ""
		if r.GapsShortened == 0 {
			shorten = ", or a max gap to shorten its long pauses"
		}
		return Replay{}, fmt.Errorf("%s would last %.4g s (%.3g years), more than a run may (%.0f years): a wrong timestamp or speed; give a higher speed%s",
			r.Describe(), secs, secs/(365.25*24*3600), MaxReplayWindow.Hours()/(365*24), shorten)
	}
	for k, d := range due {
		r.due[k] = time.Duration(d.Int64())
	}
	return r, nil
}

// Due is event k's offset divided by the speed; never (math.MaxInt64) after the last event.
func (r Replay) Due(k int64) time.Duration {
	if k < 0 {
		return 0
	}
	if k >= int64(len(r.due)) {
		return math.MaxInt64
	}
	return r.due[k]
}

// Window is the measured window that holds every event: up to and including the last one's
// due time.
func (r Replay) Window() time.Duration { return r.due[len(r.due)-1] + time.Nanosecond }

// Pacer is the replay itself.
func (r Replay) Pacer() Pacer { return r }

// Describe is "replay of 200 events over 1.5s at 2×".
func (r Replay) Describe() string {
	return fmt.Sprintf("replay of %d events over %s at %s×", r.Events, r.Span, strconv.FormatFloat(r.Settings.Speed, 'g', -1, 64))
}

// Record keeps the replay's events, span and pacing, and its window as the measured one: a
// replay has no warm-up, and its events are its budget.
func (r Replay) Record(l *result.Load) {
	l.Model, l.Rate, l.DurationS, l.WarmupS, l.Requests = result.OpenLoop, 0, r.Window().Seconds(), 0, 0
	l.Replay = &result.LoadReplay{Events: r.Events, SpanS: r.Span.Seconds(), Speed: r.Settings.Speed,
		MaxGapS: r.Settings.MaxGap.Seconds(), GapsShortened: r.GapsShortened}
}
