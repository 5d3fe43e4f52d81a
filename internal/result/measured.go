package result

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// A run that measured nothing must not pass for a measurement: a window shorter than one
// decision, or a target that answered every request with an error, leaves no latency and no
// throughput to report, yet a table of zeros would read as one. NothingServed says so, and every
// command that measures fails on it. A window that held too few decisions for its rate still
// measured something, but its req/s is a count of a handful, not a rate: ShortWindowOf says so,
// under the table and in the run's summary.

// NothingServed says why the run served no decision, in one of its repetitions or at all; "" when
// every repetition served at least one. A run that never started is not asked: its Error says why.
// A repetition is asked about its own ok count; a run kept without repetitions, about its summary's.
func (r *Run) NothingServed() string {
	if len(r.Repetitions) == 0 {
		if r.Error != "" || r.Summary.OK > 0 { // a summary without its repetitions: served
			return ""
		}
		return "no repetition measured anything"
	}
	for i, rep := range r.Repetitions {
		if rep.OK > 0 {
			continue
		}
		which := fmt.Sprintf("repetition %d of %d", i+1, len(r.Repetitions))
		if len(r.Repetitions) == 1 {
			which = "its repetition"
		}
		if rep.Requests == 0 {
			window := fmt.Sprintf("its %s window", seconds(rep.ElapsedS))
			if r.Load.DurationS > 0 {
				window = fmt.Sprintf("its %s window (--duration)", seconds(r.Load.DurationS))
			}
			return fmt.Sprintf("%s served no decision: %s ended before any decision was answered; a window shorter than one decision measures nothing", which, window)
		}
		return fmt.Sprintf("%s served no decision: every one of its %d responses was an error (%s)", which, rep.Requests, classCounts(rep.ErrorClasses))
	}
	return ""
}

// seconds writes a duration in seconds as Go writes durations, to the nanosecond: 1ns, 1.5ms.
func seconds(s float64) string {
	return time.Duration(math.Round(s * 1e9)).String()
}

// classCounts lists error classes as "http_500: 3, timeout: 1", most frequent first.
func classCounts(classes map[string]uint64) string {
	names := make([]string, 0, len(classes))
	for c := range classes {
		names = append(names, c)
	}
	slices.SortFunc(names, func(a, b string) int {
		if classes[a] != classes[b] {
			return int(classes[b]) - int(classes[a])
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, c := range names {
		parts[i] = fmt.Sprintf("%s: %d", c, classes[c])
	}
	return strings.Join(parts, ", ")
}

// FewForRate is the fewest decisions a repetition's req/s is read from as a rate: sends due in
// its window in open loop, responses per worker in closed loop. The count is off by up to one
// at each end of the window (per worker, in closed loop), so below it the figure can be off by
// 10 % or more: one response in 50 ms reads as 20 req/s for 10 asked.
const FewForRate = 10

// ShortWindow says a run's req/s rests, in some repetition, on too few decisions to be a rate.
type ShortWindow struct {
	// Repetitions is how many of the run's repetitions held too few.
	Repetitions int `json:"repetitions"`
	// Fewest is the decisions the fewest held: sends due in its window (open loop) or responses
	// (closed loop); Needed is how many a rate is read from (FewForRate, per worker in closed loop).
	Fewest uint64 `json:"fewest"`
	Needed uint64 `json:"needed"`
	// WindowS is that repetition's measured window.
	WindowS float64 `json:"window_s"`
}

// ShortWindowOf checks every repetition of a run under load against FewForRate; nil when each
// held enough. A repetition that served nothing is NothingServed's, not this.
func ShortWindowOf(load Load, reps []Repetition) *ShortWindow {
	needed := uint64(FewForRate)
	if load.Model != OpenLoop {
		workers := load.Workers
		if load.ShardWorkers > 0 {
			workers = load.ShardWorkers // a shard's repetitions are its own workers'
		}
		needed *= uint64(max(1, workers))
	}
	var w *ShortWindow
	for _, rep := range reps {
		held := rep.Requests // in open loop, the sends due in the window
		if rep.OK == 0 || held >= needed {
			continue
		}
		if w == nil {
			w = &ShortWindow{Needed: needed, Fewest: held, WindowS: rep.ElapsedS}
		}
		w.Repetitions++
		if held < w.Fewest {
			w.Fewest, w.WindowS = held, rep.ElapsedS
		}
	}
	return w
}
