package cedar

import (
	"context"
	"fmt"
	"strings"

	cedargo "github.com/cedar-policy/cedar-go"

	"github.com/authzbench/authzbench/internal/buildinfo"
	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// inproc decides with cedar-go inside the authzbench process. The policy set and entities are
// loaded once, from the same files the served mode loads, and every request is parsed before
// timing, so the measured path is cedar.Authorize alone.
type inproc struct {
	kinds.NoWatch
	common   kinds.Common
	engine   *cedarengine.Engine
	requests []cedarengine.Request
	// live, once Writer was asked for, holds the engine the run's writes swap in; its workers
	// decide with the one current at each decision.
	live *cedarengine.Live
}

func init() {
	kinds.Register(kinds.Kind{Name: "cedar/inproc", Engine: "cedar", Placement: kinds.InProcess, LoadsPolicy: true, Order: 40,
		NewConfig: func() kinds.Config { return &kinds.NoConfig{} },
		New:       func(common kinds.Common, _ kinds.Config) kinds.Target { return &inproc{common: common} }})
}

func (t *inproc) Start(ctx context.Context, w *workload.Workload) error {
	c, err := Load(ctx, t.common.Prepared, w)
	if err != nil {
		return err
	}
	t.engine, t.requests = c.Engine, c.Requests
	return nil
}

func (t *inproc) Worker() kinds.Decider {
	if t.live != nil {
		return liveWorker{t}
	}
	return worker{t}
}

type worker struct{ t *inproc }

func (w worker) Decide(_ context.Context, i int) verify.Outcome {
	return outcomeOf(w.t.engine.Decide(&w.t.requests[i]))
}

// liveWorker decides with the engine current when the decision starts: a run whose world
// changes.
type liveWorker struct{ t *inproc }

func (w liveWorker) Decide(_ context.Context, i int) verify.Outcome {
	return outcomeOf(w.t.live.Engine().DecideCurrent(&w.t.requests[i]))
}

func outcomeOf(decision cedargo.Decision, diag cedargo.Diagnostic) verify.Outcome {
	if len(diag.Errors) > 0 {
		// Cedar skips a policy that fails to evaluate and decides without it: that decision is
		// not the policies' answer, so it is an evaluation error, not a success.
		e := diag.Errors[0]
		return verify.Outcome{Kind: verify.EvalFailed, Err: fmt.Errorf("cedar evaluation error: %s: %s", e.PolicyID, e.Message)}
	}
	return verify.Outcome{Kind: verify.Decided, Allow: bool(decision)}
}

func (t *inproc) Info() kinds.Info {
	return kinds.Info{Engine: "cedar", Mode: "inproc", Version: kindVersion()}
}

func (t *inproc) Stop(context.Context) error { return nil }

// kindVersion is the version of cedar-go linked into this executable, as a target's Info
// records it.
func kindVersion() string {
	return strings.TrimSpace("cedar-go " + buildinfo.ModuleVersion("github.com/cedar-policy/cedar-go"))
}
