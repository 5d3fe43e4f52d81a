package kinds

import (
	"context"
	"os/exec"

	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

// ExtAuthzServer is what an ext_authz kind that lives in its engine's own package builds its
// target on, embedded as this package's ext_authz kinds embed extAuthzServed: the server
// authzbench starts (probed on its gRPC health service) or the one the settings' url names,
// the connections, and every input as a CheckRequest in wire form, built before any clock; Worker,
// Died, Err and Stop for the target. The engine's kind says how to launch its server.
type ExtAuthzServer struct{ extAuthzServed }

// NewExtAuthzServer is the served part of an ext_authz target with settings cfg.
func NewExtAuthzServer(common Common, cfg *ExtAuthzConfig) *ExtAuthzServer {
	return &ExtAuthzServer{extAuthzServed{common: common, cfg: cfg}}
}

// Common is the run's settings the target was made with.
func (s *ExtAuthzServer) Common() Common { return s.common }

// StartGRPC builds w's checks, launches the server with launch on the address it is to serve
// ext_authz on (unless the url names a running one) and connects, before any clock.
func (s *ExtAuthzServer) StartGRPC(ctx context.Context, w *workload.Workload, launch func(ctx context.Context, addr string) error) error {
	return s.start(ctx, w, launch)
}

// Launch starts cmd, a server about to serve ext_authz on addr, pinned, probed on its gRPC
// health service until SERVING, then watched. name is what messages call it.
func (s *ExtAuthzServer) Launch(ctx context.Context, name, addr string, cmd *exec.Cmd) error {
	return s.run(ctx, name, addr, cmd)
}

// LaunchTLS is what the server being launched serves TLS with; nil in clear.
func (s *ExtAuthzServer) LaunchTLS() *LaunchTLS { return s.tlsFiles.forServer(s.cfg.Mode()) }

// BaseInfo is the part of Info every ext_authz target fills alike, version the started
// server's.
func (s *ExtAuthzServer) BaseInfo(engine, version string) Info { return s.info(engine, version) }

// TakesCheckRequests is the ext_authz kinds' Kind.Takes: a workload whose inputs are Envoy
// CheckRequests, or whose policy reads no input.
func TakesCheckRequests(w *workload.Workload) string { return takesCheckRequests(w) }

// ExtAuthzKind is an engine's ext_authz mode as its package registers it (RegisterExtAuthz):
// everything such a kind has in common (its placement, its settings, the workloads it takes,
// starting and connecting, the second address its server listens on) is here; the engine says
// how its server is launched and what version it is.
type ExtAuthzKind struct {
	// Name is the kind's name, "<engine>/extauthz"; Engine the engine's; Order its place in
	// lists, as Kind.Order.
	Name, Engine string
	Order        int
	// Launch starts the engine's server for w with s.Launch, serving ext_authz on addr and its
	// own API on apiAddr, a second free loopback address: each engine's server opens its API
	// beside ext_authz, as OPA does beside OPA-Envoy; nothing is sent to it. The launched
	// server takes s.Args() too, the settings' extra arguments.
	Launch func(ctx context.Context, s *ExtAuthzServer, w *workload.Workload, addr, apiAddr string) error
	// Version is the version of the server it starts, for the result.
	Version func() string
	// LogLevel says the launched server logs at the run's server log level
	// (Common.ServerLogLevel), which the result then records with it.
	LogLevel bool
}

// RegisterExtAuthz registers k's kind.
func RegisterExtAuthz(k ExtAuthzKind) {
	Register(Kind{Name: k.Name, Engine: k.Engine, Placement: LaunchedServer, LoadsPolicy: true, Order: k.Order,
		Takes:     TakesCheckRequests,
		NewConfig: func() Config { return &ExtAuthzConfig{} },
		New: func(common Common, c Config) Target {
			return &engineExtAuthz{ExtAuthzServer: NewExtAuthzServer(common, c.(*ExtAuthzConfig)), kind: k}
		}})
}

// engineExtAuthz is the target of an ExtAuthzKind: by default the engine's server, launched on
// a loopback port; with a url, a running ext_authz server.
type engineExtAuthz struct {
	*ExtAuthzServer
	kind ExtAuthzKind
}

func (t *engineExtAuthz) Start(ctx context.Context, w *workload.Workload) error {
	return t.StartGRPC(ctx, w, func(ctx context.Context, addr string) error {
		apiAddr, err := sut.FreeAddr()
		for err == nil && apiAddr == addr {
			apiAddr, err = sut.FreeAddr()
		}
		if err != nil {
			return err
		}
		return t.kind.Launch(ctx, t.ExtAuthzServer, w, addr, apiAddr)
	})
}

func (t *engineExtAuthz) Info() Info {
	info := t.BaseInfo(t.kind.Engine, t.kind.Version())
	if t.kind.LogLevel && info.PID != 0 { // a server authzbench started
		info.LogLevel = t.Common().ServerLogLevel()
	}
	return info
}

// Args are the settings' extra arguments for the server launched.
func (s *ExtAuthzServer) Args() []string { return s.cfg.Args }
