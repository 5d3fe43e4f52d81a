package kinds

import (
	"context"
	"errors"
	"os/exec"

	"github.com/authzbench/authzbench/internal/engine"
)

// Server is what a served kind that lives in its engine's own package builds its target on,
// embedded as this package's served kinds embed served: one server authzbench starts through
// sut's lifecycle, or one the settings' URL names; Died, Err and Stop for the target; and, for
// an engine served over HTTP, every input encoded as a complete request before any clock runs. It knows no engine: the engine's kind says how to launch its
// server, and its registered engine how the server's health and answers read.
type Server struct{ served }

// NewServer is the served part of a target of engine e with settings cfg, and what else the
// kind's settings ask of it (WithHTTP2, WithReplicas).
func NewServer(common Common, e engine.Engine, cfg *ServerConfig, opts ...ServerOption) *Server {
	s := &Server{served{common: common, engine: e, cfg: cfg}}
	for _, o := range opts {
		o(&s.served)
	}
	return s
}

// ServerOption is a setting of a kind's that its Server carries out.
type ServerOption func(*served)

// WithHTTP2 has the target speak HTTP/2 as h says (HTTP2Config); a server the kind launches is
// to be told to serve h2c in clear where SpeaksHTTP2.
func WithHTTP2(h *HTTP2Config) ServerOption { return func(s *served) { s.http2 = h } }

// WithReplicas has the target start n servers behind one address (Replication), the launch
// function called once for each.
func WithReplicas(n int) ServerOption { return func(s *served) { s.replicas = n } }

// WithVersionPath has the target read, from every answer, the version of the world it names
// at the JSON pointer path (OPA's bundle revision in its provenance), judged by it exactly in a
// run whose world changes; an answer without a whole number there is malformed.
func WithVersionPath(path string) ServerOption { return func(s *served) { s.versionPath = path } }

// StartAt points the target at its server over HTTP, launching it with launch unless the
// settings' URL names a running one, and encodes one request per body for the decision endpoint
// path, which a URL with a path replaces.
func (s *Server) StartAt(ctx context.Context, path string, bodies [][]byte, launch func(context.Context) error) error {
	return s.start(ctx, path, bodies, launch)
}

// SpeaksHTTP2 says whether the target was asked for HTTP/2 (WithHTTP2).
func (s *Server) SpeaksHTTP2() bool { return s.speaksHTTP2() }

// LaunchTLS is what the server being launched serves TLS with; nil in clear.
func (s *Server) LaunchTLS() *LaunchTLS { return s.tlsFiles.forServer(s.cfg.Mode()) }

// LaunchTLS is what a server authzbench starts over TLS is given: its certificate and key, and
// in the mutual modes the CA its clients' certificates must be signed by (empty otherwise).
type LaunchTLS struct{ Cert, Key, ClientCA string }

func (f *serverFiles) forServer(mode TLSMode) *LaunchTLS {
	if f == nil {
		return nil
	}
	t := &LaunchTLS{Cert: f.ServerCert, Key: f.ServerKey}
	if mode >= MutualTLS {
		t.ClientCA = f.CACert
	}
	return t
}

// CheckServed is Check for the settings of a kind served over HTTP: the server's (refusing
// mtls_authz for the reason mtlsAuthzRefused gives; nil takes it), its HTTP/2, its replicas,
// and the combinations they cannot go in.
func CheckServed(c *ServerConfig, h *HTTP2Config, r Replication, mtlsAuthzRefused func(name func(key string) string) string) error {
	return errors.Join(append([]error{c.check(mtlsAuthzRefused), r.check(c), replicasOverHTTP2(r.Replicas, *h)}, h.check()...)...)
}

// Common is the run's settings the target was made with.
func (s *Server) Common() Common { return s.common }

// Launch starts cmd, a server about to listen on addr, and returns once it is ready: pinned to
// the run's CPUs, probed on its engine's health path, or on gRPC health for an engine that
// answers there (engine.GRPCHealth), and from then on watched, Died closed if it exits before
// Stop. name is what messages call it ("<engine> server").
func (s *Server) Launch(ctx context.Context, name, addr string, cmd *exec.Cmd) error {
	return s.run(ctx, name, addr, cmd)
}

// URL is the scheme://host:port of the server reached, once Launch or StartHTTP has reached it.
func (s *Server) URL() string { return s.url }

// StartHTTP points the target at its server over HTTP, launching it with launch unless the
// settings' URL names a running one. requests is called once the server is there, before any
// clock: each input's body, and its decision endpoint on the server (the engine's may depend on
// what was written into that server), which are encoded as complete requests.
func (s *Server) StartHTTP(ctx context.Context, launch func(context.Context) error, requests func(context.Context) (bodies [][]byte, paths []string, err error)) error {
	return s.startThen(ctx, "", launch, func(ctx context.Context) ([][]byte, error) {
		bodies, paths, err := requests(ctx)
		s.paths = paths
		return bodies, err
	})
}

// HTTPWorker is one load worker's connection to the server StartHTTP readied, reading its
// answers as the engine's Answer says.
func (s *Server) HTTPWorker() Decider {
	r := newAnswerReader(s.engine.Answer())
	if s.versionPath != "" {
		r.version, r.versionPath = jsonPointer(s.versionPath), s.versionPath
	}
	return s.worker(r)
}

// BaseInfo is the part of Info every served target fills alike: the engine, the address and
// connections measured, the TLS, and for a server authzbench started its version (as given),
// process and command line.
func (s *Server) BaseInfo(engine, version string) Info { return s.info(engine, version) }

// ListenAddr is the loopback address a started server listens on: the port setting if given
// and free, else a free port; an error names the port option.
func (c *ServerConfig) ListenAddr() (string, error) { return c.listenAddr() }

// CheckLaunch finds a port that is no port, and settings for a server authzbench starts given
// with a server it does not: Check's part that holds whatever protocol the kind speaks.
func (c *ServerConfig) CheckLaunch() []error { return c.checkLaunch() }

// CheckRefusing is Check for a kind that cannot serve mtls_authz, for the reason
// mtlsAuthzRefused gives, naming each option as its argument does.
func (c *ServerConfig) CheckRefusing(mtlsAuthzRefused func(name func(key string) string) string) error {
	return c.check(mtlsAuthzRefused)
}

// Unreachable is the error of a running server that did not answer: option's words (an
// OptionError naming the url), and the network's error beneath them for whoever asks.
func Unreachable(option, network error) error { return &unreachable{option, network} }

// ClientSubject is the subject of the certificate the load's client presents to the server
// authzbench started over mutual TLS, as an RDN sequence ("CN=authzbench-client"): the identity
// a server's own authorization of its clients names it by.
func (s *Server) ClientSubject() (string, error) { return s.tlsFiles.identity() }

// IsUnreachable says whether err is a running server's that did not answer (Unreachable).
func IsUnreachable(err error) bool {
	var u *unreachable
	return errors.As(err, &u)
}
