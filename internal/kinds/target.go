// Package kinds drives one engine in one deployment mode: it starts (or connects to) the
// system under test, prepares every input before any clock runs, answers one decision at a time
// for a load worker, and stops what it started.
//
// One file per kind of target: each registers its Kind (name, engine, placement, its own
// settings) from its init, so that a new kind is one file and nothing else asks for a target by
// name. A target reports what it observed (verify.Outcome); it never decides whether that was
// right: the verify package does.
//
// An engine whose package holds its own kinds registers them from there, built on what this
// package exports for a kind elsewhere (Server, ExtAuthzServer, GRPCConns, OverGRPC,
// GRPCCheckFailed, FailedDecider, NoWatch): adding such an engine touches nothing here.
package kinds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Target is one engine in one deployment mode.
type Target interface {
	// Start launches or connects to the system under test with the workload's policy and data,
	// and prepares every input. It fails fast with an error a user can act on.
	Start(ctx context.Context, w *workload.Workload) error
	// Worker returns a decider for one load worker. Deciders are not shared between workers.
	Worker() Decider
	// Died is closed if the system under test goes away during the run (a server that exits);
	// Err then says why. Targets with nothing to watch return nil.
	Died() <-chan struct{}
	Err() error
	// Info describes how the system under test was run, for the result document.
	Info() Info
	// Stop releases everything Start acquired; safe to call more than once.
	Stop(ctx context.Context) error
}

// Warned is a started target that has something to tell the user about what its figures hold
// (opa/cli running authzbench itself as OPA); the run says each warning once.
type Warned interface {
	Warnings() []string
}

// Decider answers one decision for input number i of the workload.
type Decider interface {
	Decide(ctx context.Context, i int) verify.Outcome
}

// What only some deciders can do is a named optional interface, as database/sql's
// driver.Pinger is: the load drivers look for it on the decider a worker was given, so a
// wrapper around a decider (undefined-as, a replica's request count) must forward each of them,
// or what it wraps stops being released or counted. CloseDecider and ReconnectsOf are the one
// place they are looked for.

// Closer is a decider that holds something to release when its worker is done: a connection.
type Closer interface {
	Close()
}

// Reconnector is a decider that keeps a connection open between decisions and counts the
// requests it sent again on a new connection because the server had closed the kept-alive one.
// The count only grows; a run records its growth over the measured phase.
type Reconnector interface {
	Reconnects() int64
}

// Writable is a started target that takes the writes of a run whose world changes (--changes):
// the writer applies each change through the Applier it returns, one at a time, in order. A
// wrapper around a target forwards it (WriterOf).
type Writable interface {
	Writer() (change.Applier, error)
}

// ErrNoWrites is WriterOf's error for a target that takes no writes.
var ErrNoWrites = errors.New("takes no writes")

// WriterOf is the applier of t's writes; ErrNoWrites when t takes none.
func WriterOf(t Target) (change.Applier, error) {
	if w, ok := t.(Writable); ok {
		return w.Writer()
	}
	return nil, ErrNoWrites
}

// RequestWriter is a target whose writes are the changes' own requests (the http target's): a
// changes file's "request" lines are its form, where other targets take their engine's.
type RequestWriter interface {
	WritesRequests()
}

// TakesWrites reports whether targets of the kind called name, with settings c, take writes,
// and whether they send the changes' own requests (RequestWriter): asked before anything
// starts, so that a run with changes is refused at once where they cannot be applied.
func TakesWrites(name string, c Config) (writes, requests bool) {
	k, err := LookupAny(name)
	if err != nil {
		return false, false
	}
	if c == nil {
		c = k.NewConfig()
	}
	t := k.New(Common{}, c)
	_, writes = t.(Writable)
	_, requests = t.(RequestWriter)
	return writes, requests
}

// WriteFormChecker is implemented by settings whose targets take only some of their engine's
// writes (OPA's server given delta bundles takes no policy replacement): a changes file's every
// write is checked against them before any load.
type WriteFormChecker interface {
	CheckWriteForm(form json.RawMessage) error
}

// ChangesOnly is implemented by settings some of whose options say how a run's changes are
// applied (OPA's server: --bundle-changes): given in a run without changes, they would do
// nothing, and the run is refused before any load rather than measured as if they had.
type ChangesOnly interface {
	// WithoutChanges is the error naming those options when any is set; nil when none is.
	WithoutChanges() error
}

// WritesRefuser is a Writable target whose settings refuse writes before it starts (a server
// of several replicas, each holding its own store, where a write would reach one).
type WritesRefuser interface {
	RefusesWrites() error
}

// WritesRefused says why targets of the kind called name, with settings c, refuse writes; nil
// when they take them or take none at all (TakesWrites says which). Asked before anything
// starts, as TakesWrites is.
func WritesRefused(name string, c Config) error {
	k, err := LookupAny(name)
	if err != nil {
		return nil
	}
	if c == nil {
		c = k.NewConfig()
	}
	// Each replica holds its own copy of the world, and a write reaches the one its connection
	// goes to: the others' answers would be judged stale against a write they never saw.
	if r, ok := c.(interface{ replicaCount() int }); ok && r.replicaCount() > 1 {
		return fmt.Errorf("%s with %d replicas: each holds its own copy of the world and a write reaches one; run one", name, r.replicaCount())
	}
	if r, ok := k.New(Common{}, c).(WritesRefuser); ok {
		return r.RefusesWrites()
	}
	return nil
}

// CloseDecider releases what d holds, if it is a Closer.
func CloseDecider(d Decider) {
	if c, ok := d.(Closer); ok {
		c.Close()
	}
}

// ReconnectsOf is how many requests d has sent again on a new connection; 0 for a decider that
// keeps no connection.
func ReconnectsOf(d Decider) int64 {
	if r, ok := d.(Reconnector); ok {
		return r.Reconnects()
	}
	return 0
}

// CacheCounter is a started target whose engine counts its cache lookups and hits in its own
// metrics: read as each repetition's measured phase begins and after it, for the hit ratio the
// run reports beside its latency. By cache name, as Info's caches are named; a cache it cannot count is left out. A
// wrapper around a target forwards it (CacheCountsOf).
type CacheCounter interface {
	CacheCounts(ctx context.Context) (map[string]result.CacheCount, error)
}

// CacheCountsOf reads t's cache counters; nil for a target that has none to read.
func CacheCountsOf(ctx context.Context, t Target) (map[string]result.CacheCount, error) {
	if c, ok := t.(CacheCounter); ok {
		return c.CacheCounts(ctx)
	}
	return nil, nil
}

// Info is recorded with each run, so a result says exactly what was measured: the result
// document's own record of the system under test; the run fills in its placement.
type Info = result.SUT

// NoWatch is embedded by targets that have no process to watch.
type NoWatch struct{}

func (NoWatch) Died() <-chan struct{} { return nil }
func (NoWatch) Err() error            { return nil }

// noWatch is NoWatch, by the name this package's own targets embed it.
type noWatch = NoWatch

// failedDecider answers every decision with the error that kept its worker from starting.
type failedDecider struct{ err error }

func (d failedDecider) Decide(context.Context, int) verify.Outcome {
	return verify.Outcome{Kind: verify.EvalFailed, Err: d.err}
}

// FailedDecider is a worker's decider that answers every decision with err, what kept the
// worker from starting (a connection it could not dial): each decision is counted as failed.
func FailedDecider(err error) Decider { return failedDecider{err} }
