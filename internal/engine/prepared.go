package engine

import (
	"context"
	"sync"

	"github.com/authzbench/authzbench/internal/workload"
)

// Prepared holds what was built from the workloads of one run before any load (an engine's
// compiled policy, parsed requests), each built the first time it is asked for and shared from
// then on, so that a large policy is compiled once per run and not once per target. A run's
// plan fills it; it belongs to the run, not to the workloads, which nothing downstream of
// their building writes into. A nil *Prepared builds every time and shares nothing (a lone
// target, a profile).
type Prepared struct {
	mu      sync.Mutex
	entries map[preparedKey]*preparedEntry
}

type preparedKey struct {
	name string
	w    *workload.Workload
}

type preparedEntry struct {
	once  sync.Once
	value any
	err   error
}

// NewPrepared returns an empty store for one run.
func NewPrepared() *Prepared { return &Prepared{entries: map[preparedKey]*preparedEntry{}} }

// Of returns what name (an engine's name, or a kind's own artefact such as "opa/wasm") is,
// built from w by build the first time it is asked for; build's error is kept and returned
// alike to every caller. The artefact must depend on nothing but the workload: a target's own
// settings go into what it makes of the artefact, not into the artefact.
func (p *Prepared) Of(name string, w *workload.Workload, build func() (any, error)) (any, error) {
	if p == nil {
		return build()
	}
	p.mu.Lock()
	k := preparedKey{name, w}
	e := p.entries[k]
	if e == nil {
		e = &preparedEntry{}
		p.entries[k] = e
	}
	p.mu.Unlock()
	// Held only to find the entry: two artefacts build concurrently, each under its own Once.
	e.once.Do(func() { e.value, e.err = build() })
	return e.value, e.err
}

// Prepare returns what the engine prepares from w (nil for an engine that is no Preparer),
// through p.
func Prepare(ctx context.Context, p *Prepared, e Engine, w *workload.Workload) (any, error) {
	pr, ok := e.(Preparer)
	if !ok {
		return nil, nil
	}
	return p.Of(e.Name(), w, func() (any, error) {
		// Shared by every caller, so no caller's cancellation may leave a cancelled build
		// behind for the others.
		return pr.Prepare(context.WithoutCancel(ctx), w)
	})
}
