package kinds

import (
	"context"
	"fmt"
	"strings"

	"github.com/authzbench/authzbench/internal/buildinfo"
	"github.com/authzbench/authzbench/internal/cedarengine"
	enginecedar "github.com/authzbench/authzbench/internal/engine/cedar"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// cedarInproc decides with cedar-go inside the authzbench process. The policy set and entities
// are loaded once, from the same files the served mode loads, and every request is parsed
// before timing, so the measured path is cedar.Authorize alone.
type cedarInproc struct {
	noWatch
	common   Common
	engine   *cedarengine.Engine
	requests []cedarengine.Request
}

func init() {
	Register(Kind{Name: "cedar/inproc", Engine: "cedar", Placement: InProcess, LoadsPolicy: true, Order: 40,
		NewConfig: func() Config { return &NoConfig{} },
		New:       func(common Common, _ Config) Target { return &cedarInproc{common: common} }})
}

func (t *cedarInproc) Start(ctx context.Context, w *workload.Workload) error {
	c, err := enginecedar.Load(ctx, t.common.Prepared, w)
	if err != nil {
		return err
	}
	t.engine, t.requests = c.Engine, c.Requests
	return nil
}

func (t *cedarInproc) Worker() Decider { return cedarWorker{t} }

type cedarWorker struct{ t *cedarInproc }

func (w cedarWorker) Decide(_ context.Context, i int) verify.Outcome {
	decision, diag := w.t.engine.Decide(&w.t.requests[i])
	if len(diag.Errors) > 0 {
		// Cedar skips a policy that fails to evaluate and decides without it: that decision is
		// not the policies' answer, so it is an evaluation error, not a success.
		e := diag.Errors[0]
		return verify.Outcome{Kind: verify.EvalFailed, Err: fmt.Errorf("cedar evaluation error: %s: %s", e.PolicyID, e.Message)}
	}
	return verify.Outcome{Kind: verify.Decided, Allow: bool(decision)}
}

func (t *cedarInproc) Info() Info {
	return Info{Engine: "cedar", Mode: "inproc", Version: cedarVersion()}
}

func (t *cedarInproc) Stop(context.Context) error { return nil }

// cedarVersion is the version of cedar-go linked into this executable.
func cedarVersion() string {
	return strings.TrimSpace("cedar-go " + buildinfo.ModuleVersion("github.com/cedar-policy/cedar-go"))
}
