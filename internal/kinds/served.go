package kinds

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/verify"
)

// ServerConfig is the settings every served kind takes: a running server to measure, or how to
// start one.
type ServerConfig struct {
	// URL measures this running server instead of starting one; a path, query included,
	// replaces the engine's decision endpoint.
	URL string `yaml:"url"`
	// Port is the loopback port of the server authzbench starts; 0 for a free one.
	Port int `yaml:"port"`
	// Args are extra arguments for the server authzbench starts.
	Args []string `yaml:"sut_args"`
	// ReadyTimeout is how long the server authzbench starts may take to answer ready ("5m");
	// 60 s when empty. A server loading hundreds of megabytes of data takes longer.
	ReadyTimeout string `yaml:"ready_timeout"`
	// TLSServer says whether a server authzbench starts serves over TLS, and with which
	// certificates; TLSClient what the client trusts and presents, to a url over https above
	// all.
	TLSServer `yaml:",inline"`
	TLSClient `yaml:",inline"`
}

// checkURL wants a scheme and a host: "127.0.0.1:8181" alone would fail only once the load
// starts, with a message about something else. grpc:// and grpcs:// (TLS) are the ext_authz
// kinds' (each kind checks that the scheme is its own).
func checkURL(name string, value any) error {
	raw := value.(string)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "grpc" && u.Scheme != "grpcs") {
		return fmt.Errorf("%s %q: want a scheme and a host, such as http://127.0.0.1:8181 (grpc://127.0.0.1:9191, or grpcs:// over TLS, for the ext_authz targets)", name, raw)
	}
	return nil
}

// checkPortFree wants a port a server can listen on now, so that a port in use is bad input
// rather than a server that fails to start after other targets' load.
func checkPortFree(name string, value any) error {
	if _, err := sut.CheckFree(value.(int)); err != nil {
		return fmt.Errorf("%s %w", name, err)
	}
	return nil
}

// The options of every served kind. --url's help names the kinds that start a server (those
// that take a port); the http target takes a url too, its endpoint.
func init() {
	DeclareOption(Option{Key: "url", Flag: "url", HelpKinds: "port", Check: checkURL,
		Help: "{kinds,}: measure this running server (http://127.0.0.1:8181) instead of starting one; " +
			"a path, query included, replaces the engine's decision endpoint; the ext_authz targets take grpc://host:port (grpcs:// over TLS). http: the endpoint"})
	DeclareOption(Option{Key: "port", Flag: "port", Check: checkPortFree, Help: "{kinds}: loopback port for the server authzbench starts (default: a free one)"})
	DeclareOption(Option{Key: "sut_args", Flag: "sut-arg", Launches: true, Help: "extra argument for the servers authzbench starts, repeatable (--sut-arg=--h2c)"})
	DeclareOption(Option{Key: "ready_timeout", Flag: "ready-timeout", Launches: true, Help: "how long a server authzbench starts may take to answer ready (60s by default; a server loading hundreds of megabytes of data takes longer)"})
}

// DeclareKeepWritten declares keep_written, the option of the kinds that write the workload
// into a running server a URL names (OpenFGA's stores, SpiceDB's schema and relationships): each
// calls it from the file whose settings hold the field, and it is declared once, by whichever
// is linked first.
func DeclareKeepWritten() {
	if declared["keep_written"].Key != "" {
		return
	}
	DeclareOption(Option{Key: "keep_written", Flag: "keep-written", Selective: true,
		Help: "{kinds}: with --url, leave in the running server what the run wrote into it (OpenFGA's stores; SpiceDB's schema and relationships), which is otherwise removed at the end; the result's sut.written says which"})
}

// KeepWrittenWithoutURL refuses keep_written for a server authzbench starts, which it stops
// with all it holds.
func KeepWrittenWithoutURL() error {
	return optionError("keep_written", func(n func(string) string) string {
		return n("keep_written") + " is for a running server, with " + n("url") + ": the server authzbench starts goes with all it holds"
	})
}

// RemoteURL is the running server to measure, if any.
func (c *ServerConfig) RemoteURL() string { return c.URL }

// Server returns the served settings, for what every served kind is asked alike.
func (c *ServerConfig) Server() *ServerConfig { return c }

// Check finds settings that cannot work: a URL without a scheme and host, a port that is no
// port, and settings for a server authzbench starts given with a server it does not.
func (c *ServerConfig) Check() error { return c.check(nil) }

// check is Check for a kind that cannot serve mtls_authz, for the reason mtlsAuthzRefused
// gives (nil: it can).
func (c *ServerConfig) check(mtlsAuthzRefused func(name func(key string) string) string) error {
	var errs []error
	if c.URL != "" {
		if u, err := url.Parse(c.URL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			errs = append(errs, fmt.Errorf("url %q: want a scheme and a host, such as http://127.0.0.1:8181", c.URL))
		}
	}
	errs = append(errs, c.checkLaunch()...)
	errs = append(errs, TLSConfig{Server: &c.TLSServer, Client: &c.TLSClient, URL: c.URL, MTLSAuthzRefused: mtlsAuthzRefused}.Validate())
	return errors.Join(errs...)
}

// checkLaunch finds a port that is no port, and settings for a server authzbench starts given
// with a server it does not, whatever the protocol.
func (c *ServerConfig) checkLaunch() []error {
	var errs []error
	if c.URL != "" {
		if c.Port != 0 {
			errs = append(errs, optionError("port", func(n func(string) string) string {
				return fmt.Sprintf("%s sets the port of a server authzbench starts; with %s it starts none", n("port"), n("url"))
			}))
		}
		if len(c.Args) > 0 {
			errs = append(errs, optionError("sut_args", func(n func(string) string) string {
				return fmt.Sprintf("%s configure a server authzbench starts; with %s it starts none", n("sut_args"), n("url"))
			}))
		}
	}
	if _, err := c.readyWithin(); err != nil {
		errs = append(errs, err)
	}
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, optionError("port", func(n func(string) string) string {
			return fmt.Sprintf("%s %d: not a TCP port; want 1 to 65535, or none for a free one", n("port"), c.Port)
		}))
	}
	return errs
}

// Served is implemented by the settings of every served kind.
type Served interface {
	Config
	Server() *ServerConfig
}

// readyWithin is how long a started server may take to answer ready; 0 for sut's default.
func (c *ServerConfig) readyWithin() (time.Duration, error) {
	if c.ReadyTimeout == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(c.ReadyTimeout)
	if err != nil || d <= 0 {
		return 0, optionError("ready_timeout", func(n func(string) string) string {
			return fmt.Sprintf("%s %q: want a duration such as 5m", n("ready_timeout"), c.ReadyTimeout)
		})
	}
	return d, nil
}

// served is what the targets that decide over HTTP share, whatever the engine behind them: a
// server that authzbench starts (through sut's one lifecycle: pinned, probed until ready and
// watched until it is stopped) or one that the settings' URL names, and every input encoded as
// a complete request before any clock runs. The engine's target says how to launch its server
// and how to read its answers.
type served struct {
	common Common
	// engine is what the server runs: it says the server's readiness path and how its answers
	// read. Nil for authzbench's trivial server.
	engine engine.Engine
	cfg    *ServerConfig
	url    string // scheme://host:port
	path   string // the decision endpoint on it
	// paths, when set, is each input's own decision endpoint (OpenFGA's names the store the
	// input is checked against), in place of path.
	paths []string
	launched
	endpoint httpload.Endpoint
	requests [][]byte // complete HTTP requests, one per input
	timed    [][]byte // the same asking for the server's timers (?metrics=true), if sampled

	// The TLS of a server authzbench starts: its certificate files, and what the client
	// presents (also for a url over https); nil in clear.
	tlsFiles  *serverFiles
	clientTLS *tls.Config

	// http2 is the kind's HTTP/2 setting; with it on, h2 holds the connections the workers
	// share and h2Requests (h2Timed) the requests, instead of the HTTP/1.1 ones above.
	http2      *HTTP2Config
	h2         *h2Pool
	h2Requests []h2Request
	h2Timed    []h2Request

	// replicas is how many servers to start behind the one address (replicas.go); 0 or 1 for
	// one.
	replicas int
	rs       replicaSet

	// versionPath is a JSON pointer to the version each answer names (WithVersionPath).
	versionPath string
}

// speaksHTTP2 says whether the target was asked for HTTP/2.
func (s *served) speaksHTTP2() bool { return s.http2 != nil && s.http2.HTTP2 }

// start points the target at its server, launching one unless --url names one, and encodes one
// request per body. path is the engine's decision endpoint; a --url with a path replaces it.
func (s *served) start(ctx context.Context, path string, bodies [][]byte, launch func(context.Context) error) error {
	return s.startThen(ctx, path, launch, func(context.Context) ([][]byte, error) { return bodies, nil })
}

// startThen is start for an engine whose requests depend on the server reached (OpenFGA's name
// the store written into it): bodies is called once the server is there, before any clock.
func (s *served) startThen(ctx context.Context, path string, launch func(context.Context) error, bodiesOf func(context.Context) ([][]byte, error)) error {
	s.path = path
	if s.speaksHTTP2() && s.common.NoReuse {
		return refuseNoReuse()
	}
	if s.cfg.URL != "" {
		if err := s.useExternal(); err != nil {
			return err
		}
	} else {
		// Once for the target, whatever its replicas: every replica serves the same
		// certificate, signed by the one CA the client trusts.
		if err := s.setUpTLS(); err != nil {
			return err
		}
		if err := s.launchAll(ctx, launch); err != nil {
			s.tlsFiles.remove()
			return err
		}
	}
	bodies, err := bodiesOf(ctx)
	if err != nil {
		return err
	}
	if s.endpoint, _, err = httpload.ParseURL(s.url + s.path); err != nil {
		return err
	}
	if s.endpoint.TLS != nil && s.clientTLS != nil {
		s.endpoint.TLS = withServerName(s.clientTLS, s.endpoint.TLS.ServerName)
	}
	s.endpoint.Timeout = s.common.timeout()
	s.endpoint.KeepAlive = !s.common.NoReuse
	headers := []httpload.Header{{Name: "Content-Type", Value: "application/json"}}
	s.requests = make([][]byte, len(bodies))
	for i, body := range bodies {
		s.requests[i] = httpload.EncodeRequest(s.endpoint, "POST", s.pathOf(i), headers, body)
	}
	if s.common.ServerMetricsEvery > 0 {
		sep := "?"
		if strings.Contains(s.path, "?") {
			sep = "&"
		}
		s.timed = make([][]byte, len(bodies))
		for i, body := range bodies {
			s.timed[i] = httpload.EncodeRequest(s.endpoint, "POST", s.pathOf(i)+sep+"metrics=true", headers, body)
		}
	}
	if s.speaksHTTP2() {
		if err := s.prepareHTTP2(bodies); err != nil {
			return err
		}
		if s.cfg.URL == "" {
			return s.checkHTTP2(ctx, bodies[0])
		}
	}
	if s.cfg.URL != "" {
		// Over HTTP/1.1 even with --http2: the probe asks whether the server is there, and a
		// server that does not speak HTTP/2 is the run's to count, as not_http2.
		return probe(ctx, s.url+s.pathOf(0), bodies[0], s.common.timeout(), s.endpoint.TLS)
	}
	return nil
}

// pathOf is input i's decision endpoint.
func (s *served) pathOf(i int) string {
	if s.paths != nil {
		return s.paths[i]
	}
	return s.path
}

// prepareHTTP2 builds the HTTP/2 requests and the pool of connections the workers share.
func (s *served) prepareHTTP2(bodies [][]byte) error {
	headers := http.Header{"Content-Type": {"application/json"}}
	var err error
	if s.h2Requests, err = newH2Requests(http.MethodPost, s.url+s.path, headers, bodies); err != nil {
		return err
	}
	if s.common.ServerMetricsEvery > 0 {
		sep := "?"
		if strings.Contains(s.path, "?") {
			sep = "&"
		}
		if s.h2Timed, err = newH2Requests(http.MethodPost, s.url+s.path+sep+"metrics=true", headers, bodies); err != nil {
			return err
		}
	}
	s.h2 = newH2Pool(s.http2.connections(), s.endpoint.TLS)
	return nil
}

// checkHTTP2 asks the server authzbench started for one decision over HTTP/2, so that a server
// it could not get to speak HTTP/2 (OPA's REST server over TLS offers no h2 by ALPN) fails the
// start with the reason, instead of measuring HTTP/1.1 under an h2 label. A server someone else
// runs is measured as it is: its HTTP/1.1 answers are counted, as not_http2.
func (s *served) checkHTTP2(ctx context.Context, body []byte) error {
	pool := newH2Pool(1, s.endpoint.TLS)
	defer pool.close()
	reqs, err := newH2Requests(http.MethodPost, s.url+s.path, http.Header{"Content-Type": {"application/json"}}, [][]byte{body})
	if err != nil {
		return err
	}
	client, spoke1 := pool.take()
	w := &h2Worker{client: client, spoke1: spoke1, timeout: max(s.common.timeout(), probeTimeout), requests: reqs,
		judge: func(int, []byte) verify.Outcome { return verify.Outcome{Kind: verify.Decided} }}
	out := w.Decide(ctx, 0)
	switch {
	case out.Kind == verify.NotHTTP2 && s.tlsFiles != nil:
		return optionError("http2", func(n func(string) string) string {
			return fmt.Sprintf("%s with TLS: the server authzbench started does not offer h2 by ALPN (%v); use %s in clear (h2c), or measure a server that offers h2 with url", n("http2"), out.Err, n("http2"))
		})
	case out.Kind == verify.NotHTTP2:
		return optionError("http2", func(n func(string) string) string {
			return fmt.Sprintf("%s: the server authzbench started does not speak h2c (%v)", n("http2"), out.Err)
		})
	case out.Kind != verify.Decided:
		return fmt.Errorf("first request over HTTP/2 to %s: %w", s.url+s.path, out.Err)
	}
	return nil
}

// withServerName is cfg checking the server's certificate against name, the host dialled, as
// an https client does.
func withServerName(cfg *tls.Config, name string) *tls.Config {
	c := cfg.Clone()
	if c.ServerName == "" {
		c.ServerName = name
	}
	return c
}

// probe sends one request to a server authzbench did not start, so an unreachable address fails
// before any load with the network's own words. Its answer is not judged here: a wrong decision
// or a 404 is what the run is for, and it will be counted there. It asks whether the server is
// there, not how fast it is, so it waits at least probeTimeout whatever --timeout says: a
// --timeout too short for anything is the run's to report, as such.
const probeTimeout = 10 * time.Second

func probe(ctx context.Context, uri string, body []byte, timeout time.Duration, tlsConfig *tls.Config) error {
	ctx, cancel := context.WithTimeout(ctx, max(timeout, probeTimeout))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uri, bytes.NewReader(body))
	if err != nil {
		return optionError("url", func(n func(string) string) string { return fmt.Sprintf("%s: %v", n("url"), err) })
	}
	req.Header.Set("Content-Type", "application/json")
	// A transport of its own, with the load's TLS settings (a private CA, a client
	// certificate), and no connection left behind in a pool the load never uses.
	tr := &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return &unreachable{optionError("url", func(n func(string) string) string {
			return fmt.Sprintf("cannot reach %s %s: %v", n("url"), uri, err)
		}), err}
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil
}

// useExternal points the target at a running server. A URL with a path is taken as the full
// decision endpoint, query included and escaped as given; without one, the engine's own endpoint
// is used.
func (s *served) useExternal() error {
	u, err := url.Parse(s.cfg.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return optionError("url", func(n func(string) string) string {
			return fmt.Sprintf("%s %q: want http://host:port[/path]", n("url"), s.cfg.URL)
		})
	}
	if u.Path != "" && u.Path != "/" {
		s.path = u.RequestURI()
	}
	s.url = u.Scheme + "://" + u.Host
	if u.Scheme == "https" {
		if s.clientTLS, err = s.cfg.TLSClient.config(); err != nil {
			return err
		}
	}
	return nil
}

// setUpTLS readies the TLS of the servers about to be started, if they are to serve over TLS:
// the certificate files (the user's, or generated for the run) and what the client presents.
// The engine's launch passes the files to each server it starts, every replica the same.
func (s *served) setUpTLS() error {
	s.tlsFiles, s.clientTLS = nil, nil
	mode := s.cfg.Mode()
	if mode == Plain {
		return nil
	}
	files, err := s.cfg.tlsFiles(s.common.TempDir)
	if err != nil {
		return err
	}
	if s.clientTLS, err = files.clientConfig(mode); err != nil {
		files.remove()
		return err
	}
	s.tlsFiles = files
	return nil
}

// scheme is the scheme of the server authzbench starts.
func (s *served) scheme() string {
	if s.tlsFiles != nil {
		return "https"
	}
	return "http"
}

// listenAddr is the loopback address a started server listens on: port if given and free,
// else a free port.
func (c *ServerConfig) listenAddr() (string, error) {
	if c.Port != 0 {
		addr, err := sut.CheckFree(c.Port)
		if err != nil {
			return "", optionError("port", func(n func(string) string) string { return n("port") + " " + err.Error() })
		}
		return addr, nil
	}
	return sut.FreeAddr()
}

// run starts cmd, a server about to listen on addr, through sut's lifecycle: on the CPUs it is
// pinned to, probed on its engine's health path (/health), or on gRPC health for an engine
// that answers there (engine.GRPCHealth), until it answers, and from then on watched, died
// closed if it exits before Stop.
func (s *served) run(ctx context.Context, name, addr string, cmd *exec.Cmd) error {
	healthPath := "/health" // the trivial server's
	if s.engine != nil {
		healthPath = s.engine.HealthPath()
	}
	var tlsConfig *tls.Config
	if s.clientTLS != nil {
		host, _, _ := net.SplitHostPort(addr)
		tlsConfig = withServerName(s.clientTLS, host)
	}
	var health sut.Probe = sut.HTTPProbe{URL: s.scheme() + "://" + addr + healthPath, TLS: tlsConfig}
	if g, ok := s.engine.(engine.GRPCHealth); ok {
		health = sut.GRPCProbe{Addr: addr, Service: g.HealthService(), TLS: tlsConfig}
	}
	l, pin := s.nextLaunch(addr)
	within, err := s.cfg.readyWithin()
	if err != nil {
		return err
	}
	if err := l.launch(ctx, name, cmd, pin, health, within); err != nil {
		return err
	}
	s.url = s.scheme() + "://" + addr
	return nil
}

// worker is one load worker's connection (over HTTP/2, its share of one), reading the engine's
// answers with decisions.
func (s *served) worker(decisions *decisionReader) Decider {
	if s.h2 != nil {
		client, spoke1 := s.h2.take()
		return &h2Worker{client: client, spoke1: spoke1, timeout: s.common.timeout(), requests: s.h2Requests,
			timed: s.h2Timed, timedEvery: s.common.ServerMetricsEvery,
			judge: func(status int, body []byte) verify.Outcome {
				if status < 200 || status > 299 {
					return statusOutcome(status, body)
				}
				return decisions.read(body)
			}}
	}
	endpoint, r := s.endpointFor()
	return s.counted(&httpWorker{conn: httpload.NewConn(endpoint), requests: s.requests, timed: s.timed,
		timedEvery: s.common.ServerMetricsEvery, decisions: decisions}, r)
}

// PlainHTTP is a decider whose every decision is one prepared HTTP/1.1 request on a plain
// (not TLS) keep-alive connection, judged from the answer's status and body alone: what a load
// driver that owns its sockets (load's event loop) needs to send the requests itself and judge
// the answers in the decider's own words. ok is false when the decider cannot be served that
// way (TLS, a connection per request); the driver then calls Decide as usual.
type PlainHTTP interface {
	PlainHTTP() (x HTTPExchange, ok bool)
}

// HTTPExchange is a PlainHTTP decider's requests and its reading of their answers. Like the
// decider, it is one connection's: not safe for concurrent use.
type HTTPExchange struct {
	Endpoint httpload.Endpoint
	// Request is the request for input i (each call is one send: it may ask for the server's
	// timers every so often, as Decide does).
	Request func(i int) []byte
	// Judge reads the decision from an answer's status and body, as Decide does.
	Judge func(status int, body []byte) verify.Outcome
}

// plainExchange is the exchange of a decider on conn, if conn is plain keep-alive HTTP/1.1.
func plainExchange(conn *httpload.Conn, request func(int) []byte, judge func(int, []byte) verify.Outcome) (HTTPExchange, bool) {
	e := conn.Endpoint()
	if e.TLS != nil || !e.KeepAlive {
		return HTTPExchange{}, false
	}
	return HTTPExchange{Endpoint: e, Request: request, Judge: judge}, true
}

func (w *httpWorker) PlainHTTP() (HTTPExchange, bool) {
	return plainExchange(w.conn, w.request, w.judge)
}

// PlainHTTP counts each request against the worker's replica, as Decide does.
func (c *countingWorker) PlainHTTP() (HTTPExchange, bool) {
	x, ok := c.httpWorker.PlainHTTP()
	request := x.Request
	x.Request = func(i int) []byte {
		c.sent++
		return request(i)
	}
	return x, ok
}

func (w *genericWorker) PlainHTTP() (HTTPExchange, bool) {
	return plainExchange(w.conn, func(i int) []byte { return w.requests[i] }, w.judge)
}

var _ = []PlainHTTP{(*httpWorker)(nil), (*countingWorker)(nil), (*genericWorker)(nil)}

// info is the part of Info every served target fills alike.
func (s *served) info(engine, version string) Info {
	info := Info{Engine: engine, Mode: "server", URL: s.url + s.path,
		External: s.cfg.URL != "", Connections: s.common.Workers, TLS: s.tlsInfo()}
	if s.h2 != nil {
		info.HTTP2, info.Connections = true, len(s.h2.clients)
	}
	s.describe(&info, version)
	info.Replicas = s.replicaInfo()
	return info
}

func (s *served) Stop(context.Context) error {
	s.h2.close()
	err := s.stopReplicas()
	// After the server, which reads them until it stops.
	return errors.Join(err, s.tlsFiles.remove())
}

// tlsInfo records the TLS the run measured; nil in clear.
func (s *served) tlsInfo() *result.TLS {
	return tlsInfo(s.cfg, s.tlsFiles, s.clientTLS)
}

// clientTLSInfo records how the client met a server someone else runs over https.
func clientTLSInfo(c *TLSClient) *result.TLS {
	mode := ServerTLS
	if c.Cert != "" {
		mode = MutualTLS
	}
	return &result.TLS{Mode: mode.String(), CACert: c.CACert, ClientCert: c.Cert, Insecure: c.Insecure}
}

// unreachable is a running server that did not answer the probe: the option's words, and the
// network's error beneath them for whoever asks.
type unreachable struct {
	option error
	net    error
}

func (e *unreachable) Error() string   { return e.option.Error() }
func (e *unreachable) Unwrap() []error { return []error{e.option, e.net} }
