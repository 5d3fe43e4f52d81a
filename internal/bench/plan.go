package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/workload"
)

// Plan is a scenario resolved once, before any load: every target's kind found and its
// settings checked, every workload built, each engine the targets run prepared from it, and
// every target's settings checked against every workload. Setup flows one way: NewPlan reads
// the scenario, Execute only carries the plan out, and nothing after NewPlan writes into the
// scenario or a workload (what the engines prepared is the plan's, in Prepared).
type Plan struct {
	Scenario  *scenario.Scenario
	Workloads []*workload.Workload // in the scenario's order
	// Prepared is what each engine built from the workloads (a compiled policy), shared by
	// every target of the run.
	Prepared *engine.Prepared
}

// NewPlan resolves the scenario, reporting every mistake it finds (a bad policy or inputs
// file, settings that cannot work) before any load starts. A workload validation built is
// taken as it is; the others are built here. o.Common.Prepared, when set, is the store the
// engines' artefacts go into (a capacity search shares one across its probes); otherwise the
// plan has a store of its own.
func NewPlan(ctx context.Context, s *scenario.Scenario, o Options) (*Plan, error) {
	var errs []error
	for _, t := range s.Targets {
		if t.Kind() == nil {
			_, err := kinds.LookupAny(t.Name)
			return nil, err
		}
		if err := t.Settings().Check(); err != nil {
			errs = append(errs, fmt.Errorf("target %s: %w", t.Name, err))
		}
		if err := t.Load.CheckOpenFiles(); err != nil {
			errs = append(errs, fmt.Errorf("target %s: %w", t.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := checkOrder(s, o); err != nil {
		return nil, err
	}
	p := &Plan{Scenario: s, Prepared: o.Common.Prepared}
	if p.Prepared == nil {
		p.Prepared = engine.NewPrepared()
	}
	for _, ref := range s.Workloads {
		w := ref.Built
		if w == nil {
			var err error
			if ref.User != nil {
				w, err = workload.FromFiles(*ref.User)
			} else {
				w, err = workload.BuiltinFor(ref.Name, s.Engines())
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := p.prepare(ctx, w); err != nil {
			errs = append(errs, fmt.Errorf("workload %s: %w", w.Name, err))
			continue
		}
		p.Workloads = append(p.Workloads, w)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// What only a workload can tell of a target's settings (the http target's body template
	// against every input).
	for _, t := range s.Targets {
		c, ok := t.Settings().(kinds.WorkloadChecker)
		if !ok {
			continue
		}
		for _, w := range p.Workloads {
			if err := c.CheckWorkload(w); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// prepare has each engine the scenario's targets run, and the workload is written for,
// prepare it (engine.Prepare), once for the run.
func (p *Plan) prepare(ctx context.Context, w *workload.Workload) error {
	done := map[string]bool{}
	for _, t := range p.Scenario.Targets {
		k := t.Kind()
		if done[k.Engine] {
			continue
		}
		done[k.Engine] = true
		if e := engine.For(k.Engine); e != nil && e.Written(w) {
			if _, err := engine.Prepare(ctx, p.Prepared, e, w); err != nil {
				return err
			}
		}
	}
	return nil
}

// DropChecked lets go of what an engine prepared from the workloads (OPA's compiled query and
// data, as large as OPA's own store) where every target of the engine read it only to check the
// workload (kinds.Kind.ChecksPrepared), which planning has done: a served OPA decides with its
// own copy, and authzbench's need not sit beside it through the load. Called once the checks
// before the load are over; a target that asks for the artefact after all builds it again.
func (p *Plan) DropChecked() {
	decides := map[string]bool{} // engines a target decides with through the artefact itself
	for _, t := range p.Scenario.Targets {
		if k := t.Kind(); !k.ChecksPrepared {
			decides[k.Engine] = true
		}
	}
	for _, t := range p.Scenario.Targets {
		k := t.Kind()
		if decides[k.Engine] {
			continue
		}
		for _, w := range p.Workloads {
			p.Prepared.Drop(k.Engine, w)
		}
	}
}
