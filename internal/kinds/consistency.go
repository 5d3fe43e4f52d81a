package kinds

import (
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// The option itself is declared by internal/kinds/consistencyflag, which the engines that take it
// import.

// Consistency is what a target's checks ask of the engine's freshness, in the engine's words,
// and how stale an answer may be under it by the engine's own promise: what a run whose world
// changes judges its answers against (--stale-allowed overrides it).
type Consistency struct {
	// Name is the consistency in the engine's words: "minimize_latency", "HIGHER_CONSISTENCY".
	Name string
	// Default: the user asked for none; this is what the target asks by default.
	Default bool
	// Stale is how old an answer may be under it: 0 when the engine promises fresh answers.
	Stale time.Duration
	// Why says what the promise rests on, for the run's notes.
	Why string
}

// Consistent is implemented by the settings of a kind whose checks ask the engine for a
// consistency (the consistency option): asked before any target starts, so that a bad value is
// refused by the settings' Check and a run whose world changes knows the promise to judge by.
type Consistent interface {
	Promise() Consistency
}

// PromiseOf is the consistency settings c ask for; false for a kind that asks none.
func PromiseOf(c Config) (Consistency, bool) {
	if p, ok := c.(Consistent); ok {
		return p.Promise(), true
	}
	return Consistency{}, false
}

// Record is the consistency as the result records it (sut.consistency).
func (c Consistency) Record() *result.Consistency {
	return &result.Consistency{Name: c.Name, Default: c.Default, PromiseMS: float64(c.Stale) / float64(time.Millisecond), Why: c.Why}
}
