package kinds

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/version"

	engineopa "github.com/authzbench/authzbench/internal/engine/opa"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	Register(Kind{Name: "opa/inproc", Engine: "opa", Placement: InProcess, LoadsPolicy: true, Order: 10,
		NewConfig: func() Config { return &NoConfig{} },
		New:       func(common Common, _ Config) Target { return &opaInproc{common: common} }})
}

// opaInproc evaluates with OPA's Go library inside the authzbench process: the engine's own
// cost, with no transport. The query is prepared once per run (engineopa.Compiled) and every input
// parsed to OPA's value type before timing, so the measured path is only the evaluation.
type opaInproc struct {
	noWatch
	common Common
	query  rego.PreparedEvalQuery
	inputs []ast.Value
	// inputOpts hands each input to Eval, built once: an option is a closure, and building it
	// per decision would allocate on the measured path.
	inputOpts []rego.EvalOption
}

func (t *opaInproc) Start(ctx context.Context, w *workload.Workload) error {
	var err error
	if t.query, err = engineopa.Compiled(ctx, t.common.Prepared, w); err != nil {
		return err
	}
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

func (t *opaInproc) Worker() Decider {
	w := &inprocWorker{t: t, deadline: evalDeadline{base: time.Now(), timeout: t.common.timeout()}}
	w.cancelOpt = rego.EvalExternalCancel(&w.deadline)
	return w
}

type inprocWorker struct {
	t         *opaInproc
	deadline  evalDeadline
	cancelOpt rego.EvalOption
}

func (w *inprocWorker) Decide(ctx context.Context, i int) verify.Outcome {
	w.deadline.start(ctx)
	rs, err := w.t.query.Eval(ctx, w.t.inputOpts[i], w.cancelOpt)
	if err != nil {
		if w.deadline.cancelled.Load() || ctx.Err() != nil {
			return verify.Outcome{Kind: verify.TimedOut, Err: err}
		}
		return verify.Outcome{Kind: verify.EvalFailed, Err: err}
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return verify.Outcome{Kind: verify.NoResult}
	}
	return decisionOfValue(rs[0].Expressions[0].Value)
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

func (t *opaInproc) Info() Info {
	return Info{Engine: "opa", Mode: "inproc", Version: linkedOPAVersion()}
}

func (t *opaInproc) Stop(context.Context) error { return nil }

func linkedOPAVersion() string { return version.Version }
