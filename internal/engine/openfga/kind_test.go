package openfga

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// OpenFGA in process, its server over HTTP and over gRPC, each started by authzbench and each
// found at a URL, decide the rbac inputs as the reference model does.
func TestOpenFGAModesDecideAlike(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs = w.Inputs[:200]
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 2} // two workers, two gRPC connections: not a pool
	decideAll := func(t *testing.T, tg kinds.Target) {
		t.Helper()
		d := tg.Worker()
		for i, in := range w.Inputs {
			out := d.Decide(context.Background(), i)
			if want := in.Expect == workload.ExpectAllow; out.Kind != verify.Decided || out.Allow != want {
				t.Fatalf("input %d %s: %+v, want allowed %t", i+1, Registered.Request(in), out, want)
			}
		}
	}
	start := func(t *testing.T, name string, c kinds.Config) kinds.Target {
		t.Helper()
		tg, err := kinds.New(name, common, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.Start(context.Background(), w); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { tg.Stop(context.Background()) })
		return tg
	}
	t.Run("inproc", func(t *testing.T) { decideAll(t, start(t, "openfga/inproc", nil)) })
	for _, api := range []string{"http", "grpc"} {
		t.Run("server-"+api, func(t *testing.T) {
			tg := start(t, "openfga/server", &OpenFGAServerConfig{API: api})
			decideAll(t, tg)
			info := tg.Info()
			if info.PID == 0 || !strings.HasPrefix(info.Version, "openfga ") {
				t.Errorf("info %+v: want the started server's PID and OpenFGA's version", info)
			}
			if api == "grpc" && (!info.HTTP2 || info.Connections != 0) {
				t.Errorf("info HTTP2 %t, connections %d: want gRPC's HTTP/2 and no shared pool, so a worker sweep is one series", info.HTTP2, info.Connections)
			}
			// The same server, as one someone else runs: the stores are written into it again.
			url := strings.Replace(info.URL, "grpc://", "http://", 1)
			if i := strings.Index(url, "/stores/"); i >= 0 {
				url = url[:i]
			}
			decideAll(t, start(t, "openfga/server", &OpenFGAServerConfig{API: api, ServerConfig: kinds.ServerConfig{URL: url}}))
		})
	}
}

// Settings OpenFGA cannot take are refused before anything starts, naming the option.
func TestOpenFGAServerRefusesWhatItCannotServe(t *testing.T) {
	for _, tc := range []struct {
		c    OpenFGAServerConfig
		want string
	}{
		{OpenFGAServerConfig{API: "rest"}, `api "rest": OpenFGA serves http and grpc`},
		{OpenFGAServerConfig{ServerConfig: kinds.ServerConfig{TLSServer: kinds.TLSServer{TLS: true}}}, "openfga/server starts OpenFGA in clear"},
		{OpenFGAServerConfig{API: "grpc", ServerConfig: kinds.ServerConfig{URL: "https://127.0.0.1:8081"}}, "the running server's gRPC address in clear"},
		{OpenFGAServerConfig{OpenFGABin: "/nonexistent/openfga"}, "openfga_bin /nonexistent/openfga: exec: "},
		{OpenFGAServerConfig{OpenFGABin: "/bin/true"}, "openfga_bin /bin/true is not an OpenFGA server binary: /bin/true version printed no \"OpenFGA version `...`\" line"},
		{OpenFGAServerConfig{OpenFGABin: "/bin/true", ServerConfig: kinds.ServerConfig{URL: "http://127.0.0.1:8080"}}, "openfga_bin configures a server authzbench starts; with url it starts none"},
	} {
		if err := tc.c.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
}

// openfga_bin runs that binary's `run` with the addresses and log flags authzbench gives its
// own server, and the result records the version the binary reports. The binary here is a
// script that says it is OpenFGA v9.9.9-fake and serves as this test binary's OpenFGA.
func TestOpenFGAServerRunsTheBinaryGiven(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	argsFile, fake := filepath.Join(dir, "args"), filepath.Join(dir, "openfga")
	script := fmt.Sprintf(`#!/bin/sh
if [ "$1" = version ]; then echo '2026/11/26 10:00:00 OpenFGA version `+"`v9.9.9-fake` build from `none` on `today`"+`' >&2; exit 0; fi
echo "$@" > %q
exec %q openfga "$@"
`, argsFile, self)
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs = w.Inputs[:50]
	tg, err := kinds.New("openfga/server", kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared()}, &OpenFGAServerConfig{OpenFGABin: fake})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	defer tg.Stop(context.Background())
	d := tg.Worker()
	for i, in := range w.Inputs {
		if out := d.Decide(context.Background(), i); out.Kind != verify.Decided || out.Allow != (in.Expect == workload.ExpectAllow) {
			t.Fatalf("input %d: %+v", i+1, out)
		}
	}
	if info := tg.Info(); info.Version != "openfga v9.9.9-fake" || info.PID == 0 {
		t.Errorf("info %+v: want the binary's version and its PID", info)
	}
	args, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"run --http-addr 127.0.0.1:", " --grpc-addr 127.0.0.1:", " --metrics-addr 127.0.0.1:", " --log-level ", " --playground-enabled=false"} {
		if !strings.Contains(string(args), want) {
			t.Errorf("the binary ran with %q, want %q in it", args, want)
		}
	}
}

// OpenFGA's kinds are registered with the placements the run pins and records them by, and
// every target of a run takes the engine the run prepared: two in process and a server over
// each API start on the one store, and nothing is built again.
func TestKindsShareThePreparedEngine(t *testing.T) {
	for name, want := range map[string]kinds.Placement{"openfga/inproc": kinds.InProcess, "openfga/server": kinds.LaunchedServer} {
		if k, err := kinds.Lookup(name); err != nil || k.Placement != want || k.Engine != "openfga" {
			t.Errorf("%s: %v, want OpenFGA's kind placed %s", name, err, want)
		}
	}
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs = w.Inputs[:20]
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared()}
	for _, tc := range []struct {
		name string
		cfg  kinds.Config
	}{{"openfga/inproc", nil}, {"openfga/inproc", nil}, {"openfga/server", nil}, {"openfga/server", &OpenFGAServerConfig{API: "grpc"}}} {
		tg, err := kinds.New(tc.name, common, tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.Start(context.Background(), w); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		defer tg.Stop(context.Background())
	}
	if _, err := common.Prepared.Of("openfga", w, func() (any, error) {
		t.Error("built again after the targets started")
		return nil, nil
	}); err != nil {
		t.Error(err)
	}
}
