package engine

import (
	"context"
	"sync"
	"sync/atomic"

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
	built atomic.Bool // once's build has returned
	// checked: the artefact was built without error and dropped since (Drop): Checked
	// answers from that, Of builds it again.
	checked bool
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
	e := p.entry(preparedKey{name, w}, true)
	e.build(build)
	return e.value, e.err
}

// Checked returns the error of building what name is from w, for a caller that needs the
// build's verdict and not the artefact (a server that reads the workload's files itself): built
// the first time it is asked for, and nil without building again where it was built and dropped
// since (Drop).
func (p *Prepared) Checked(name string, w *workload.Workload, build func() (any, error)) error {
	if p == nil {
		_, err := build()
		return err
	}
	e := p.entry(preparedKey{name, w}, false)
	if e.checked {
		return nil
	}
	e.build(build)
	return e.err
}

// Drop lets go of what name built from w, where it built without error, keeping that it did:
// a later Checked answers nil from that, a later Of builds it again. A run drops what only its
// checks read (OPA's compiled query and data, as large as OPA's own store) before the load, so
// that it does not sit beside the server being measured. An artefact not built, still
// building or whose build failed is left as it is.
func (p *Prepared) Drop(name string, w *workload.Workload) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	k := preparedKey{name, w}
	if e := p.entries[k]; e != nil && !e.checked && e.built.Load() && e.err == nil {
		p.entries[k] = &preparedEntry{checked: true}
	}
}

// Holds reports whether the store holds what name built from w: built, and not dropped.
func (p *Prepared) Holds(name string, w *workload.Workload) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[preparedKey{name, w}]
	return e != nil && !e.checked && e.built.Load()
}

// entry finds the entry of k, made where there is none; forValue replaces a dropped one, whose
// artefact is to be built again. The lock is held only to find it: two artefacts build
// concurrently, each under its own Once.
func (p *Prepared) entry(k preparedKey, forValue bool) *preparedEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[k]
	if e == nil || forValue && e.checked {
		e = &preparedEntry{}
		p.entries[k] = e
	}
	return e
}

func (e *preparedEntry) build(build func() (any, error)) {
	e.once.Do(func() {
		e.value, e.err = build()
		e.built.Store(true)
	})
}

// Check returns the error of what the engine prepares from w (nil for an engine that is no
// Preparer), through p, for a caller that needs the check and not the artefact (Checked).
func Check(ctx context.Context, p *Prepared, e Engine, w *workload.Workload) error {
	pr, ok := e.(Preparer)
	if !ok {
		return nil
	}
	return p.Checked(e.Name(), w, func() (any, error) { return pr.Prepare(context.WithoutCancel(ctx), w) })
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
