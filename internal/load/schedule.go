package load

import (
	"errors"
	"fmt"
)

// Model is how a load sends its requests: a closed loop of workers, each sending its next
// request when the last is answered, or an open-loop Pacer that says when each send is due.
// (How a run kept its pacer's times is a Schedule.)
// It is the one place the model of a load is told apart: nothing outside this package asks
// whether a rate is set; a new schedule is one file beside constant.go.
type Model interface {
	// Pacer is the open-loop schedule of sends; nil for a closed loop.
	Pacer() Pacer
	// Describe labels the load for people, once for every report: "8 workers", "2000/s".
	Describe() string
}

// Workers is the closed loop: this many workers, each with one request in flight.
type Workers int

// Pacer is nil: a closed loop has no schedule of sends.
func (Workers) Pacer() Pacer { return nil }

func (w Workers) Describe() string { return fmt.Sprintf("%d workers", int(w)) }

// Pacer is the constant rate itself.
func (c Constant) Pacer() Pacer { return c }

// Describe is "2000/s".
func (c Constant) Describe() string { return c.String() }

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
			stages = append([]Stage{hold}, stages...)
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
