package kinds

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// rbacInputs is the rbac workload cut to its first n inputs.
func rbacInputs(t *testing.T, n int) *workload.Workload {
	t.Helper()
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs = w.Inputs[:min(len(w.Inputs), n)]
	return w
}

func h2Config(kind string, server ServerConfig, h2 HTTP2Config) Config {
	return configOf(kind, server, h2)
}

// The servers authzbench starts decide rbac right over HTTP/2, h2c in clear (started with
// --h2c) and h2 over TLS, with several workers multiplexed on one connection; a worker counts an
// answer over HTTP/1.x as not_http2, so every ok here came over HTTP/2. The result records
// HTTP/2 and the pool's size. (OPA's server: internal/engine/opa's TestServedOverHTTP2.)
func TestServedOverHTTP2(t *testing.T) {
	w := rbacInputs(t, 20)
	for _, tc := range []struct {
		kind string
		tls  TLSServer
	}{
		{"cedar/server", TLSServer{}},
		{"cedar/server", TLSServer{TLS: true}},
		{"cedar/server", TLSServer{MTLS: true}},
	} {
		t.Run(tc.kind+"/"+tc.tls.Mode().String(), func(t *testing.T) {
			tg := startTarget(t, tc.kind, Common{Workers: 3, TempDir: t.TempDir()},
				h2Config(tc.kind, ServerConfig{TLSServer: tc.tls}, HTTP2Config{HTTP2: true}), w)
			workers := []Decider{tg.Worker(), tg.Worker(), tg.Worker()}
			classes := map[string]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, d := range workers {
				wg.Go(func() {
					for i, in := range w.Inputs {
						out := d.Decide(context.Background(), i)
						mu.Lock()
						classes[verify.Name(verify.Classify(in.Expect, out), out.Status)]++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if classes["ok"] != 3*len(w.Inputs) {
				t.Fatalf("classes %v, want %d ok", classes, 3*len(w.Inputs))
			}
			info := tg.Info()
			if !info.HTTP2 || info.Connections != 1 {
				t.Errorf("info: http2 %v, connections %d; want true and 1", info.HTTP2, info.Connections)
			}
			if h2c := slices.Contains(info.Command, "--h2c"); h2c != (tc.tls.Mode() == Plain) {
				t.Errorf("command %q: --h2c %v, want it in clear only", info.Command, h2c)
			}
		})
	}
}

// A server that speaks only HTTP/1.1, given http2, answers every request; none of them is a
// decision: each is not_http2, in clear (the h2c preface answered in HTTP/1.1) and over TLS
// (ALPN settled on http/1.1), for the served kinds' url and the http target alike.
func TestHTTP1OnlyServerGivenHTTP2(t *testing.T) {
	w := rbacInputs(t, 6)
	// Decision requests that reached the handler over HTTP/2; an HTTP/1-only Go server hands
	// the h2c preface itself on as a request "PRI *", and answers it in HTTP/1.1.
	var overHTTP2 atomic.Int64
	handler := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && r.Method != "PRI" {
			overHTTP2.Add(1)
		}
		rw.Write([]byte(`{"result": true, "allow": true}`))
	})
	// Go's server takes h2c with prior knowledge unless told HTTP/1 only.
	plain := httptest.NewUnstartedServer(handler)
	plain.Config.Protocols = new(http.Protocols)
	plain.Config.Protocols.SetHTTP1(true)
	plain.Start()
	defer plain.Close()
	secure := httptest.NewUnstartedServer(handler)
	secure.EnableHTTP2 = false
	secure.StartTLS()
	defer secure.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secure.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	h2 := HTTP2Config{HTTP2: true}
	for _, tc := range []struct {
		name, kind string
		cfg        Config
	}{
		{"cedar/server h2c", "cedar/server", h2Config("cedar/server", ServerConfig{URL: plain.URL}, h2)},
		{"cedar/server h2", "cedar/server", h2Config("cedar/server", ServerConfig{URL: secure.URL, TLSClient: TLSClient{CACert: ca}}, h2)},
		{"http h2c", "http", &HTTPConfig{URL: plain.URL + "/authz", DecisionPath: "/allow", HTTP2Config: h2}},
		{"http h2", "http", &HTTPConfig{URL: secure.URL + "/authz", DecisionPath: "/allow", TLSClient: TLSClient{CACert: ca}, HTTP2Config: h2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := startTarget(t, tc.kind, Common{TempDir: t.TempDir()}, tc.cfg, w)
			classes, outs := decideAll(t, tg, w, tg.Worker())
			if classes["not_http2"] != len(w.Inputs) || len(classes) != 1 {
				t.Fatalf("classes %v, want %d not_http2 and nothing else", classes, len(w.Inputs))
			}
			if outs[0].Err == nil || !strings.Contains(outs[0].Err.Error(), "HTTP/1") {
				t.Errorf("first error %v: want it to say the server spoke HTTP/1", outs[0].Err)
			}
		})
	}
	if n := overHTTP2.Load(); n != 0 {
		t.Errorf("%d decision requests reached the handler over HTTP/2, want none", n)
	}
}

// The workers share the pool: every request reaches the server over HTTP/2, on exactly
// http2_connections connections however many workers send, with the http target's method,
// headers and body template as over HTTP/1.1.
func TestHTTP2WorkersShareConnections(t *testing.T) {
	w := rbacInputs(t, 10)
	var mu sync.Mutex
	conns := map[string]int{}
	protos := map[string]int{}
	var badHeader int
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr]++
		protos[r.Proto]++
		if r.Header.Get("X-Tenant") != "a" || r.Method != http.MethodPut || r.Header.Get("Content-Type") != "application/json" {
			badHeader++
		}
		mu.Unlock()
		rw.Write([]byte(`{"decision": "allow"}`))
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	tg := startTarget(t, "http", Common{Workers: 5}, &HTTPConfig{URL: srv.URL + "/authz", Method: "PUT", Headers: []string{"X-Tenant: a"},
		Body: `{"who": {{input.user}}}`, DecisionPath: "/decision", HTTP2Config: HTTP2Config{HTTP2: true, HTTP2Connections: 2}}, w)
	mu.Lock()
	probes := protos["HTTP/1.1"] // the reachability probe, over HTTP/1.1
	clear(conns)
	clear(protos)
	badHeader = 0
	mu.Unlock()
	var wg sync.WaitGroup
	for range 5 {
		d := tg.Worker()
		wg.Go(func() {
			for i := range w.Inputs {
				if out := d.Decide(context.Background(), i); out.Kind != verify.Decided || !out.Allow {
					t.Errorf("input %d: %+v, want an allow", i, out)
				}
			}
		})
	}
	wg.Wait()
	if probes != 1 {
		t.Errorf("%d probes over HTTP/1.1, want 1", probes)
	}
	if protos["HTTP/2.0"] != 5*len(w.Inputs) || len(protos) != 1 {
		t.Errorf("requests by protocol %v, want %d over HTTP/2.0 only", protos, 5*len(w.Inputs))
	}
	if len(conns) != 2 {
		t.Errorf("requests by connection %v, want 2 connections", conns)
	}
	if badHeader != 0 {
		t.Errorf("%d requests without the method, the header or the content type", badHeader)
	}
	if info := tg.Info(); !info.HTTP2 || info.Connections != 2 {
		t.Errorf("info: http2 %v, connections %d; want true and 2", info.HTTP2, info.Connections)
	}
}

// Settings that cannot go together are refused before anything starts, naming the options.
func TestHTTP2SettingsConflicts(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind string
		cfg  Config
		want string
	}{
		{"connections without http2", "cedar/server", h2Config("cedar/server", ServerConfig{}, HTTP2Config{HTTP2Connections: 2}), "http2_connections sets the HTTP/2 connections the workers share; give http2"},
		{"negative connections", "cedar/server", configOf("cedar/server", HTTP2Config{HTTP2: true, HTTP2Connections: -1}), "http2_connections -1: want 1 or more"},
		{"http target", "http", &HTTPConfig{URL: "http://127.0.0.1:1/a", DecisionPath: "/a", HTTP2Config: HTTP2Config{HTTP2Connections: 3}}, "give http2 with it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.kind, Common{}, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want %q", err, tc.want)
			}
		})
	}
	// HTTP/2 keeps its connections: with no reuse it refuses to start, before launching anything.
	for _, kind := range []string{"cedar/server"} {
		tg, err := New(kind, Common{NoReuse: true, TempDir: t.TempDir()}, h2Config(kind, ServerConfig{}, HTTP2Config{HTTP2: true}))
		if err != nil {
			t.Fatal(err)
		}
		err = tg.Start(context.Background(), rbacInputs(t, 1))
		tg.Stop(context.Background())
		if err == nil || !strings.Contains(err.Error(), "does not go with --no-reuse") {
			t.Errorf("%s: start with no reuse: %v, want a refusal", kind, err)
		}
		if info := tg.Info(); info.PID != 0 {
			t.Errorf("%s: a server was started (pid %d) before the refusal", kind, info.PID)
		}
	}
	tg, _ := New("http", Common{NoReuse: true}, &HTTPConfig{URL: "http://127.0.0.1:1/a", DecisionPath: "/a", HTTP2Config: HTTP2Config{HTTP2: true}})
	if err := tg.Start(context.Background(), rbacInputs(t, 1)); err == nil || !strings.Contains(err.Error(), "does not go with --no-reuse") {
		t.Errorf("http: start with no reuse: %v, want a refusal", err)
	}
}
