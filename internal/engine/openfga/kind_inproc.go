package openfga

import (
	"context"
	"fmt"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// openfgaInproc decides with OpenFGA's own server inside the authzbench process: its Check over
// its in-memory datastore, on requests built before timing (the store, model and tuples
// written by the run's preparation), so the measured path is Server.Check alone.
type openfgaInproc struct {
	kinds.NoWatch
	common   kinds.Common
	engine   *Engine
	requests []*openfgav1.CheckRequest
}

func init() {
	kinds.Register(kinds.Kind{Name: "openfga/inproc", Engine: "openfga", Placement: kinds.InProcess, LoadsPolicy: true, Order: 56,
		NewConfig: func() kinds.Config { return &kinds.NoConfig{} },
		New:       func(common kinds.Common, _ kinds.Config) kinds.Target { return &openfgaInproc{common: common} }})
}

func (t *openfgaInproc) Start(ctx context.Context, w *workload.Workload) error {
	l, err := Load(ctx, t.common.Prepared, w)
	if err != nil {
		return err
	}
	t.engine, t.requests = l.Engine, l.Requests
	return nil
}

func (t *openfgaInproc) Worker() kinds.Decider { return openfgaWorker{t} }

type openfgaWorker struct{ t *openfgaInproc }

func (w openfgaWorker) Decide(ctx context.Context, i int) verify.Outcome {
	allowed, err := w.t.engine.Check(ctx, w.t.requests[i])
	if err != nil {
		// OpenFGA failed to resolve the check (a depth or a concurrency limit, a condition's
		// error): no decision, counted as an evaluation error, never as a deny.
		return verify.Outcome{Kind: verify.EvalFailed, Err: fmt.Errorf("openfga check: %s", status.Convert(err).Message())}
	}
	return verify.Outcome{Kind: verify.Decided, Allow: allowed}
}

func (t *openfgaInproc) Info() kinds.Info {
	return kinds.Info{Engine: "openfga", Mode: "inproc", Version: "openfga " + Version()}
}

// Stop leaves the engine to the run's preparations, which every openfga/inproc target of the
// run shares.
func (t *openfgaInproc) Stop(context.Context) error { return nil }
