package opa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/open-policy-agent/opa/v1/version"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.Register(kinds.Kind{Name: "opa/server", Engine: "opa", Placement: kinds.LaunchedServer, LoadsPolicy: true, ChecksPrepared: true, Order: 30,
		NewConfig: func() kinds.Config { return &ServerConfig{} },
		New: func(common kinds.Common, c kinds.Config) kinds.Target {
			cfg := c.(*ServerConfig)
			opts := []kinds.ServerOption{kinds.WithHTTP2(&cfg.HTTP2Config), kinds.WithReplicas(cfg.Replicas)}
			if cfg.Provenance {
				opts = append(opts, kinds.WithVersionPath(provenancePath))
			}
			return &server{Server: kinds.NewServer(common, Engine, &cfg.ServerConfig, opts...),
				cfg: &cfg.ServerConfig, opaBin: cfg.OPABin, logs: &cfg.DecisionLogConfig, bundle: &cfg.BundleConfig}
		}})
}

// ServerConfig is opa/server's settings: a running server to measure, or how to start one.
type ServerConfig struct {
	kinds.ServerConfig `yaml:",inline"`
	kinds.HTTP2Config  `yaml:",inline"`
	kinds.Replication  `yaml:",inline"`
	// OPABin runs this opa binary instead of the OPA linked into authzbench.
	OPABin string `yaml:"opa_bin"`
	// DecisionLogConfig is OPA's decision logging, off by default.
	DecisionLogConfig `yaml:",inline"`
	// BundleConfig gives OPA the workload as a bundle from a bundle server, optimized or not.
	BundleConfig `yaml:",inline"`
}

// Check takes every TLS mode, mtls_authz included: OPA's own authorization policy
// (--authorization=basic) is what it measures.
func (c *ServerConfig) Check() error {
	errs := []error{kinds.CheckServed(&c.ServerConfig, &c.HTTP2Config, c.Replication, nil)}
	if c.URL != "" && c.OPABin != "" {
		errs = append(errs, errors.New("opa_bin configures a server authzbench starts; with url it starts none"))
	}
	errs = append(errs, checkLoggedServer(&c.DecisionLogConfig, c.URL, c.OPABin, c.Replicas), c.BundleConfig.check(c.URL, c.Replicas))
	return errors.Join(errs...)
}

// server drives OPA's REST API: POST /v1/data/<path> with {"input": ...}. By default it starts
// `opa run --server` on a loopback port with the workload's policy and data and stops it at the
// end; with a URL it measures a server that is already running and loads nothing into it.
type server struct {
	*kinds.Server
	cfg     *kinds.ServerConfig
	opaBin  string
	version string
	// admitted are the identities mtls_authz's policy admits, recorded with the run.
	admitted []string
	logs     *DecisionLogConfig
	logging  *decisionLogging
	bundle   *BundleConfig
	// bundles serves the workload's bundle to OPA's bundle plugin (bundle_server, optimize).
	bundles *http.Server
	served  *result.Bundle
	// revisions is what bundles serves: the workload's bundle, and a revision per change of a
	// run whose world changes (server_bundle_changes.go).
	revisions *revisionServer
	v0        bool
}

func (t *server) Start(ctx context.Context, w *workload.Workload) error {
	path := "/v1/data/" + strings.ReplaceAll(strings.TrimPrefix(w.Query, "data."), ".", "/")
	if t.bundle.Provenance {
		path += "?provenance=true"
	}
	bodies := make([][]byte, len(w.Inputs))
	for i, in := range w.Inputs {
		bodies[i] = append(append([]byte(`{"input":`), in.JSON...), '}')
	}
	return t.StartAt(ctx, path, bodies, func(ctx context.Context) error { return t.launch(ctx, w) })
}

func (t *server) launch(ctx context.Context, w *workload.Workload) error {
	dir, policies, data, err := workloadFiles(ctx, t.Common(), w)
	if err != nil {
		return err
	}
	addr, err := t.cfg.ListenAddr()
	if err != nil {
		return err
	}
	args := []string{"run", "--server", "--addr", addr, "--log-level", t.Common().ServerLogLevel()}
	if regoV0(w) {
		args = append(args, "--v0-compatible")
	}
	bundles, _ := SplitBundles(policies)
	tlsArgs, err := t.tlsArgs(dir, len(bundles) > 0)
	if err != nil {
		return err
	}
	args = append(args, tlsArgs...)
	if t.SpeaksHTTP2() && t.LaunchTLS() == nil {
		// OPA serves h2c only when asked; over TLS, Go's server offers h2 by ALPN itself.
		args = append(args, "--h2c")
	}
	logArgs, err := t.startLogging(dir)
	if err != nil {
		return err
	}
	args = append(args, logArgs...)
	args = append(args, t.cfg.Args...)
	if t.bundle.served() {
		bundleArgs, srv, revs, rec, err := t.bundle.serverBundle(ctx, w)
		if err != nil {
			return err
		}
		t.bundles, t.revisions, t.served = srv, revs, rec
		t.v0 = regoV0(w)
		args = append(args, bundleArgs...)
	} else {
		args = append(args, runPaths(policies, data)...)
	}
	opa, err := opaCommand(t.opaBin)
	if err != nil {
		return err
	}
	if t.version, err = opaVersion(ctx, opa); err != nil {
		return err
	}
	return t.Launch(ctx, "opa server", addr, opa.Command(context.Background(), args...))
}

// tlsArgs are OPA's flags for the TLS mode asked for, with the authorization policy of
// mtls_authz written into dir: OPA's tls authentication names the client by its certificate's
// subject (input.identity), which --authorization=basic's system policy then admits or not.
func (t *server) tlsArgs(dir string, bundles bool) ([]string, error) {
	f := t.LaunchTLS()
	if f == nil {
		return nil, nil
	}
	args := []string{"--tls-cert-file", f.Cert, "--tls-private-key-file", f.Key}
	if f.ClientCA != "" {
		args = append(args, "--tls-ca-cert-file", f.ClientCA, "--authentication=tls")
	}
	if t.cfg.Mode() == kinds.MutualTLSAuthz {
		t.admitted = t.cfg.MTLSAdmit
		if len(t.admitted) == 0 {
			id, err := t.ClientSubject()
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

func (t *server) Worker() kinds.Decider { return t.HTTPWorker() }

func (t *server) Info() kinds.Info {
	info := t.BaseInfo("opa", t.version)
	if info.PID != 0 { // a server authzbench started
		info.LogLevel = t.Common().ServerLogLevel()
	}
	if info.TLS != nil && t.cfg.MTLSAuthz {
		info.TLS.Admitted = t.admitted
	}
	info.DecisionLogs = t.logging.info()
	info.Bundle = t.served
	if t.served != nil {
		info.Consistency = bundlePromise.Record()
	}
	return info
}

// startLogging starts the log service when decision logging is asked for, and returns OPA's
// arguments for it.
func (t *server) startLogging(dir string) ([]string, error) {
	var err error
	if t.logging, err = startDecisionLogging(t.logs); err != nil || t.logging == nil {
		return nil, err
	}
	return t.logging.args(dir)
}

// Stop stops OPA, whose decision logger flushes at its stop, then takes the decision log
// account.
func (t *server) Stop(ctx context.Context) error {
	err := t.Server.Stop(ctx)
	t.logging.finish()
	if t.bundles != nil {
		t.bundles.Close()
		t.bundles = nil
	}
	return err
}

// opaCommand is the OPA command line to run: the opa binary at bin, or the OPA linked into
// authzbench when bin is empty.
func opaCommand(bin string) (Program, error) {
	if bin == "" {
		return Linked()
	}
	o, err := External(bin)
	if err != nil {
		return o, kinds.NewOptionError("opa_bin", func(n func(string) string) string { return n("opa_bin") + " " + err.Error() })
	}
	return o, nil
}

// opaVersion asks the OPA command for its version; the linked-in OPA answers without a process.
func opaVersion(ctx context.Context, o Program) (string, error) {
	if len(o.Prefix) > 0 {
		return version.Version, nil
	}
	v, err := o.Version(ctx)
	if err != nil {
		return "", err
	}
	return v, nil
}

// writeAuthzPolicy writes OPA's system authorization policy (data.system.authz.allow, consulted
// on every request with --authorization=basic) admitting the given identities, into dir: a file,
// or with asBundle a bundle directory of its own, for an opa run that reads bundles.
//
// /health is answered to any client that passed the handshake, so that readiness can be probed
// even when the policy is set to refuse the client (mtls_admit naming another): the measured
// decision endpoint stays behind the policy. `import rego.v1` keeps it valid whether OPA reads
// the workload as v1 or, with --v0-compatible, as v0.
func writeAuthzPolicy(dir string, admit []string, asBundle bool) (string, error) {
	quoted := make([]string, len(admit))
	for i, id := range admit {
		b, err := json.Marshal(id) // a JSON string is a Rego string
		if err != nil {
			return "", err
		}
		quoted[i] = string(b)
	}
	policy := `package system.authz

import rego.v1

default allow := false

admitted := {` + strings.Join(quoted, ", ") + `}

allow if input.path == ["health"]

allow if input.identity in admitted
`
	if !asBundle {
		path := filepath.Join(dir, "authzbench-system-authz.rego")
		if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
			return "", fmt.Errorf("write OPA's authorization policy: %w", err)
		}
		return path, nil
	}
	// Beside a bundle, opa run --bundle takes every path for one: the policy is a bundle of its
	// own, rooted at system/authz so that it overlaps no root of a user's bundle that names its
	// roots.
	bundle := filepath.Join(dir, "authzbench-system-authz")
	files := []struct{ name, text string }{
		{filepath.Join(bundle, ".manifest"), `{"roots": ["system/authz"]}`},
		{filepath.Join(bundle, "system", "authz", "authz.rego"), policy},
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.name), 0o700); err != nil {
			return "", fmt.Errorf("write OPA's authorization policy: %w", err)
		}
		if err := os.WriteFile(f.name, []byte(f.text), 0o600); err != nil {
			return "", fmt.Errorf("write OPA's authorization policy: %w", err)
		}
	}
	return bundle, nil
}
