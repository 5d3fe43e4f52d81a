package target

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/version"

	"github.com/authzbench/authzbench/internal/userwords"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	Register(Kind{Name: "opa/inproc", Engine: "opa", Placement: InProcess, LoadsPolicy: true, Order: 10,
		NewConfig: func() Config { return &NoConfig{} },
		New:       func(common Common, _ Config) Target { return &opaInproc{common: common} }})
}

// opaInproc evaluates with OPA's Go library inside the authzbench process: the engine's own
// cost, with no transport. The query is prepared once per run (CompileOPA) and every input
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
	if t.query, err = CompileOPA(ctx, w); err != nil {
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

// CompileOPA compiles the workload's policy and data once per run, exactly as OPA's loader reads
// them, and prepares its query: every OPA target of the run, and every check before it, shares
// the prepared query (evaluating it is safe from many goroutines), so a large policy is
// compiled once and not once per target. The error, if any, is the same for every caller.
func CompileOPA(ctx context.Context, w *workload.Workload) (rego.PreparedEvalQuery, error) {
	v, err := w.Prepared("opa", func() (any, error) {
		dir, err := os.MkdirTemp("", "authzbench-compile-")
		if err != nil {
			return nil, fmt.Errorf("create directory for workload files: %w", err)
		}
		defer os.RemoveAll(dir) // compiled, the query no longer reads its files
		policies, data, err := w.Files(dir)
		if err != nil {
			return nil, err
		}
		// Shared by every caller, so no caller's cancellation may leave a cancelled compile
		// behind for the others.
		return PrepareOPA(context.WithoutCancel(ctx), w.Query, policies, data, w.RegoV0)
	})
	if err != nil {
		return rego.PreparedEvalQuery{}, err
	}
	return v.(rego.PreparedEvalQuery), nil
}

// PrepareOPA compiles the policy and data files exactly as OPA's loader reads them, so a Rego
// error names its file and line, and prepares query for evaluation. v0 reads the policy in Rego
// v0 syntax, as OPA's --v0-compatible does; without it, an error that looks like v0 syntax says
// how to run it.
func PrepareOPA(ctx context.Context, query string, policies, data []string, v0 bool) (rego.PreparedEvalQuery, error) {
	if len(policies) == 0 || query == "" {
		return rego.PreparedEvalQuery{}, workload.NewSettingError("policy", func(n func(string) string) string {
			return fmt.Sprintf("the OPA targets need a policy (%s) and a query; only the http target runs inputs alone", n("policy"))
		})
	}
	paths := append(append([]string{}, policies...), data...)
	opts := []func(*rego.Rego){rego.Query(query), rego.Load(paths, nil)}
	if v0 {
		opts = append(opts, rego.SetRegoVersion(ast.RegoV0))
	}
	pq, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		return pq, fmt.Errorf("compile policy for %s: %w", query, userwords.Rewritten(workload.SuggestV0(err, v0)))
	}
	return pq, nil
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
