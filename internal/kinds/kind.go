package kinds

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/workload"
)

// Placement says where a target's system under test runs, which decides how it is pinned, how
// many processors the generator's scheduler gets, and what a result's CPU figures mean. It is
// the result document's own word for it, so what a kind says is what a run records.
type Placement = result.Placement

// The placements, as result defines them.
const (
	InProcess          = result.InProcess          // inside authzbench, sharing the generator's Go scheduler
	ProcessPerDecision = result.ProcessPerDecision // one process per decision, a child of the generator
	LaunchedServer     = result.LaunchedServer     // a server authzbench starts, pins apart and stops
	External           = result.External           // a server someone else runs: not started, not pinned
)

// Common are the settings every target reads, whatever its kind; the run sets them.
type Common struct {
	Timeout time.Duration // per-request timeout; 5 s by default
	Workers int           // concurrent workers, to size connection pools
	TempDir string        // where a workload's files are written for the processes that read them
	// PinCPUs pins the server a target launches to these CPUs; empty leaves it free.
	PinCPUs []int
	// LogLevel is the log level of servers authzbench starts that take one; "error" by default.
	LogLevel string
	// ServerMetricsEvery asks a server for its own timers (?metrics=true) on every Nth request
	// of each connection; 0 never. Those requests cost the server a little more.
	ServerMetricsEvery int
	// NoReuse opens a new connection for every request (and asks the server to close it), as
	// load tools' no-connection-reuse options do.
	NoReuse bool
	// Prepared is what the run prepared from its workloads before any load (each engine's
	// compiled policy), shared by every target of the run; nil builds it at Start, unshared.
	Prepared *engine.Prepared
	// Operation is what each request asks (operation.go): a check unless a Lister is asked
	// for a list or a batch.
	Operation Operation
}

// RequestTimeout is the per-request timeout: Timeout, 5 s when none is set.
func (c Common) RequestTimeout() time.Duration {
	if c.Timeout <= 0 {
		return 5 * time.Second
	}
	return c.Timeout
}

// ServerLogLevel is the log level of a server authzbench starts: LogLevel, "error" when none
// is set.
func (c Common) ServerLogLevel() string {
	if c.LogLevel == "" {
		return "error"
	}
	return c.LogLevel
}

func (c Common) timeout() time.Duration { return c.RequestTimeout() }
func (c Common) logLevel() string       { return c.ServerLogLevel() }

// Config is one kind's own settings: a pointer to a struct whose fields carry `yaml` tags, the
// keys a scenario's per-target `options:` and the command line's flags set them by (SetOptions).
type Config interface {
	// Check finds what is wrong with the settings on their face, before anything starts. What
	// only a workload can tell (a body template against its inputs) is the target's Start's.
	Check() error
}

// Prober is implemented by settings that name a running server which may refuse the run
// outright (a key it does not take, data it holds already, which the run would write over):
// Probe asks it before any load, so that such a refusal is bad input, said before anything is
// measured or written, not a run that fails at its target's start with an empty row. What else
// it meets (a server that does not answer) it leaves to the run, returning nil.
type Prober interface {
	Probe(ctx context.Context) error
}

// WorkloadChecker is implemented by settings that only a workload can fully check (a body
// template against every input), so that a mistake is found before any load starts.
type WorkloadChecker interface {
	CheckWorkload(w *workload.Workload) error
}

// Kind is a kind of target: everything the rest of authzbench needs to know about it, so that
// nothing else asks for it by name. Each kind registers itself from its own file.
type Kind struct {
	Name string // "opa/server"
	// Engine is what decides: "opa", "cedar", or, for kinds that are no policy engine, what
	// answers instead ("http", "trivial").
	Engine string
	// Placement is where the system under test runs with the kind's default settings; a
	// served kind given a URL measures an External one instead (PlacementFor).
	Placement Placement
	// LoadsPolicy says the kind loads the workload's policy into its engine, so that it
	// needs the workload in its engine's language and is one of the engine modes
	// `workloads verify` checks.
	LoadsPolicy bool
	// Takes says why the kind cannot run a workload whose policy it could load ("" when it
	// can): the ext_authz kinds send Envoy CheckRequests, which only some workloads' inputs
	// are. Nil takes every workload.
	Takes func(w *workload.Workload) string
	// ChecksPrepared says the kind reads what its engine prepares from a workload (OPA's
	// compiled query and data) only to check the workload before it starts, and decides with
	// its own copy (a server reading the workload's files): a run whose targets of an engine are
	// all such lets the engine's artefact go before the load (bench.Plan.DropChecked).
	ChecksPrepared bool
	// Internal kinds are not offered to users (calibrate's trivial server).
	Internal bool
	// Order places the kind in lists (help, verify): lower first, then by name. The in-process
	// OPA is first, the reference the others are checked against.
	Order int
	// Variants are settings that make a deployment mode of their own, decided by other code
	// than the default's (openfga/server's gRPC API beside its HTTP one): `workloads verify`
	// checks each beside the default settings.
	Variants []Variant
	// NewConfig returns the kind's settings with their defaults.
	NewConfig func() Config
	// New returns a target of the kind; c is what NewConfig returned, set from the scenario
	// and the flags.
	New func(common Common, c Config) Target
}

// Variant is a kind's settings that make a mode of their own (see Kind.Variants).
type Variant struct {
	Label string       // how the mode is named after the kind's name, one word: "grpc"
	Set   func(Config) // changes the kind's default settings into the variant's
}

// Mode is a kind with settings: its default ones, or a variant's.
type Mode struct {
	Label string // "openfga/server", "openfga/server(grpc)": one word, as tables and tests split on spaces
	Kind  *Kind
	// Config is the mode's settings; nil for the kind's defaults.
	Config Config
}

// ModesOf is the kind's default mode followed by each of its variants.
func (k *Kind) ModesOf() []Mode {
	modes := []Mode{{Label: k.Name, Kind: k}}
	for _, v := range k.Variants {
		c := k.NewConfig()
		v.Set(c)
		modes = append(modes, Mode{Label: k.Name + "(" + v.Label + ")", Kind: k, Config: c})
	}
	return modes
}

// Refuses says why the kind cannot run w, "" when it can (see Takes).
func (k *Kind) Refuses(w *workload.Workload) string {
	if k.Takes == nil {
		return ""
	}
	return k.Takes(w)
}

// Remote is implemented by settings that may point at a server someone else runs.
type Remote interface {
	// RemoteURL is that server's address; empty when authzbench runs the system itself.
	RemoteURL() string
}

// PlacementFor is where the system under test runs with settings c: External when c points at
// a running server, the kind's own placement otherwise.
func (k *Kind) PlacementFor(c Config) Placement {
	if r, ok := c.(Remote); ok && r.RemoteURL() != "" {
		return External
	}
	return k.Placement
}

// Configure returns the kind's default settings with values set on them, as SetOptions sets
// them (keys the kind does not have are ignored).
func (k *Kind) Configure(values map[string]any) (Config, error) {
	c := k.NewConfig()
	if _, err := SetOptions(c, values); err != nil {
		return nil, fmt.Errorf("target %s: %w", k.Name, err)
	}
	return c, nil
}

var kinds = map[string]*Kind{}

// Register adds a kind; called from the init function of the kind's file.
func Register(k Kind) {
	switch {
	case k.Name == "" || k.Engine == "" || k.Placement == "" || k.NewConfig == nil || k.New == nil:
		panic(fmt.Sprintf("target: kind %q registered without its name, engine, placement, config or constructor", k.Name))
	case kinds[k.Name] != nil:
		panic("target: kind " + k.Name + " registered twice")
	}
	kinds[k.Name] = &k
}

// Kinds lists the kinds offered to users, in their Order.
func Kinds() []*Kind {
	var out []*Kind
	for _, k := range kinds {
		if !k.Internal {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Order != out[j].Order {
			return out[i].Order < out[j].Order
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Names lists the kinds offered to users, sorted by name.
func Names() []string {
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.Name)
	}
	sort.Strings(names)
	return names
}

// EngineModes lists the kinds that load the workload's policy into an engine authzbench runs
// itself (in-process, per decision, or as a server it starts), in their Order: what equivalence
// checking runs by default.
func EngineModes() []string {
	var names []string
	for _, k := range Kinds() {
		if k.LoadsPolicy && k.Placement != External {
			names = append(names, k.Name)
		}
	}
	return names
}

// Lookup returns the kind a user names; the error lists the known ones.
func Lookup(name string) (*Kind, error) {
	if k, ok := kinds[name]; ok && !k.Internal {
		return k, nil
	}
	return nil, fmt.Errorf("unknown target %q; known: %s", name, strings.Join(Names(), ", "))
}

// LookupAny returns any registered kind, internal ones included (calibrate's trivial server).
func LookupAny(name string) (*Kind, error) {
	if k, ok := kinds[name]; ok {
		return k, nil
	}
	return Lookup(name)
}

// New returns a target of the kind called name with settings c; nil c takes the kind's
// defaults.
func New(name string, common Common, c Config) (Target, error) {
	k, err := LookupAny(name)
	if err != nil {
		return nil, err
	}
	if c == nil {
		c = k.NewConfig()
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	return k.New(common, c), nil
}

// NotInstalledError is what a kind's settings check returns when a program the kind starts is
// not installed here (a server shipped as a program of its own): a run that names the kind is refused with Err, which
// says how to get it; `workloads verify` over every mode by default shows the kind's row as
// skipped for want of it instead of failing every other mode.
type NotInstalledError struct {
	// Missing says what is missing, in a line: "no PROGRAM beside authzbench (in
	// /usr/local/bin) or on PATH".
	Missing string
	Err     error
}

func (e *NotInstalledError) Error() string { return e.Err.Error() }
func (e *NotInstalledError) Unwrap() error { return e.Err }

// NoConfig is the settings of a kind that has none of its own.
type NoConfig struct{}

func (*NoConfig) Check() error { return nil }
