package kinds

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/tlsgen"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// decideAll asks every input of w once on d and classifies each answer.
func decideAll(t *testing.T, tg Target, w *workload.Workload, d Decider) (classes map[string]int, outs []verify.Outcome) {
	t.Helper()
	classes = map[string]int{}
	defer closeWorker(d)
	for i, in := range w.Inputs {
		out := d.Decide(context.Background(), i)
		classes[verify.Name(verify.Classify(in.Expect, out), out.Status)]++
		outs = append(outs, out)
	}
	return classes, outs
}

func startTarget(t *testing.T, kind string, common Common, cfg Config, w *workload.Workload) Target {
	t.Helper()
	tg, err := New(kind, common, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Stop(context.Background()) })
	return tg
}

// Each TLS mode of a server authzbench starts serves every decision right, with and without
// connection reuse; without reuse every request pays a handshake of its own and records its
// parts; the result records the mode; the generated certificates are gone after Stop. (OPA's
// server, mtls_authz included: internal/engine/opa's TestServedOverTLS.)
func TestServedOverTLS(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs = w.Inputs[:min(len(w.Inputs), 20)]
	for _, tc := range []struct {
		kind string
		tls  TLSServer
		mode string
	}{
		{"cedar/server", TLSServer{TLS: true}, "tls"},
		{"cedar/server", TLSServer{MTLS: true}, "mtls"},
	} {
		for _, noReuse := range []bool{false, true} {
			name := tc.kind + "/" + tc.mode
			if noReuse {
				name += "/no-reuse"
			}
			t.Run(name, func(t *testing.T) {
				tg := startTarget(t, tc.kind, Common{NoReuse: noReuse, TempDir: t.TempDir()}, servedConfig(tc.kind, ServerConfig{TLSServer: tc.tls}), w)
				classes, outs := decideAll(t, tg, w, tg.Worker())
				if classes["ok"] != len(w.Inputs) {
					t.Fatalf("classes %v, want %d ok", classes, len(w.Inputs))
				}
				handshakes := 0
				for _, o := range outs {
					if o.TLSNS > 0 {
						handshakes++
						if o.ConnectNS <= 0 {
							t.Errorf("a handshake (%d ns) without a TCP connect", o.TLSNS)
						}
					}
				}
				if want := map[bool]int{false: 1, true: len(w.Inputs)}[noReuse]; handshakes != want {
					t.Errorf("%d requests timed %d handshakes, want %d", len(outs), handshakes, want)
				}
				info := tg.Info()
				if info.TLS == nil || info.TLS.Mode != tc.mode || !info.TLS.Generated || !strings.HasPrefix(info.URL, "https://") {
					t.Errorf("info %+v, TLS %+v: want mode %s, generated, an https url", info, info.TLS, tc.mode)
				}
				dir := tg.(interface{ files() *serverFiles }).files().generated.Dir
				tg.Stop(context.Background())
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("after Stop, the certificates' directory %s: %v", dir, err)
				}
			})
		}
	}
}

func (s *served) files() *serverFiles { return s.tlsFiles }

// servedPart is the served part of a target, for the tests to reach into, through whatever the
// target embeds it in (Server, for the kinds of engines' own packages).
func (s *served) servedPart() *served { return s }

// servedOf is the part of a served target the tests reach into.
func servedOf(t *testing.T, tg Target) *served {
	t.Helper()
	if s, ok := tg.(interface{ servedPart() *served }); ok {
		return s.servedPart()
	}
	t.Fatalf("%T is no served target", tg)
	return nil
}

func servedConfig(kind string, c ServerConfig) Config { return configOf(kind, c) }

// configOf is the settings of kind, whatever their type (an engine's kind has its own, in its
// package), with parts (a ServerConfig, an HTTP2Config) in place of the ones they embed.
func configOf(kind string, parts ...any) Config {
	k, err := LookupAny(kind)
	if err != nil {
		panic(err)
	}
	c := k.NewConfig()
	v := reflect.ValueOf(c).Elem()
	for _, p := range parts {
		f := v.FieldByName(reflect.TypeOf(p).Name())
		if !f.IsValid() {
			panic(fmt.Sprintf("%s's settings %T embed no %T", kind, c, p))
		}
		f.Set(reflect.ValueOf(p))
	}
	return c
}

// Refusals are errors, each in its class, never a decision: no client certificate against
// mtls and an untrusted server are tls_handshake. (A client OPA's authorization policy does not
// admit, http_401: internal/engine/opa's TestTLSClientNotAdmitted.)
func TestTLSRefusals(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	// A few inputs: a refused connect backs off (10 ms, doubling), as it should under load.
	w.Inputs = w.Inputs[:5]
	n := len(w.Inputs)
	t.Run("no client certificate against mtls", func(t *testing.T) {
		tg := startTarget(t, "cedar/server", Common{TempDir: t.TempDir()}, servedConfig("cedar/server", ServerConfig{TLSServer: TLSServer{MTLS: true}}), w)
		worker := tg.Worker().(*httpWorker)
		worker.conn = withTLS(t, servedOf(t, tg).endpoint, func(c *tls.Config) { c.Certificates = nil })
		classes, outs := decideAll(t, tg, w, worker)
		if classes["tls_handshake"] != n {
			t.Errorf("classes %v, want %d tls_handshake; first: %v", classes, n, outs[0].Err)
		}
	})
	t.Run("untrusted server", func(t *testing.T) {
		tg := startTarget(t, "cedar/server", Common{TempDir: t.TempDir()}, servedConfig("cedar/server", ServerConfig{TLSServer: TLSServer{TLS: true}}), w)
		worker := tg.Worker().(*httpWorker)
		worker.conn = withTLS(t, servedOf(t, tg).endpoint, func(c *tls.Config) { c.RootCAs = x509.NewCertPool() })
		classes, outs := decideAll(t, tg, w, worker)
		if classes["tls_handshake"] != n || !strings.Contains(outs[0].Err.Error(), "certificate") {
			t.Errorf("classes %v, want %d tls_handshake; first: %v", classes, n, outs[0].Err)
		}
	})
}

// An https endpoint signed by a private CA is measured with cacert, and refused as
// tls_handshake without it; a client certificate is presented with cert and key.
func TestHTTPTargetPrivateCA(t *testing.T) {
	set, err := tlsgen.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(set.ServerCert, set.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := tlsgen.LoadPool(set.CACert)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(rw, `{"allow":true}`)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refusals it logs are the test's own
	srv.StartTLS()
	defer srv.Close()
	w, err := workload.Builtin("nop")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &HTTPConfig{URL: srv.URL + "/v1/authorize", DecisionPath: "/allow",
		TLSClient: TLSClient{CACert: set.CACert, Cert: set.ClientCert, Key: set.ClientKey}}
	tg := startTarget(t, "http", Common{}, cfg, w)
	classes, _ := decideAll(t, tg, w, tg.Worker())
	if classes["ok"] != len(w.Inputs) {
		t.Errorf("classes %v, want %d ok", classes, len(w.Inputs))
	}
	if info := tg.Info(); info.TLS == nil || info.TLS.Mode != "mtls" || info.TLS.CACert != set.CACert {
		t.Errorf("info TLS %+v: want mtls with the cacert recorded", info.TLS)
	}
	// Without the CA, the probe cannot reach it: the run fails before any load, naming url.
	tg, err = New("http", Common{}, &HTTPConfig{URL: srv.URL + "/v1/authorize", DecisionPath: "/allow"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("start without cacert: %v, want the certificate refused", err)
	}
	// cacert on a plain url is a mistake said before anything starts.
	if _, err := New("http", Common{}, &HTTPConfig{URL: "http://127.0.0.1:1/x", DecisionPath: "/allow", TLSClient: TLSClient{Insecure: true}}); err == nil {
		t.Error("insecure with an http url was accepted")
	}
}

// withTLS is a new connection to e with its TLS changed by edit.
func withTLS(t *testing.T, e httpload.Endpoint, edit func(*tls.Config)) *httpload.Conn {
	t.Helper()
	if e.TLS == nil {
		t.Fatal("the endpoint is not TLS")
	}
	e.TLS = e.TLS.Clone()
	edit(e.TLS)
	return httpload.NewConn(e)
}
