package kinds

import (
	"context"
	"os/exec"

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
