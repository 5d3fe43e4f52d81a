package opa

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/version"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.Register(kinds.Kind{Name: "opa/inproc", Engine: "opa", Placement: kinds.InProcess, LoadsPolicy: true, Order: 10,
		NewConfig: func() kinds.Config { return &kinds.NoConfig{} },
		New:       func(common kinds.Common, _ kinds.Config) kinds.Target { return &inproc{common: common} }})
}

// inproc evaluates with OPA's Go library inside the authzbench process: the engine's own
// cost, with no transport. The query is prepared once per run (Compiled) and every input
// parsed to OPA's value type before timing, so the measured path is only the evaluation.
type inproc struct {
	kinds.NoWatch
	common kinds.Common
	query  rego.PreparedEvalQuery
	inputs []ast.Value
	// inputOpts hands each input to Eval, built once: an option is a closure, and building it
	// per decision would allocate on the measured path.
	inputOpts []rego.EvalOption
	w         *workload.Workload
	// live, once Writer was asked for, is the store of the target's own that takes the run's
	// writes; its workers decide over it.
	live *liveStore
}

func (t *inproc) Start(ctx context.Context, w *workload.Workload) error {
	var err error
	if t.query, err = Compiled(ctx, t.common.Prepared, w); err != nil {
		return err
	}
	t.w = w
	t.inputs = make([]ast.Value, len(w.Inputs))
	for i, in := range w.Inputs {
		v, err := ast.ValueFromReader(bytes.NewReader(in.JSON))
		if err != nil {
			return fmt.Errorf("workload %s input %d: %w", w.Name, i+1, err)
		}
		t.inputs[i] = v
		t.inputOpts = append(t.inputOpts, rego.EvalParsedInput(v))
	}
	return nil
}

func (t *inproc) Worker() kinds.Decider {
	w := &inprocWorker{t: t, deadline: evalDeadline{base: time.Now(), timeout: t.common.RequestTimeout()}}
	w.cancelOpt = rego.EvalExternalCancel(&w.deadline)
	return w
}

type inprocWorker struct {
	t         *inproc
	deadline  evalDeadline
	cancelOpt rego.EvalOption
}

func (w *inprocWorker) Decide(ctx context.Context, i int) verify.Outcome {
	w.deadline.start(ctx)
	query := &w.t.query
	if w.t.live != nil {
		var err error
		if query, err = w.t.live.current(ctx); err != nil {
			return verify.Outcome{Kind: verify.EvalFailed, Err: err}
		}
	}
	rs, err := query.Eval(ctx, w.t.inputOpts[i], w.cancelOpt)
	if err != nil {
		if w.deadline.cancelled.Load() || ctx.Err() != nil {
			return verify.Outcome{Kind: verify.TimedOut, Err: err}
		}
		return verify.Outcome{Kind: verify.EvalFailed, Err: err}
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return verify.Outcome{Kind: verify.NoResult}
	}
	return kinds.DecisionOfValue(rs[0].Expressions[0].Value)
}

// evalDeadline stops an evaluation that runs past --timeout, or past the end of the run. OPA
// asks its Cancel before every expression it evaluates; this one reads the clock on every 16th
// question only, which keeps the check to a counter on the measured path. It replaces the
// goroutine that Eval otherwise starts for every evaluation to watch the context, so giving
// evaluations a deadline costs nothing over not giving them one. A decision too short to be
// asked 16 times that still overruns is charged as a timeout by the load driver, which times
// every decision.
type evalDeadline struct {
	ctx       context.Context
	base      time.Time
	timeout   time.Duration
	until     time.Duration // offset from base
	asked     uint32
	cancelled atomic.Bool
}

func (d *evalDeadline) start(ctx context.Context) {
	d.ctx, d.asked = ctx, 0
	d.cancelled.Store(false)
	d.until = time.Since(d.base) + d.timeout
}

func (d *evalDeadline) Cancel() { d.cancelled.Store(true) }

func (d *evalDeadline) Cancelled() bool {
	if d.cancelled.Load() {
		return true
	}
	if d.asked++; d.asked%16 != 0 {
		return false
	}
	if time.Since(d.base) > d.until || d.ctx.Err() != nil {
		d.cancelled.Store(true)
		return true
	}
	return false
}

func (t *inproc) Info() kinds.Info {
	return kinds.Info{Engine: "opa", Mode: "inproc", Version: version.Version}
}

func (t *inproc) Stop(context.Context) error { return nil }
