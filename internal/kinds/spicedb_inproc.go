package kinds

import (
	"context"

	"github.com/authzed/spicedb/pkg/embedded"

	"github.com/authzbench/authzbench/internal/engine/spicedb"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// spicedbInproc decides with SpiceDB's own permission checker inside the authzbench process
// (pkg/embedded's Check over its memory datastore), on requests built before timing (the schema
// and relationships written by the run's preparation), so the measured path is that Check
// alone and a look at its answer.
type spicedbInproc struct {
	noWatch
	common   Common
	loaded   *spicedb.Loaded
	requests []embedded.CheckRequest
}

func init() {
	Register(Kind{Name: "spicedb/inproc", Engine: spicedb.Name, Placement: InProcess, LoadsPolicy: true, Order: 59,
		NewConfig: func() Config { return &NoConfig{} },
		New:       func(common Common, _ Config) Target { return &spicedbInproc{common: common} }})
}

func (t *spicedbInproc) Start(ctx context.Context, w *workload.Workload) error {
	l, err := spicedb.Load(ctx, t.common.Prepared, w)
	if err != nil {
		return err
	}
	t.loaded, t.requests = l, l.Requests
	return nil
}

func (t *spicedbInproc) Worker() Decider { return spicedbWorker{t} }

type spicedbWorker struct{ t *spicedbInproc }

// Decide asks the checker; what its answer means against the input's assertion (a conditional
// answer is a decision only where assertCaveated asks for one) is spicedb.Outcome's.
func (w spicedbWorker) Decide(ctx context.Context, i int) verify.Outcome {
	allowed, err := w.t.loaded.Engine.Check(ctx, w.t.requests[i])
	if err == nil && w.t.loaded.Fixture.Assertions[i].Expect != spicedb.ExpectConditional {
		return verify.Outcome{Kind: verify.Decided, Allow: allowed}
	}
	return spicedb.Outcome(w.t.loaded.Fixture.Assertions[i], allowed, err)
}

func (t *spicedbInproc) Info() Info {
	return Info{Engine: spicedb.Name, Mode: "inproc", Version: "spicedb " + spicedb.Version()}
}

// Stop leaves the checker to the run's preparations, which every spicedb/inproc target of the
// run shares.
func (t *spicedbInproc) Stop(context.Context) error { return nil }
