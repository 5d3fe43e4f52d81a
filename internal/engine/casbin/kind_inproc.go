package casbin

import (
	"context"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// casbinInproc decides with Casbin inside the authzbench process, as a Go service embeds it:
// one SyncedEnforcer, loaded by the run's preparation and shared by every worker as a service's
// goroutines share one, asked Enforce on requests decoded before timing. The measured path is
// that Enforce and a look at its answer.
type casbinInproc struct {
	kinds.NoWatch
	common kinds.Common
	loaded *Loaded
	// own says loaded holds an enforcer of the target's own, which takes the run's writes.
	own bool
	// writes applies the run's writes to the own enforcer, one at a time.
	writes *enforcerWrites
}

func init() {
	kinds.Register(kinds.Kind{Name: "casbin/inproc", Engine: Name, Placement: kinds.InProcess, LoadsPolicy: true, Order: 59,
		NewConfig: func() kinds.Config { return &kinds.NoConfig{} },
		New:       func(common kinds.Common, _ kinds.Config) kinds.Target { return &casbinInproc{common: common} }})
}

func (t *casbinInproc) Start(ctx context.Context, w *workload.Workload) error {
	l, err := Load(ctx, t.common.Prepared, w)
	if err != nil {
		return err
	}
	t.loaded = l
	return nil
}

func (t *casbinInproc) Worker() kinds.Decider { return casbinWorker{t.loaded} }

type casbinWorker struct{ l *Loaded }

func (w casbinWorker) Decide(_ context.Context, i int) verify.Outcome { return w.l.Decide(i) }

func (t *casbinInproc) Info() kinds.Info {
	return kinds.Info{Engine: Name, Mode: "inproc", Version: "casbin " + Version()}
}

// Stop leaves the enforcer to the run's preparations, which every casbin/inproc target of the
// run shares.
func (t *casbinInproc) Stop(context.Context) error { return nil }
