package kinds

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/tlsgen"
	"github.com/authzbench/authzbench/internal/workload"
)

func TestExtAuthzConfigCheck(t *testing.T) {
	// The files are read by the check: real ones where a case passes.
	set, err := tlsgen.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  ExtAuthzConfig
		want string // in the error; "" for none
	}{
		{ExtAuthzConfig{}, ""},
		{ExtAuthzConfig{ServerConfig: ServerConfig{URL: "grpc://127.0.0.1:9191"}, GRPCConnections: 4}, ""},
		{ExtAuthzConfig{ServerConfig: ServerConfig{URL: "127.0.0.1:9191"}}, ""},
		{ExtAuthzConfig{ServerConfig: ServerConfig{URL: "http://127.0.0.1:9191"}}, "want a gRPC address"},
		{ExtAuthzConfig{ServerConfig: ServerConfig{URL: "127.0.0.1"}}, "want a gRPC address"},
		{ExtAuthzConfig{ServerConfig: ServerConfig{URL: "127.0.0.1:9191", Port: 9191}}, "with url it starts none"},
		{ExtAuthzConfig{GRPCConnections: -1}, "grpc_connections -1"},
		// TLS: a server authzbench starts serves it; a running one is met by the client's settings.
		{ExtAuthzConfig{ServerConfig: ServerConfig{TLSServer: TLSServer{TLS: true}}}, ""},
		{ExtAuthzConfig{ServerConfig: ServerConfig{TLSServer: TLSServer{MTLS: true}}}, ""},
		{ExtAuthzConfig{ServerConfig: ServerConfig{URL: "grpcs://127.0.0.1:9191"}}, ""},
		{ExtAuthzConfig{ServerConfig: ServerConfig{URL: "127.0.0.1:9191", TLSClient: TLSClient{Insecure: true}}}, ""},
		{ExtAuthzConfig{ServerConfig: ServerConfig{URL: "grpc://127.0.0.1:9191", TLSClient: TLSClient{CACert: set.CACert, Cert: set.ClientCert, Key: set.ClientKey}}}, ""},
		{ExtAuthzConfig{ServerConfig: ServerConfig{URL: "grpc://127.0.0.1:9191", TLSClient: TLSClient{Cert: "c.crt"}}}, "needs both cert and key"},
		{ExtAuthzConfig{ServerConfig: ServerConfig{URL: "grpc://127.0.0.1:9191", TLSServer: TLSServer{TLS: true}}}, "with url it starts none"},
		{ExtAuthzConfig{ServerConfig: ServerConfig{TLSClient: TLSClient{Insecure: true}}}, "insecure applies to a server given by url"},
		{ExtAuthzConfig{ServerConfig: ServerConfig{TLSServer: TLSServer{ServerCert: "s.crt", ServerKey: "s.key"}}}, "server_cert needs cacert"},
		// OPA's authorization policy guards its REST API, not the plugin's gRPC port: refused, saying so.
		{ExtAuthzConfig{ServerConfig: ServerConfig{TLSServer: TLSServer{MTLSAuthz: true}}}, "OPA's --authorization=basic guards OPA's REST API, not the ext_authz plugin's gRPC port"},
		{ExtAuthzConfig{ServerConfig: ServerConfig{URL: "grpcs://127.0.0.1:9191/x"}}, "want a gRPC address"},
	} {
		err := tc.cfg.Check()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// The ext_authz kinds take workloads whose inputs are Envoy checks, and nop, whose policy reads
// none; another workload is refused with the reason, before anything starts.
func TestExtAuthzTakes(t *testing.T) {
	k, err := Lookup("cedar/extauthz")
	if err != nil {
		t.Fatal(err)
	}
	for name, takes := range map[string]bool{"envoy": true, "nop": true, "rbac": false} {
		w, err := workload.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if reason := k.Refuses(w); (reason == "") != takes {
			t.Errorf("%s: refused %q, want taken %t", name, reason, takes)
		}
		if !takes {
			tg, _ := New("cedar/extauthz", Common{}, nil)
			if err := tg.Start(context.Background(), w); err == nil || !strings.Contains(err.Error(), "not Envoy CheckRequests") {
				t.Errorf("%s started: %v", name, err)
			}
		}
	}
	// Every nop input becomes a check, as every envoy input does.
	for _, name := range []string{"envoy", "nop"} {
		w, _ := workload.Builtin(name)
		reqs, err := checkRequests(w)
		if err != nil || len(reqs) != len(w.Inputs) || len(reqs[0].B) == 0 {
			t.Errorf("%s: %d requests, %v; want one per input", name, len(reqs), err)
		}
	}
}

// A running server that is not there fails before any load, naming the url.
func TestExtAuthzUnreachable(t *testing.T) {
	w, err := workload.Builtin("nop")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := New("cedar/extauthz", Common{Timeout: time.Second}, &ExtAuthzConfig{ServerConfig: ServerConfig{URL: "grpc://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Stop(context.Background())
	start := time.Now()
	err = tg.Start(context.Background(), w)
	if err == nil || !strings.Contains(err.Error(), "cannot reach the ext_authz server at 127.0.0.1:1") {
		t.Errorf("Start: %v, want cannot reach", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %s to give up", time.Since(start))
	}
}

// An engine's ext_authz kind launches its server with two different free loopback addresses,
// ext_authz's and its own API's, and the settings' extra arguments; a launch that fails fails
// the start, and records no server.
func TestExtAuthzKindLaunches(t *testing.T) {
	w, err := workload.Builtin("envoy")
	if err != nil {
		t.Fatal(err)
	}
	var launches int
	var gotAddr, gotAPI string
	var gotArgs []string
	refused := errors.New("no server here")
	k := ExtAuthzKind{Name: "x/extauthz", Engine: "x", Version: func() string { return "1.0" }, LogLevel: true,
		Launch: func(_ context.Context, s *ExtAuthzServer, _ *workload.Workload, addr, apiAddr string) error {
			launches++
			gotAddr, gotAPI, gotArgs = addr, apiAddr, s.Args()
			return refused
		}}
	target := &engineExtAuthz{ExtAuthzServer: NewExtAuthzServer(Common{TempDir: t.TempDir()}, &ExtAuthzConfig{ServerConfig: ServerConfig{Args: []string{"--flag"}}}), kind: k}
	if err := target.Start(context.Background(), w); !errors.Is(err, refused) {
		t.Fatalf("start: %v, want the launch's error", err)
	}
	if launches != 1 || !strings.HasPrefix(gotAddr, "127.0.0.1:") || !strings.HasPrefix(gotAPI, "127.0.0.1:") || gotAddr == gotAPI {
		t.Errorf("%d launches on %q and %q: want one, on two loopback addresses", launches, gotAddr, gotAPI)
	}
	if len(gotArgs) != 1 || gotArgs[0] != "--flag" {
		t.Errorf("launched with args %q, want the settings' --flag", gotArgs)
	}
	if info := target.Info(); info.Engine != "x" || info.PID != 0 || info.LogLevel != "" {
		t.Errorf("info %+v: want engine x, and no log level for a server that did not start", info)
	}
}
