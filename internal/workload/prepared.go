package workload

import "sync"

// Prepared returns what key names, built from the workload by build the first time it is asked
// for and shared from then on: a compiled policy, parsed requests. A run builds its workload
// once and every target of it, and every check before it, takes the same artefact, so a large
// policy is compiled once per run and not once per target. build's error is kept and returned
// alike to every caller.
//
// The artefact must not depend on anything but the workload: a target's own settings go into
// what it makes of the artefact, not into the artefact.
func (w *Workload) Prepared(key string, build func() (any, error)) (any, error) {
	preparedMu.Lock()
	if w.prepared == nil {
		w.prepared = map[string]*prepared{}
	}
	p := w.prepared[key]
	if p == nil {
		p = &prepared{}
		w.prepared[key] = p
	}
	preparedMu.Unlock()
	p.once.Do(func() { p.value, p.err = build() })
	return p.value, p.err
}

// preparedMu guards the map of every workload's artefacts, held only to find an entry: the
// build itself runs under the entry's own sync.Once, so two artefacts build concurrently.
var preparedMu sync.Mutex

type prepared struct {
	once  sync.Once
	value any
	err   error
}
