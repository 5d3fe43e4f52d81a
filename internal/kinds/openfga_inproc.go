package kinds

import (
	"context"
	"fmt"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/engine/openfga"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// openfgaInproc decides with OpenFGA's own server inside the authzbench process: its Check over
// its in-memory datastore, on requests built before timing (the store, model and tuples
// written by the run's preparation), so the measured path is Server.Check alone.
type openfgaInproc struct {
	noWatch
	common   Common
	engine   *openfga.Engine
	requests []*openfgav1.CheckRequest
}

func init() {
	Register(Kind{Name: "openfga/inproc", Engine: "openfga", Placement: InProcess, LoadsPolicy: true, Order: 56,
		NewConfig: func() Config { return &NoConfig{} },
		New:       func(common Common, _ Config) Target { return &openfgaInproc{common: common} }})
}

func (t *openfgaInproc) Start(ctx context.Context, w *workload.Workload) error {
	l, err := openfga.Load(ctx, t.common.Prepared, w)
	if err != nil {
		return err
	}
	t.engine, t.requests = l.Engine, l.Requests
	return nil
}

func (t *openfgaInproc) Worker() Decider { return openfgaWorker{t} }

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

func (t *openfgaInproc) Info() Info {
	return Info{Engine: "openfga", Mode: "inproc", Version: "openfga " + openfga.Version()}
}

// Stop leaves the engine to the run's preparations, which every openfga/inproc target of the
// run shares.
func (t *openfgaInproc) Stop(context.Context) error { return nil }
