package load

import (
	"errors"
	"fmt"
	"time"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/workload"
)

// Model is how a load sends its requests: a closed loop of workers, each sending its next
// request when the last is answered, or an open-loop Pacer that says when each send is due.
// (How a run kept its pacer's times is a Schedule.)
// It is the one place the model of a load is told apart: nothing outside this package asks
// whether a rate is set. A new schedule is its pacer's file beside constant.go, which records it
// (Record) for its kind's file in internal/result to describe in every report; choosing it is
// a Spec setting (Model, Problems) and its scenario key and flag.
type Model interface {
	// Pacer is the open-loop schedule of sends; nil for a closed loop.
	Pacer() Pacer
	// Describe labels the load for people, once for every report: "8 workers", "2000/s".
	Describe() string
	// Record writes the model into a run's load as the result document keeps it: its model and
	// its schedule's own fields, which the schedule's kind in internal/result reads back.
	Record(l *result.Load)
}

// Workers is the closed loop: this many workers, each with one request in flight.
type Workers int

// Pacer is nil: a closed loop has no schedule of sends.
func (Workers) Pacer() Pacer { return nil }

func (w Workers) Describe() string { return fmt.Sprintf("%d workers", int(w)) }

func (w Workers) Record(l *result.Load) { l.Model, l.Workers = result.ClosedLoop, int(w) }

// Pacer is the constant rate itself.
func (c Constant) Pacer() Pacer { return c }

// Describe is "2000/s".
func (c Constant) Describe() string { return c.String() }

func (c Constant) Record(l *result.Load) { l.Model, l.Rate = result.OpenLoop, c.Rate }

// Open reports whether the load is open loop: sent on a schedule, not by workers.
func (c Spec) Open() bool { return c.Rate != 0 || len(c.Stages) > 0 || c.Replay != nil }

// Model is the load's model, built from its settings: its stages, or a constant rate, or else
// the closed loop of its workers.
func (c Spec) Model() (Model, error) {
	if c.Replay != nil {
		return nil, errors.New("a replay's schedule is its inputs' recorded times: ReplayOf builds it")
	}
	if len(c.Stages) > 0 {
		stages := c.Stages
		if c.Warmup > 0 {
			// The warm-up holds the rate the first stage starts from, so the stages themselves
			// fall in the measured window, whole.
			hold := Stage{Over: c.Warmup, From: stages[0].From, To: stages[0].From}
			s, err := NewStages(append([]Stage{hold}, stages...))
			s.held = 1
			return s, err
		}
		return NewStages(stages)
	}
	if c.Open() {
		return ConstantRate(c.Rate)
	}
	if c.Workers < 1 {
		return nil, errors.New("a closed loop needs at least 1 worker")
	}
	return Workers(c.Workers), nil
}

// ModelFor is the load's model for these inputs: a replay's schedule is their recorded times
// (ReplayOf), any other model is the load's own (Model).
func (c Spec) ModelFor(inputs []workload.Input) (Model, error) {
	if c.Replay != nil {
		return c.ReplayOf(inputs)
	}
	return c.Model()
}

// Record writes the load into a run's result as the document keeps it: its measured window,
// warm-up and budget, an open loop's connections and coalescing, and its model, which records
// its own schedule (Model.Record). A load whose model cannot be built for the inputs records its
// loop alone, and its run says why it did not run.
func (c Spec) Record(l *result.Load, inputs []workload.Input) {
	l.DurationS, l.WarmupS, l.Requests = c.Duration.Seconds(), c.Warmup.Seconds(), c.Requests
	if c.Draw.Random() {
		l.InputSkew = c.Draw.String()
	}
	if c.Open() {
		l.Connections, l.CoalesceUS = c.Connections, float64(c.Coalesce)/float64(time.Microsecond)
	}
	m, err := c.ModelFor(inputs)
	if err != nil {
		l.Model, l.Workers = result.ClosedLoop, c.Workers
		if c.Open() {
			l.Model, l.Workers = result.OpenLoop, 0
		}
		return
	}
	m.Record(l)
}
