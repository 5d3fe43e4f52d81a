// Package target drives one engine in one deployment mode: it starts (or connects to) the
// system under test, prepares every input before any clock runs, answers one decision at a time
// for a load worker, and stops what it started.
//
// One file per target. A target reports what it observed (verify.Outcome); it never decides
// whether that was right: the verify package does.
package target

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/sut"
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

// Decider answers one decision for input number i of the workload.
type Decider interface {
	Decide(ctx context.Context, i int) verify.Outcome
}

// Info is recorded with each run, so a result says exactly what was measured.
type Info struct {
	Engine      string   `json:"engine"`
	Mode        string   `json:"mode"`
	Version     string   `json:"version,omitempty"`
	Command     []string `json:"command,omitempty"`
	URL         string   `json:"url,omitempty"`
	External    bool     `json:"external,omitempty"` // a server authzbench did not start
	LogLevel    string   `json:"log_level,omitempty"`
	PID         int      `json:"pid,omitempty"`
	Connections int      `json:"connections,omitempty"`
}

// Options configure the targets; the zero value plus an OPA command works.
type Options struct {
	OPA      sut.OPA       // OPA command line for the cli and server modes
	URL      string        // opa/server: measure this running server instead of starting one
	Port     int           // opa/server: listen on this loopback port instead of a free one
	LogLevel string        // log level of servers authzbench starts; "error" by default
	SUTArgs  []string      // extra arguments for servers authzbench starts
	Timeout  time.Duration // per-request timeout; 5 s by default
	Workers  int           // concurrent workers, to size connection pools
	TempDir  string        // where built-in workloads are written for the cli and server modes
	// ServerMetricsEvery asks OPA's REST server for its own timers (?metrics=true) on every Nth
	// request of each connection; 0 never. Those requests cost the server a little more.
	ServerMetricsEvery int
	// NoReuse opens a new connection for every request (and asks the server to close it), as
	// load tools' no-connection-reuse options do.
	NoReuse bool
	// HTTP configures the generic http target.
	HTTP HTTPOptions
	// PinSUT pins the servers authzbench starts to these CPUs; empty leaves them free.
	PinSUT []int
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return 5 * time.Second
	}
	return o.Timeout
}

func (o Options) logLevel() string {
	if o.LogLevel == "" {
		return "error"
	}
	return o.LogLevel
}

type constructor func(Options) Target

var registry = map[string]constructor{
	"opa/inproc":   func(o Options) Target { return &opaInproc{opts: o} },
	"opa/cli":      func(o Options) Target { return &opaCLI{opts: o} },
	"opa/server":   func(o Options) Target { return &opaServer{served: served{opts: o}} },
	"cedar/inproc": func(o Options) Target { return &cedarInproc{opts: o} },
	"cedar/server": func(o Options) Target { return &cedarServer{served{opts: o}} },
	"http":         func(o Options) Target { return &httpTarget{opts: o} },
}

// Names lists the known targets.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New returns the target called name.
func New(name string, o Options) (Target, error) {
	c, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown target %q; known: %s", name, strings.Join(Names(), ", "))
	}
	return c(o), nil
}

// Known reports whether name is a target.
func Known(name string) bool { _, ok := registry[name]; return ok }

// StartsServer reports whether the target runs a server process of its own that authzbench
// starts (and can pin): not the in-process engine, not one `opa eval` per decision (children of
// the generator), not a server someone else runs.
func StartsServer(name string, o Options) bool {
	return (name == "opa/server" || name == "cedar/server") && o.URL == ""
}

// InProcess reports whether the target's engine runs inside the authzbench process, so that
// the generator and the engine share its Go scheduler.
func InProcess(name string) bool { return name == "opa/inproc" || name == "cedar/inproc" }

// Engine returns the engine part of a target name ("opa" of "opa/server"), or the whole name
// for targets that are not an engine (http).
func Engine(name string) string {
	if e, _, ok := strings.Cut(name, "/"); ok {
		return e
	}
	return name
}

// noWatch is embedded by targets that have no process to watch.
type noWatch struct{}

func (noWatch) Died() <-chan struct{} { return nil }
func (noWatch) Err() error            { return nil }
