package spicedb

import (
	"context"

	"github.com/authzed/spicedb/pkg/embedded"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// spicedbInproc decides with SpiceDB's own permission checker inside the authzbench process
// (pkg/embedded's Check over its memory datastore), on requests built before timing (the schema
// and relationships written by the run's preparation), so the measured path is that Check
// alone and a look at its answer.
type spicedbInproc struct {
	kinds.NoWatch
	common   kinds.Common
	loaded   *Loaded
	requests []embedded.CheckRequest
	// checker is the engine asked: the run's shared one, or own, the target's own that a run
	// whose world changes writes into (writes.go), closed when the target stops.
	checker  *Engine
	own      *Engine
	settings *SpiceDBInprocConfig
}

func init() {
	kinds.Register(kinds.Kind{Name: "spicedb/inproc", Engine: Name, Placement: kinds.InProcess, LoadsPolicy: true, Order: 59,
		NewConfig: func() kinds.Config { return &SpiceDBInprocConfig{} },
		New: func(common kinds.Common, c kinds.Config) kinds.Target {
			return &spicedbInproc{common: common, settings: c.(*SpiceDBInprocConfig)}
		}})
}

// SpiceDBInprocConfig is spicedb/inproc's settings: the consistency it is asked, which its
// checker has one of.
type SpiceDBInprocConfig struct {
	ConsistencySetting `yaml:",inline"`
}

func (c *SpiceDBInprocConfig) Check() error {
	return c.ConsistencySetting.check("spicedb/inproc", fullyConsistent)
}

func (t *spicedbInproc) Start(ctx context.Context, w *workload.Workload) error {
	l, err := Load(ctx, t.common.Prepared, w)
	if err != nil {
		return err
	}
	t.loaded, t.requests, t.checker = l, l.Requests, l.Engine
	return nil
}

func (t *spicedbInproc) Worker() kinds.Decider { return spicedbWorker{t} }

type spicedbWorker struct{ t *spicedbInproc }

// Decide asks the checker; what its answer means against the input's assertion (a conditional
// answer is a decision only where assertCaveated asks for one) is Outcome's.
func (w spicedbWorker) Decide(ctx context.Context, i int) verify.Outcome {
	allowed, err := w.t.checker.Check(ctx, w.t.requests[i])
	if err == nil && w.t.loaded.Fixture.Assertions[i].Expect != ExpectConditional {
		return verify.Outcome{Kind: verify.Decided, Allow: allowed}
	}
	return Outcome(w.t.loaded.Fixture.Assertions[i], allowed, err)
}

func (t *spicedbInproc) Info() kinds.Info {
	// pkg/embedded's checker reads the head revision on every call, through no dispatch
	// cache: said, so that a comparison with a cached engine says so too.
	return kinds.Info{Engine: Name, Mode: "inproc", Version: "spicedb " + Version(), Consistency: t.settings.Promise().Record(),
		Caches: []result.Cache{{Name: DispatchCache, Why: "pkg/embedded's checker has none"}}}
}

// Stop leaves the checker to the run's preparations, which every spicedb/inproc target of the
// run shares.
func (t *spicedbInproc) Stop(context.Context) error {
	if t.own != nil {
		t.own.Close()
		t.own = nil
	}
	return nil
}
