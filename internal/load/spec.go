// Package load generates requests against a target and records every answer.
//
// Two models: closed loop, a fixed number of workers each sending its next request as soon as
// the previous one is answered (how fast a server answers that many impatient clients); and
// open loop, requests sent at fixed intended times whatever happened to earlier ones (how a
// server behaves under an arrival rate, latency measured from the intended send time so a stall
// cannot hide). Warm-up requests are sent and discarded. Every loop is bounded in time (and in
// count when a request budget is given), and stops at once when the context is cancelled.
//
// When each open-loop send is due is a Pacer's to say, a value checked without a clock; a
// Segment i/N is one generator's share when N generators split one schedule.
package load

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

// Spec describes the load of a run: closed loop with Workers, or open loop at Rate.
type Spec struct {
	Workers int     // closed loop: concurrent workers
	Rate    float64 // open loop: requests per second; 0 for closed loop
	// Connections bounds the requests in flight in open loop (one connection each); sends due
	// while all are busy wait, and their latency counts the wait.
	Connections int
	Duration    time.Duration // length of the measured phase; ignored when Requests is set
	Requests    int64         // measured requests in all; 0 to run for Duration
	Warmup      time.Duration // sent and discarded before the measured phase
	// MaxTime bounds the measured phase when Requests is set, so a slow target cannot keep
	// the run going for ever.
	MaxTime time.Duration
	// Ceiling is the longest latency the histograms must hold (0: 60 s); longer ones are counted
	// as clamped.
	Ceiling time.Duration
	// Timeout is the per-request timeout the target was given: a decision slower than this is a
	// timeout whatever the target (EnforceTimeout), and a target silent for twice as long ends
	// the run (WatchFailing). In open loop, sends due in the measured window that are still
	// waiting for a free connection when it closes go on waiting this long before the run gives
	// up on them (counted unsent). 0: 5 s for requests; open loop then gives up when the window
	// closes.
	Timeout time.Duration
	// Stages, when set, is the open-loop schedule instead of Rate: a piecewise-linear rate (k6's
	// ramping-arrival-rate), measured over Duration, which is their total; a warm-up holds the
	// first stage's starting rate before them.
	Stages []Stage
	// Segment is this generator's share of the load when N generators split it (i/N): in open
	// loop its share of the schedule, in closed loop its share of Workers (Segment.Workers);
	// the zero value is the whole, 1/1.
	Segment Segment
	// Replay, when set, is the open-loop schedule instead of Rate or Stages: the inputs'
	// recorded offsets (replay.go), measured over the window that holds them all, with no
	// warm-up (it would send the first events early and discard them).
	Replay *ReplaySettings
	// Intervals, when positive, splits an open-loop run's measured window into stretches this
	// long and accounts for each apart (Outcome.Intervals): how a ramp's latency followed its
	// rate. 0: the window as one.
	Intervals time.Duration
	// Coalesce, in open loop, lets the event loop (evloop_linux.go) send together the sends due
	// within this of its next one, at the last one's time: one wake-up for several sends, less
	// generator CPU at high rates, each of the earlier sends up to this late (generator
	// lateness, and in its latency, as any lateness is). 0: every send at its own time. The
	// goroutine engine sends each at its time whatever this says.
	Coalesce time.Duration
	// Changes, when set, changes the world during the measured phase and judges every answer
	// against the versions it may reflect (changes.go); nil for a frozen world.
	Changes *Changes
	// Draw is how each request's input is picked (draw.go): each in turn, the zero value, or a
	// drawn sequence, uniform or skewed, that sets how often an input is asked again.
	Draw Draw
	// Measuring, when set, is called once as the measured phase begins, at the warm-up's end (at
	// the start without one), and has returned before Run does: what must be read at that
	// moment, an engine's own counters, is read there. A run stopped in its warm-up may not call
	// it.
	Measuring func()
}

// atMeasure calls f at the measured phase's start, from a goroutine of its own, and returns a
// wait that returns once f has, or cancels it if it has not begun.
func atMeasure(f func(), at time.Time) (wait func()) {
	if f == nil {
		return func() {}
	}
	done := make(chan struct{})
	timer := time.AfterFunc(time.Until(at), func() {
		defer close(done)
		f()
	})
	return func() {
		if timer.Stop() {
			close(done)
		}
		<-done
	}
}

// MaxCoalesce bounds Spec.Coalesce: more would add more lateness than the generator is allowed
// before a send counts as late (LateAfter).
const MaxCoalesce = LateAfter

// Validate reports settings that cannot run, every one of them.
func (c Spec) Validate() error {
	var errs []error
	for _, p := range c.Problems() {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// Problem is one setting of a load that cannot run. It names its setting in the words of a
// scenario file's load keys (rate, workers, connections, duration, warmup, requests, segment), so
// that a file can point at the line that set it and a command line at its flag: one rule, in
// whichever words the user gave the load.
type Problem struct {
	Setting string // the setting to blame
	With    string // another setting the problem is about, if any
	Msg     string // what is wrong, to follow the setting's name
}

func (p Problem) Error() string {
	if p.With != "" {
		return p.Setting + " and " + p.With + " " + p.Msg
	}
	return p.Setting + " " + p.Msg
}

// Problems lists the settings that cannot run. A load is closed loop (workers) or open loop
// (rate), never both: a spec with both comes from one place that named both, because each place
// that names one model replaces the other (scenario.Resolve), and running either would silently
// drop the other.
func (c Spec) Problems() []Problem {
	var out []Problem
	bad := func(setting, format string, args ...any) {
		out = append(out, Problem{Setting: setting, Msg: fmt.Sprintf(format, args...)})
	}
	open := c.Open()
	schedule := "rate"
	if c.Replay != nil {
		schedule = "speed"
		if err := c.Replay.Check(); err != nil {
			bad("speed", "%v", err)
		}
		if c.Rate != 0 || len(c.Stages) > 0 {
			out = append(out, Problem{Setting: "speed", With: "rate", Msg: "given together: a replay sends at the recorded pace; give one or the other"})
		}
	} else if len(c.Stages) > 0 {
		schedule = "stages"
		if err := CheckStages(c.Stages); err != nil {
			bad("stages", "%v", err)
		} else if total := Total(c.Stages); c.Duration != total {
			bad("duration", "%s is not the %s the stages last: give one or the other", c.Duration, total)
		}
		if c.Rate != 0 {
			out = append(out, Problem{Setting: "stages", With: "rate", Msg: "given together: each is a whole open-loop schedule; give one or the other"})
		}
	} else if open {
		if err := CheckRate(c.Rate); err != nil {
			bad("rate", "%v", err)
		}
	}
	if c.Draw.Random() && c.Replay != nil {
		out = append(out, Problem{Setting: "input_skew", With: "speed", Msg: "given together: a replay asks its events in their recorded order; give one or the other"})
	}
	if c.Coalesce < 0 || c.Coalesce > MaxCoalesce {
		bad("coalesce", "%s: want 0 (each send at its time) to %s", c.Coalesce, MaxCoalesce)
	} else if c.Coalesce > 0 && !open {
		bad("coalesce", "%s applies to an open loop (a rate, stages or a replay): a closed loop sends when a worker is free", c.Coalesce)
	}
	if open {
		if c.Workers != 0 {
			out = append(out, Problem{Setting: schedule, With: "workers",
				Msg: "given together: workers sets the closed loop, " + schedule + " the open loop (whose requests in flight connections bounds); give one or the other"})
		}
		if c.Connections < 1 {
			bad("connections", "must be at least 1, got %d", c.Connections)
		}
		if c.Requests > 0 {
			bad("requests", "apply to closed loop; an open-loop run (%s) is bounded by its duration", schedule)
		}
	} else if c.Workers < 1 {
		bad("workers", "must be at least 1, got %d", c.Workers)
	}
	if c.Requests < 0 {
		bad("requests", "must not be negative, got %d", c.Requests)
	}
	if c.Requests == 0 && c.Duration <= 0 && c.Replay == nil {
		bad("duration", "must be positive, got %s (or give a request count)", c.Duration)
	}
	if c.Warmup < 0 {
		bad("warmup", "must not be negative, got %s", c.Warmup)
	}
	if c.Intervals < 0 || (c.Intervals > 0 && !open) {
		bad("intervals", "must be a positive duration, and apply to open loop only, got %s", c.Intervals)
	}
	if err := c.Segment.Validate(); err != nil {
		bad("segment", "%d/%d: %v", c.Segment.Index, c.Segment.Count, err)
	} else if !open && c.Workers >= 1 && c.Workers < c.Segment.orWhole().Count {
		bad("segment", "%s: %d workers cannot be split %d ways, one at least each", c.Segment, c.Workers, c.Segment.Count)
	}
	if err := c.CheckOpenFiles(); err != nil {
		setting := "workers"
		if open {
			setting = "connections"
		}
		out = append(out, Problem{Setting: setting, Msg: strings.TrimPrefix(err.Error(), setting+" ")})
	}
	return out
}

// ReplayOf is the replay schedule of the inputs' recorded offsets.
func (c Spec) ReplayOf(inputs []workload.Input) (Replay, error) {
	offsets := make([]time.Duration, len(inputs))
	for i, in := range inputs {
		offsets[i] = in.Offset
	}
	return NewReplay(offsets, *c.Replay)
}

// CheckOpenFiles refuses a load that needs more open files than this process may have: a
// socket for each worker (closed loop) or connection (open loop).
func (c Spec) CheckOpenFiles() error {
	if c.Open() {
		return sut.CheckOpenFiles(fmt.Sprintf("connections %d", c.Connections), c.Connections)
	}
	_, workers := c.Segment.Workers(c.Workers)
	return sut.CheckOpenFiles(fmt.Sprintf("workers %d", workers), workers)
}

// Progress is a snapshot for a live progress line.
type Progress struct {
	Warmup  bool
	Elapsed time.Duration
	OK      uint64
	Errors  uint64
}

// Outcome of one run of the driver.
type Outcome struct {
	Recorder *metrics.Recorder // all workers' measurements, merged
	Elapsed  time.Duration     // measured phase, from its start until the last worker returned
	// Stopped says why the run ended early: the context's cause (Ctrl-C, a server that died);
	// nil when it ran to completion.
	Stopped error
	// Usage of the authzbench process at the start and end of the measured phase.
	UsageStart, UsageEnd metrics.Usage
	// MeasuredFrom is when the measured phase began; it ended Elapsed later.
	MeasuredFrom time.Time
	// Open loop only: how well the generator kept its schedule.
	Schedule *Schedule
	// Intervals is the measured window interval by interval, when Spec.Intervals asked for it.
	Intervals []Interval
	// Changes is what became of the run's changes and how its answers were judged; nil for a
	// run without changes.
	Changes *ChangesOutcome
}

// Schedule says how an open-loop generator kept to its intended send times. Every send due
// in the measured window is either sent (and its answer recorded) or unsent: Intended = Sent +
// Unsent, and the run's requests are the sends due.
type Schedule struct {
	Intended int64 // sends due in the measured phase
	Sent     int64 // sends due in the measured phase that went out, whenever they did
	// Unsent counts sends due in the measured phase that never went out: every connection was
	// busy until the run gave up on them, Timeout after the window.
	Unsent int64
	Late   int64 // sent more than LateAfter after their intended time, for any reason
	// GeneratorLate counts sends the generator itself started more than LateAfter late while a
	// connection was free (a late wake-up, the pacer or a connection descheduled: the generator
	// short of CPU), as opposed to sends that waited because every connection was busy.
	GeneratorLate int64
	// Sender is the open-loop engine that sent: SenderEventLoop or SenderGoroutines. The two
	// keep the same schedule by different means (the event loop can send those due within a
	// coalesce window together), so a result says which, and a comparison of two says when they differ.
	Sender string
	// Together counts the measured sends a coalesce window sent at a wake-up after another (the
	// event loop; sends caught up after a late wake-up, due further apart, are not counted). Not
	// recorded in results: it tells the run whether a window the user asked for did anything.
	Together int64
}

// The open loop's engines (Schedule.Sender), as results record them.
const (
	SenderEventLoop  = "event_loop"
	SenderGoroutines = "goroutines"
)

// Waited counts the late sends that waited because every connection was busy: the server (or,
// for an engine inside authzbench, the engine) fell behind.
func (s *Schedule) Waited() int64 { return s.Late - s.GeneratorLate }

// Missed reports whether the load asked for was not delivered: some due send never went out,
// or the generator itself was late for more than 1 % of them. A few late sends are the noise of
// a shared machine, counted and shown but not a missed rate; sends that waited for a free
// connection are the server's doing, and their latency already counts the wait.
func (s *Schedule) Missed() bool { return s.Undelivered() || s.GeneratorBehind() }

// Undelivered: some send due in the measured window never went out.
func (s *Schedule) Undelivered() bool { return s.Unsent > 0 || s.Sent < s.Intended }

// GeneratorBehind: the generator itself was late for more than 1 % of the due sends.
func (s *Schedule) GeneratorBehind() bool { return s.GeneratorLate*100 > s.Intended }

// Run drives t with the inputs until the measured phase is over.
func (c Spec) Run(ctx context.Context, t kinds.Target, inputs []workload.Input, progress func(Progress)) Outcome {
	if c.Replay != nil {
		r, err := c.ReplayOf(inputs)
		if err != nil {
			return Outcome{Recorder: metrics.NewOpenRecorder(), Stopped: err, Schedule: &Schedule{}}
		}
		c.Warmup, c.Duration, c.Requests = 0, r.Window(), 0
		return c.runOpen(ctx, t, r, inputs, progress)
	}
	model, err := c.Model()
	if err != nil {
		return Outcome{Recorder: metrics.NewRecorder(), Stopped: err}
	}
	if p := model.Pacer(); p != nil {
		return c.runOpen(ctx, t, p, inputs, progress)
	}
	return c.runClosed(ctx, t, inputs, progress)
}
