package openfga

import (
	"context"
	"errors"
	"fmt"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/authzbench/authzbench/internal/datastore"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// openfgaInproc decides with OpenFGA's own server inside the authzbench process: its Check over
// its in-memory datastore, on requests built before timing (the store, model and tuples
// written by the run's preparation), so the measured path is Server.Check alone.
type openfgaInproc struct {
	kinds.NoWatch
	common   kinds.Common
	settings *OpenFGAInprocConfig
	engine   *Engine
	requests []*openfgav1.CheckRequest
	// over is the engine of its own over a datastore the settings chose; nil over the run's
	// shared memory one. record is what the result says of it.
	over   *Over
	record *result.Datastore
	// fixture is the workload as loaded; own the stores of the target's own that a run whose
	// world changes writes into (writes.go), deleted when it stops.
	fixture *Fixture
	own     *Stores
	lists   listing // --operation list-objects, list-users, batch-check (list.go, batch.go)
}

func init() {
	kinds.Register(kinds.Kind{Name: "openfga/inproc", Engine: "openfga", Placement: kinds.InProcess, LoadsPolicy: true, Order: 56,
		NewConfig: func() kinds.Config { return &OpenFGAInprocConfig{} },
		New: func(common kinds.Common, c kinds.Config) kinds.Target {
			return &openfgaInproc{common: common, settings: c.(*OpenFGAInprocConfig)}
		}})
}

// OpenFGAInprocConfig is openfga/inproc's settings: the datastore it decides over, and its
// caches.
type OpenFGAInprocConfig struct {
	datastore.Settings `yaml:",inline"`
	ConsistencySetting `yaml:",inline"`
	CacheSettings      `yaml:",inline"`
}

func (c *OpenFGAInprocConfig) Check() error {
	errs := c.Settings.Check("openfga/inproc", datastore.Memory, datastore.SQLite, datastore.Postgres)
	errs = append(errs, c.CacheSettings.Check()...)
	return errors.Join(append(errs, c.ConsistencySetting.check("openfga/inproc"))...)
}

// Probe refuses, before any load, a database --datastore-uri names that does not answer, holds
// another schema, or holds OpenFGA's stores without --datastore-overwrite.
func (c *OpenFGAInprocConfig) Probe(ctx context.Context) error { return c.Settings.Probe(ctx, Marker) }

func (t *openfgaInproc) Start(ctx context.Context, w *workload.Workload) error {
	if err := t.lists.prepare(ctx, t.common.Prepared, t.common.Operation, w); err != nil {
		return err
	}
	l, err := Load(ctx, t.common.Prepared, w)
	if err != nil {
		return err
	}
	t.fixture = l.Fixture
	if !t.settings.Settings.Chosen() && !t.settings.CacheSettings.Chosen() {
		t.engine, t.requests = l.Engine, l.Requests
		if pref := t.settings.preference(); pref != openfgav1.ConsistencyPreference_UNSPECIFIED {
			// The shared requests carry none: copies that ask the consistency.
			t.requests = make([]*openfgav1.CheckRequest, len(l.Requests))
			for i, r := range l.Requests {
				t.requests[i] = proto.Clone(r).(*openfgav1.CheckRequest)
				t.requests[i].Consistency = pref
			}
		}
		return nil
	}
	// A datastore or caches asked for: an engine of this target's own, with them, loaded now.
	// The run's shared memory engine has already had OpenFGA refuse a bad model or tuple by
	// its line.
	if t.over, err = StartOverSettings(ctx, t.settings.Settings, "openfga_inproc", l.Fixture, t.settings.CacheSettings.ServerOptions()...); err != nil {
		return err
	}
	t.engine = t.over.Engine
	if t.settings.Settings.Chosen() {
		t.record = t.over.Record
	}
	t.requests = make([]*openfgav1.CheckRequest, len(l.Fixture.Assertions))
	for i, a := range l.Fixture.Assertions {
		if t.requests[i], err = t.engine.Prepare(a); err != nil {
			return err
		}
		t.requests[i].Consistency = t.settings.preference()
	}
	return nil
}

func (t *openfgaInproc) Worker() kinds.Decider {
	if t.lists.on() {
		return t.listWorker()
	}
	return openfgaWorker{t}
}

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
	info := kinds.Info{Engine: "openfga", Mode: "inproc", Version: "openfga " + Version()}
	info.Datastore = t.record
	info.Consistency = t.settings.Promise().Record()
	info.Caches = t.settings.CacheSettings.Record()
	return info
}

// CacheCounts reads OpenFGA's cache counters in this process (kinds.CacheCounter).
func (t *openfgaInproc) CacheCounts(ctx context.Context) (map[string]result.CacheCount, error) {
	return inProcessCounts(ctx)
}

// Stop closes an engine of the target's own, over the datastore it chose; the shared memory
// one it leaves to the run's preparations, which every openfga/inproc target of the run shares.
func (t *openfgaInproc) Stop(ctx context.Context) error {
	if t.own != nil && t.engine != nil {
		own := t.own
		t.own = nil
		if err := own.Delete(ctx, t.engine.Server()); err != nil {
			return err
		}
	}
	if t.over == nil {
		return nil
	}
	err := t.over.Close(ctx)
	t.over = nil
	return err
}
