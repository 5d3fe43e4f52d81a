package kinds

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/tlsgen"
	"github.com/authzbench/authzbench/internal/workload"
)

// envoyInputs is the envoy workload cut to n inputs.
func envoyInputs(t *testing.T, n int) *workload.Workload {
	t.Helper()
	w, err := workload.Builtin("envoy")
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs = w.Inputs[:min(len(w.Inputs), n)]
	return w
}

func (s *extAuthzServed) files() *serverFiles { return s.tlsFiles }

// extAuthz is the served part of a target, for the tests to reach into, through whatever the
// target embeds it in (ExtAuthzServer, for the kinds of engines' own packages).
func (s *extAuthzServed) extAuthz() *extAuthzServed { return s }

// served is the part of an ext_authz target the tests reach into.
func extServed(t *testing.T, tg Target) *extAuthzServed {
	t.Helper()
	if s, ok := tg.(interface{ extAuthz() *extAuthzServed }); ok {
		return s.extAuthz()
	}
	t.Fatalf("%T is no ext_authz target", tg)
	return nil
}

// Each ext_authz server authzbench starts serves every check right over TLS and mutual TLS,
// probed over TLS; the result records the mode and says grpcs; the generated certificates are
// gone after Stop.
func TestExtAuthzOverTLS(t *testing.T) {
	w := envoyInputs(t, 20)
	for _, kind := range []string{"opa/extauthz", "cedar/extauthz"} {
		for _, tc := range []struct {
			tls  TLSServer
			mode string
		}{{TLSServer{TLS: true}, "tls"}, {TLSServer{MTLS: true}, "mtls"}} {
			t.Run(kind+"/"+tc.mode, func(t *testing.T) {
				tg := startTarget(t, kind, Common{TempDir: t.TempDir()}, &ExtAuthzConfig{ServerConfig: ServerConfig{TLSServer: tc.tls}}, w)
				classes, outs := decideAll(t, tg, w, tg.Worker())
				if classes["ok"] != len(w.Inputs) {
					t.Fatalf("classes %v, want %d ok; first: %v", classes, len(w.Inputs), outs[0].Err)
				}
				info := tg.Info()
				if info.TLS == nil || info.TLS.Mode != tc.mode || !info.TLS.Generated || !strings.HasPrefix(info.URL, "grpcs://127.0.0.1:") {
					t.Errorf("info %+v, TLS %+v: want mode %s, generated, a grpcs url", info, info.TLS, tc.mode)
				}
				dir := extServed(t, tg).files().generated.Dir
				tg.Stop(context.Background())
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("after Stop, the certificates' directory %s: %v", dir, err)
				}
			})
		}
	}
}

// Your own certificates are passed to each server as given, even from a directory whose name
// OPA's --set would otherwise split (a comma), recorded by name in the result, and left in
// place after Stop.
func TestExtAuthzOwnCertificates(t *testing.T) {
	w := envoyInputs(t, 5)
	dir := filepath.Join(t.TempDir(), "certs,one=two")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	set, err := tlsgen.Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	own := ServerConfig{TLSServer: TLSServer{MTLS: true, ServerCert: set.ServerCert, ServerKey: set.ServerKey},
		TLSClient: TLSClient{CACert: set.CACert, Cert: set.ClientCert, Key: set.ClientKey}}
	for _, kind := range []string{"opa/extauthz", "cedar/extauthz"} {
		t.Run(kind, func(t *testing.T) {
			tg := startTarget(t, kind, Common{TempDir: t.TempDir()}, &ExtAuthzConfig{ServerConfig: own}, w)
			if classes, outs := decideAll(t, tg, w, tg.Worker()); classes["ok"] != len(w.Inputs) {
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
		})
	}
}

// Refusals are errors, never decisions, and each is counted as a TLS refusal (tls_handshake):
// no client certificate against mtls, a client certificate signed by another CA, and a server
// certificate the client does not trust. The server refuses in the handshake, before Check;
// gRPC reports it as UNAVAILABLE, which the TLS watch of the connection tells apart.
func TestExtAuthzTLSRefusals(t *testing.T) {
	w := envoyInputs(t, 5)
	n := len(w.Inputs)
	other, err := tlsgen.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	otherClient, err := tls.LoadX509KeyPair(other.ClientCert, other.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := tlsgen.LoadPool(other.CACert)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"opa/extauthz", "cedar/extauthz"} {
		tg := startTarget(t, kind, Common{TempDir: t.TempDir()}, &ExtAuthzConfig{ServerConfig: ServerConfig{TLSServer: TLSServer{MTLS: true}}}, w)
		s := extServed(t, tg)
		// The server's refusal of a client certificate comes after the client's side of a TLS
		// 1.3 handshake is done: its alert is read when it arrives before the client's first
		// write fails on the closed connection, and otherwise the connection is known to have
		// failed before the server accepted the handshake.
		const unconfirmed = "before the server accepted the TLS handshake"
		for _, tc := range []struct {
			name string
			edit func(*tls.Config)
			want []string // one of them in the first error
		}{
			{"no client certificate", func(c *tls.Config) { c.Certificates = nil }, []string{"certificate required", unconfirmed}},
			{"client certificate of another CA", func(c *tls.Config) { c.Certificates = []tls.Certificate{otherClient} }, []string{"unknown certificate authority", unconfirmed}},
			{"untrusted server", func(c *tls.Config) { c.RootCAs = otherCA }, []string{"certificate signed by unknown authority"}},
		} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				cfg := s.clientTLS.Clone()
				tc.edit(cfg)
				conn, watch, err := s.dial(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				worker := &extAuthzWorker{conn: conn, tls: watch, requests: s.requests, timeout: s.common.timeout()}
				classes, outs := decideAll(t, tg, w, worker)
				if classes["tls_handshake"] != n {
					t.Fatalf("classes %v, want %d tls_handshake; first: %v", classes, n, outs[0].Err)
				}
				if !slices.ContainsFunc(tc.want, func(want string) bool { return strings.Contains(outs[0].Err.Error(), want) }) {
					t.Errorf("first error %v, want it to say one of %q", outs[0].Err, tc.want)
				}
			})
		}
		// The target's own worker, with the right certificate, is still served.
		if classes, outs := decideAll(t, tg, w, tg.Worker()); classes["ok"] != n {
			t.Errorf("%s after the refusals: classes %v, want %d ok; first: %v", kind, classes, n, outs[0].Err)
		}
	}
}

// A running ext_authz server over TLS is measured by url: grpcs:// with cacert (and cert and key
// for mtls), or insecure; a CA that did not sign its certificate fails before any load, naming
// the url, in the certificate's words. The result records how the client met it.
func TestExtAuthzExternalTLS(t *testing.T) {
	w := envoyInputs(t, 5)
	srv := startTarget(t, "cedar/extauthz", Common{TempDir: t.TempDir()}, &ExtAuthzConfig{ServerConfig: ServerConfig{TLSServer: TLSServer{MTLS: true}}}, w)
	s := extServed(t, srv)
	f := s.files()
	other, err := tlsgen.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		cfg    ServerConfig
		mode   string // recorded; "" when Start must fail
		failed string // in Start's error
	}{
		{"grpcs with cacert and a client certificate", ServerConfig{URL: "grpcs://" + s.addr, TLSClient: TLSClient{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey}}, "mtls", ""},
		{"grpc with cacert says TLS too", ServerConfig{URL: "grpc://" + s.addr, TLSClient: TLSClient{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey}}, "mtls", ""},
		{"insecure", ServerConfig{URL: s.addr, TLSClient: TLSClient{Insecure: true, Cert: f.ClientCert, Key: f.ClientKey}}, "mtls", ""},
		{"another CA", ServerConfig{URL: "grpcs://" + s.addr, TLSClient: TLSClient{CACert: other.CACert, Cert: f.ClientCert, Key: f.ClientKey}}, "", "certificate signed by unknown authority"},
		{"in clear", ServerConfig{URL: "grpc://" + s.addr}, "", "cannot reach the ext_authz server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := New("cedar/extauthz", Common{}, &ExtAuthzConfig{ServerConfig: tc.cfg})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Stop(context.Background())
			err = tg.Start(context.Background(), w)
			if tc.mode == "" {
				if err == nil || !strings.Contains(err.Error(), tc.failed) || !strings.Contains(err.Error(), s.addr) {
					t.Fatalf("Start: %v, want it to fail naming %s and saying %q", err, s.addr, tc.failed)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if classes, outs := decideAll(t, tg, w, tg.Worker()); classes["ok"] != len(w.Inputs) {
				t.Errorf("classes %v, want %d ok; first: %v", classes, len(w.Inputs), outs[0].Err)
			}
			info := tg.Info()
			if info.TLS == nil || info.TLS.Mode != tc.mode || info.TLS.Insecure != tc.cfg.Insecure || info.TLS.CACert != tc.cfg.CACert || !info.External {
				t.Errorf("info %+v TLS %+v: want external, mode %s, insecure %t, cacert %q", info, info.TLS, tc.mode, tc.cfg.Insecure, tc.cfg.CACert)
			}
		})
	}
}
