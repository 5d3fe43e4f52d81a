package opa

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/tlsgen"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// builtin is the built-in workload name cut to its first n inputs.
func builtin(t *testing.T, name string, n int) *workload.Workload {
	t.Helper()
	w, err := workload.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs = w.Inputs[:min(len(w.Inputs), n)]
	return w
}

// startTarget starts a target of kind on w, stopped at the test's end.
func startTarget(t *testing.T, kind string, common kinds.Common, cfg kinds.Config, w *workload.Workload) kinds.Target {
	t.Helper()
	tg, err := kinds.New(kind, common, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Stop(context.Background()) })
	return tg
}

// decideAll asks every input of w once on d and classifies each answer.
func decideAll(t *testing.T, w *workload.Workload, d kinds.Decider) (classes map[string]int, outs []verify.Outcome) {
	t.Helper()
	classes = map[string]int{}
	defer kinds.CloseDecider(d)
	for i, in := range w.Inputs {
		out := d.Decide(context.Background(), i)
		classes[verify.Name(verify.Classify(in.Expect, out), out.Status)]++
		outs = append(outs, out)
	}
	return classes, outs
}

// OPA's kinds say where each runs, a served one given a url measuring a server someone else
// runs; opa/inproc takes no url.
func TestKindsPlacement(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		values map[string]any
		want   kinds.Placement
	}{
		{"opa/inproc", nil, kinds.InProcess},
		{"opa/wasm", nil, kinds.InProcess},
		{"opa/cli", nil, kinds.ProcessPerDecision},
		{"opa/server", nil, kinds.LaunchedServer},
		{"opa/extauthz", nil, kinds.LaunchedServer},
		{"opa/server", map[string]any{"url": "http://127.0.0.1:8181"}, kinds.External},
		{"opa/extauthz", map[string]any{"url": "grpc://127.0.0.1:9191"}, kinds.External},
		{"opa/inproc", map[string]any{"url": "http://127.0.0.1:8181"}, kinds.InProcess},
	} {
		k, err := kinds.Lookup(tc.kind)
		if err != nil {
			t.Fatal(err)
		}
		c, err := k.Configure(tc.values)
		if err != nil {
			t.Fatal(err)
		}
		if got := k.PlacementFor(c); got != tc.want || k.Engine != "opa" || !k.LoadsPolicy {
			t.Errorf("%s with %v: %s, engine %q, loads policy %t; want %s, opa's, loading it", tc.kind, tc.values, got, k.Engine, k.LoadsPolicy, tc.want)
		}
	}
	if modes := kinds.EngineModes(); len(modes) == 0 || modes[0] != "opa/inproc" {
		t.Errorf("engine modes %v: want the in-process OPA first, the reference", modes)
	}
}

// opa/server's settings take every served option, opa_bin and the decision log keys; opa_bin's help and mtls_authz's
// name the kinds that take them, from the registry; opa_bin with url is refused, from a scenario
// (Check) and from the command line (CheckGiven), as --sut-arg is.
func TestServerSettings(t *testing.T) {
	c := &ServerConfig{}
	if got, want := strings.Join(kinds.OptionKeys(c), ","), "bundle_changes,bundle_server,bundle_size_limit,cacert,cert,decision_log_flush_timeout,decision_log_latency,decision_log_mask,decision_log_reporting,decision_log_service,decision_log_service_addr,decision_logs,http2,http2_connections,insecure,key,mtls,mtls_admit,mtls_authz,opa_bin,optimize,port,provenance,ready_timeout,replicas,server_cert,server_key,sut_args,tls,url"; got != want {
		t.Errorf("keys %s, want %s", got, want)
	}
	if _, err := kinds.SetOptions(c, map[string]any{"opa_bin": "/usr/bin/opa", "port": 8181}); err != nil || c.OPABin != "/usr/bin/opa" || c.Port != 8181 {
		t.Errorf("set %+v: %v", c, err)
	}
	bin, _ := kinds.LookupOption("opa_bin")
	if got, want := bin.Usage(), "run this opa binary for opa/cli and opa/server instead of the OPA linked in"; got != want {
		t.Errorf("opa_bin usage %q, want %q", got, want)
	}
	authz, _ := kinds.LookupOption("mtls_authz")
	if got := authz.Usage(); !strings.HasPrefix(got, "opa/server only (") {
		t.Errorf("mtls_authz usage %q: want it offered to opa/server only (opa/extauthz refuses it)", got)
	}
	if err := (&ServerConfig{ServerConfig: kinds.ServerConfig{URL: "http://x:1"}, OPABin: "opa"}).Check(); err == nil || !strings.Contains(err.Error(), "opa_bin configures a server") {
		t.Errorf("url and opa_bin: %v, want a refusal", err)
	}
	err := kinds.CheckGiven([]kinds.Config{&ServerConfig{}}, map[string]any{"url": "http://127.0.0.1:1", "opa_bin": "/usr/bin/opa", "sut_args": []string{"--h2c"}})
	if err == nil || err.Error() != "--opa-bin and --sut-arg configure servers authzbench starts; with --url it starts none" {
		t.Errorf("--url, --opa-bin and --sut-arg: %v, want both named", err)
	}
}

// Each TLS mode of the OPA server authzbench starts serves every decision right, with and
// without connection reuse (then every request pays a handshake of its own, timed); the
// result records the mode and, for mtls_authz, the identity OPA's authorization policy admits.
func TestServedOverTLS(t *testing.T) {
	w := builtin(t, "rbac", 20)
	for _, tc := range []struct {
		tls  kinds.TLSServer
		mode string
	}{
		{kinds.TLSServer{TLS: true}, "tls"},
		{kinds.TLSServer{MTLS: true}, "mtls"},
		{kinds.TLSServer{MTLSAuthz: true}, "mtls_authz"},
	} {
		for _, noReuse := range []bool{false, true} {
			name := tc.mode
			if noReuse {
				name += "/no-reuse"
			}
			t.Run(name, func(t *testing.T) {
				tg := startTarget(t, "opa/server", kinds.Common{NoReuse: noReuse, TempDir: t.TempDir()},
					&ServerConfig{ServerConfig: kinds.ServerConfig{TLSServer: tc.tls}}, w)
				classes, outs := decideAll(t, w, tg.Worker())
				if classes["ok"] != len(w.Inputs) {
					t.Fatalf("classes %v, want %d ok", classes, len(w.Inputs))
				}
				handshakes := 0
				for _, o := range outs {
					if o.TLSNS > 0 {
						handshakes++
					}
				}
				if want := map[bool]int{false: 1, true: len(w.Inputs)}[noReuse]; handshakes != want {
					t.Errorf("%d requests timed %d handshakes, want %d", len(outs), handshakes, want)
				}
				info := tg.Info()
				if info.TLS == nil || info.TLS.Mode != tc.mode || !info.TLS.Generated || !strings.HasPrefix(info.URL, "https://") || info.LogLevel == "" {
					t.Errorf("info %+v, TLS %+v: want mode %s, generated, an https url, the server's log level", info, info.TLS, tc.mode)
				}
				if admitted := info.TLS.Admitted; (tc.mode == "mtls_authz") != (len(admitted) == 1 && admitted[0] == "CN="+tlsgen.ClientCN) {
					t.Errorf("admitted %q: want the client certificate's subject under mtls_authz alone", admitted)
				}
				if slices.Contains(info.Command, "--authentication=tls") != (tc.mode != "tls") {
					t.Errorf("command %q: want OPA to authenticate clients by certificate in the mutual modes alone", info.Command)
				}
			})
		}
	}
}

// A client OPA's authorization policy does not admit is refused by OPA as unauthorized: each
// decision is http_401, never a decision.
func TestTLSClientNotAdmitted(t *testing.T) {
	w := builtin(t, "rbac", 5)
	tg := startTarget(t, "opa/server", kinds.Common{TempDir: t.TempDir()},
		&ServerConfig{ServerConfig: kinds.ServerConfig{TLSServer: kinds.TLSServer{MTLSAuthz: true, MTLSAdmit: []string{"CN=someone-else"}}}}, w)
	classes, outs := decideAll(t, w, tg.Worker())
	if classes["http_401"] != len(w.Inputs) {
		t.Errorf("classes %v, want %d http_401; first: %v", classes, len(w.Inputs), outs[0].Err)
	}
	if got := tg.Info().TLS.Admitted; !slices.Equal(got, []string{"CN=someone-else"}) {
		t.Errorf("admitted %q, want the identity given", got)
	}
}

// OPA serves h2c when started with --h2c: several workers multiplexed on one connection decide
// rbac right, every answer over HTTP/2 (one over HTTP/1.x would be not_http2).
func TestServedOverHTTP2(t *testing.T) {
	w := builtin(t, "rbac", 20)
	tg := startTarget(t, "opa/server", kinds.Common{Workers: 3, TempDir: t.TempDir()},
		&ServerConfig{HTTP2Config: kinds.HTTP2Config{HTTP2: true}}, w)
	for range 3 {
		if classes, outs := decideAll(t, w, tg.Worker()); classes["ok"] != len(w.Inputs) {
			t.Fatalf("classes %v, want %d ok; first: %v", classes, len(w.Inputs), outs[0].Err)
		}
	}
	info := tg.Info()
	if !info.HTTP2 || info.Connections != 1 || !slices.Contains(info.Command, "--h2c") {
		t.Errorf("info: http2 %v, connections %d, command %q; want true, 1, --h2c", info.HTTP2, info.Connections, info.Command)
	}
}

// OPA's REST server over TLS offers no h2 by ALPN (OPA 1.22: its per-connection TLS
// configuration carries no NextProtos), so opa/server with http2 and tls fails before any load
// with that reason, rather than measuring HTTP/1.1 under an h2 label.
func TestServerOverTLSRefusesHTTP2(t *testing.T) {
	w := builtin(t, "rbac", 2)
	tg, err := kinds.New("opa/server", kinds.Common{TempDir: t.TempDir()},
		&ServerConfig{ServerConfig: kinds.ServerConfig{TLSServer: kinds.TLSServer{TLS: true}}, HTTP2Config: kinds.HTTP2Config{HTTP2: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Stop(context.Background())
	err = tg.Start(context.Background(), w)
	if err == nil || !strings.Contains(err.Error(), "does not offer h2 by ALPN") || !strings.Contains(err.Error(), "HTTP/1.1") {
		t.Fatalf("start: %v; want a refusal saying the server answered over HTTP/1.1", err)
	}
}

// OPA's ext_authz plugin serves every check right over TLS and mutual TLS, from its own TLS
// settings; the result records the mode and says grpcs.
func TestExtAuthzOverTLS(t *testing.T) {
	w := builtin(t, "envoy", 20)
	for _, tc := range []struct {
		tls  kinds.TLSServer
		mode string
	}{{kinds.TLSServer{TLS: true}, "tls"}, {kinds.TLSServer{MTLS: true}, "mtls"}} {
		t.Run(tc.mode, func(t *testing.T) {
			tg := startTarget(t, "opa/extauthz", kinds.Common{TempDir: t.TempDir()}, &ExtAuthzConfig{ExtAuthzConfig: kinds.ExtAuthzConfig{ServerConfig: kinds.ServerConfig{TLSServer: tc.tls}}}, w)
			if classes, outs := decideAll(t, w, tg.Worker()); classes["ok"] != len(w.Inputs) {
				t.Fatalf("classes %v, want %d ok; first: %v", classes, len(w.Inputs), outs[0].Err)
			}
			info := tg.Info()
			if info.TLS == nil || info.TLS.Mode != tc.mode || !info.TLS.Generated || !strings.HasPrefix(info.URL, "grpcs://127.0.0.1:") || info.LogLevel == "" {
				t.Errorf("info %+v, TLS %+v: want mode %s, generated, a grpcs url, the server's log level", info, info.TLS, tc.mode)
			}
		})
	}
}

// Your own certificates reach the plugin as given, even from a directory whose name OPA's
// --set would otherwise split (a comma, an equals sign), recorded by name in the result, and
// left in place after Stop.
func TestExtAuthzOwnCertificates(t *testing.T) {
	w := builtin(t, "envoy", 5)
	dir := filepath.Join(t.TempDir(), "certs,one=two")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	set, err := tlsgen.Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	own := kinds.ServerConfig{TLSServer: kinds.TLSServer{MTLS: true, ServerCert: set.ServerCert, ServerKey: set.ServerKey},
		TLSClient: kinds.TLSClient{CACert: set.CACert, Cert: set.ClientCert, Key: set.ClientKey}}
	tg := startTarget(t, "opa/extauthz", kinds.Common{TempDir: t.TempDir()}, &ExtAuthzConfig{ExtAuthzConfig: kinds.ExtAuthzConfig{ServerConfig: own}}, w)
	if classes, outs := decideAll(t, w, tg.Worker()); classes["ok"] != len(w.Inputs) {
		t.Fatalf("classes %v, want %d ok; first: %v", classes, len(w.Inputs), outs[0].Err)
	}
	info := tg.Info()
	if info.TLS == nil || info.TLS.Mode != "mtls" || info.TLS.Generated || info.TLS.ServerCert != set.ServerCert || info.TLS.ClientCert != set.ClientCert {
		t.Errorf("TLS %+v: want mtls with your files named", info.TLS)
	}
	tg.Stop(context.Background())
	if _, err := os.Stat(set.ServerKey); err != nil {
		t.Errorf("your server key after Stop: %v", err)
	}
}

// Every OPA target of a run takes the policy compiled once: after two in-process targets and a
// per-decision one have started, the run's store holds the one compiled query, built no more,
// and both in-process targets decide with it, right.
func TestPolicyIsCompiledOncePerWorkload(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared()}
	var inprocs []kinds.Target
	for _, name := range []string{"opa/inproc", "opa/inproc", "opa/cli"} {
		tg := startTarget(t, name, common, nil, w)
		if name == "opa/inproc" {
			inprocs = append(inprocs, tg)
		}
	}
	if _, err := common.Prepared.Of(Engine.Name(), w, func() (any, error) {
		t.Error("compiled again after the targets started")
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, tg := range inprocs {
		d := tg.Worker()
		for i := range 20 {
			out := d.Decide(context.Background(), i)
			if want := w.Inputs[i].Expect == workload.ExpectAllow; out.Err != nil || out.Allow != want {
				t.Fatalf("input %d: %+v, want allow %t", i, out, want)
			}
		}
	}
}

// --timeout holds for OPA inside authzbench: at 1 ns every decision is a timeout (the deadline
// OPA's evaluation is cancelled by), and the run ends with the reason instead of counting
// timeouts for a minute.
func TestInprocTimeoutIsHonoured(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	tg := startTarget(t, "opa/inproc", kinds.Common{TempDir: t.TempDir(), Timeout: time.Nanosecond}, nil, w)
	start := time.Now()
	out := load.Spec{Workers: 2, Duration: time.Minute, Timeout: time.Nanosecond}.Run(context.Background(), tg, w.Inputs, nil)
	rec := out.Recorder
	if rec.Counts[verify.Timeout] == 0 || rec.Counts[verify.OK] != 0 {
		t.Errorf("timeouts %d, ok %d; want every decision a timeout", rec.Counts[verify.Timeout], rec.Counts[verify.OK])
	}
	if out.Stopped == nil || !strings.HasPrefix(out.Stopped.Error(), "the timeout is too short") || !strings.Contains(out.Stopped.Error(), "1ns timeout") {
		t.Errorf("stopped: %v; want the run ended saying first that the 1ns timeout is too short", out.Stopped)
	}
	if took, n := time.Since(start), rec.Requests(); took > 20*time.Second || n > 200_000 {
		t.Errorf("%d requests in %s before giving up", n, took)
	}
}
