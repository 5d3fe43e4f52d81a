package kinds

import (
	"context"
	"errors"
	"strings"

	engineopa "github.com/authzbench/authzbench/internal/engine/opa"
	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	Register(Kind{Name: "opa/server", Engine: "opa", Placement: LaunchedServer, LoadsPolicy: true, Order: 30,
		NewConfig: func() Config { return &OPAServerConfig{} },
		New: func(common Common, c Config) Target {
			cfg := c.(*OPAServerConfig)
			return &opaServer{served: served{common: common, engine: engineopa.Engine, cfg: &cfg.ServerConfig, http2: &cfg.HTTP2Config, replicas: cfg.Replicas}, opaBin: cfg.OPABin}
		}})
}

// OPAServerConfig is opa/server's settings: a running server to measure, or how to start one.
type OPAServerConfig struct {
	ServerConfig `yaml:",inline"`
	HTTP2Config  `yaml:",inline"`
	Replication  `yaml:",inline"`
	// OPABin runs this opa binary instead of the OPA linked into authzbench.
	OPABin string `yaml:"opa_bin"`
}

func (c *OPAServerConfig) Check() error {
	errs := append([]error{c.ServerConfig.Check(), c.Replication.check(&c.ServerConfig), replicasOverHTTP2(c.Replicas, c.HTTP2Config)}, c.HTTP2Config.check()...)
	if c.URL != "" && c.OPABin != "" {
		errs = append(errs, errors.New("opa_bin configures a server authzbench starts; with url it starts none"))
	}
	return errors.Join(errs...)
}

// opaServer drives OPA's REST API: POST /v1/data/<path> with {"input": ...}. By default it starts
// `opa run --server` on a loopback port with the workload's policy and data and stops it at the
// end; with a URL it measures a server that is already running and loads nothing into it.
type opaServer struct {
	served
	opaBin  string
	version string
}

func (t *opaServer) Start(ctx context.Context, w *workload.Workload) error {
	path := "/v1/data/" + strings.ReplaceAll(strings.TrimPrefix(w.Query, "data."), ".", "/")
	bodies := make([][]byte, len(w.Inputs))
	for i, in := range w.Inputs {
		bodies[i] = append(append([]byte(`{"input":`), in.JSON...), '}')
	}
	return t.start(ctx, path, bodies, func(ctx context.Context) error { return t.launch(ctx, w) })
}

func (t *opaServer) launch(ctx context.Context, w *workload.Workload) error {
	dir, policies, data, err := opaFiles(ctx, t.common, w)
	if err != nil {
		return err
	}
	addr, err := t.cfg.listenAddr()
	if err != nil {
		return err
	}
	args := []string{"run", "--server", "--addr", addr, "--log-level", t.common.logLevel()}
	if w.RegoV0 {
		args = append(args, "--v0-compatible")
	}
	bundles, _ := workload.SplitBundles(policies)
	tlsArgs, err := t.tlsArgs(dir, len(bundles) > 0)
	if err != nil {
		return err
	}
	args = append(args, tlsArgs...)
	if t.speaksHTTP2() && t.tlsFiles == nil {
		// OPA serves h2c only when asked; over TLS, Go's server offers h2 by ALPN itself.
		args = append(args, "--h2c")
	}
	args = append(args, t.cfg.Args...)
	args = append(args, opaRunPaths(policies, data)...)
	opa, err := opaCommand(t.opaBin)
	if err != nil {
		return err
	}
	if t.version, err = opaVersion(ctx, opa); err != nil {
		return err
	}
	return t.run(ctx, "opa server", addr, opa.Command(context.Background(), args...))
}

// tlsArgs are OPA's flags for the TLS mode asked for, with the authorization policy of
// mtls_authz written into dir: OPA's tls authentication names the client by its certificate's
// subject (input.identity), which --authorization=basic's system policy then admits or not.
func (t *opaServer) tlsArgs(dir string, bundles bool) ([]string, error) {
	mode := t.cfg.Mode()
	if mode == Plain {
		return nil, nil
	}
	f := t.tlsFiles
	args := []string{"--tls-cert-file", f.ServerCert, "--tls-private-key-file", f.ServerKey}
	if mode >= MutualTLS {
		args = append(args, "--tls-ca-cert-file", f.CACert, "--authentication=tls")
	}
	if mode == MutualTLSAuthz {
		t.admitted = t.cfg.MTLSAdmit
		if len(t.admitted) == 0 {
			id, err := f.identity()
			if err != nil {
				return nil, err
			}
			t.admitted = []string{id}
		}
		policy, err := writeAuthzPolicy(dir, t.admitted, bundles)
		if err != nil {
			return nil, err
		}
		args = append(args, "--authorization=basic", policy)
	}
	return args, nil
}

func (t *opaServer) Worker() Decider { return t.worker(newAnswerReader(t.engine.Answer())) }

func (t *opaServer) Info() Info {
	info := t.info("opa", t.version)
	if t.server != nil {
		info.LogLevel = t.common.logLevel()
	}
	return info
}

// httpWorker sends prepared requests on its own keep-alive connection, so the measured path
// is one write, one read and the decision parse, allocating nothing once warm.
type httpWorker struct {
	conn       *httpload.Conn
	requests   [][]byte
	timed      [][]byte // requests asking for the server's timers, every timedEvery-th send
	timedEvery int
	sends      int
	decisions  *decisionReader
}

func (w *httpWorker) Decide(ctx context.Context, i int) verify.Outcome {
	status, body, err := w.conn.Do(ctx, w.request(i))
	if err != nil {
		return withConnectTimes(failedOutcome(w.conn, err), w.conn)
	}
	return withConnectTimes(w.judge(status, body), w.conn)
}

// request is the request for input i: every timedEvery-th send asks for the server's timers.
func (w *httpWorker) request(i int) []byte {
	req := w.requests[i]
	if w.timedEvery > 0 {
		if w.sends%w.timedEvery == 0 {
			req = w.timed[i]
		}
		w.sends++
	}
	return req
}

// judge reads the decision from an answer's status and body.
func (w *httpWorker) judge(status int, body []byte) verify.Outcome {
	if status < 200 || status > 299 {
		return statusOutcome(status, body)
	}
	return w.decisions.read(body)
}

// withConnectTimes adds to out the parts of its time the request spent opening a connection.
func withConnectTimes(out verify.Outcome, conn *httpload.Conn) verify.Outcome {
	out.ConnectNS, out.TLSNS = int64(conn.ConnectTime), int64(conn.TLSTime)
	return out
}

// failedOutcome is a request that got no answer: a timeout, a request that never left (the
// timeout passed before it could be sent), or a transport failure in the system's own words.
func failedOutcome(conn *httpload.Conn, err error) verify.Outcome {
	out := verify.Outcome{Kind: verify.TransportFailure, ConnectNS: int64(conn.ConnectTime), Err: err}
	switch {
	case errors.Is(err, httpload.ErrNotSent):
		out.Kind, out.NotSent = verify.TimedOut, true
	case errors.Is(err, httpload.ErrTimeout):
		out.Kind = verify.TimedOut
	case errors.Is(err, httpload.ErrTLSHandshake):
		out.Kind = verify.TLSRefused
	}
	return out
}

// Close releases the worker's connection.
func (w *httpWorker) Close() { w.conn.Close() }

// Reconnects counts requests that went out again on a new connection because the server had
// closed the kept-alive one.
func (w *httpWorker) Reconnects() int64 { return w.conn.Reconnects }

var _ interface {
	Closer
	Reconnector
} = (*httpWorker)(nil)

// opaCommand is the OPA command line to run: the opa binary at bin, or the OPA linked into
// authzbench when bin is empty.
func opaCommand(bin string) (engineopa.Program, error) {
	if bin == "" {
		return engineopa.Linked()
	}
	o, err := engineopa.External(bin)
	if err != nil {
		return o, optionError("opa_bin", func(n func(string) string) string { return n("opa_bin") + " " + err.Error() })
	}
	return o, nil
}

// opaVersion asks the OPA command for its version; the linked-in OPA answers without a process.
func opaVersion(ctx context.Context, o engineopa.Program) (string, error) {
	if len(o.Prefix) > 0 {
		return linkedOPAVersion(), nil
	}
	v, err := o.Version(ctx)
	if err != nil {
		return "", err
	}
	return v, nil
}
