package spicedb

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// spicedbWorkload is the validation file of SpiceDB's package tests: assertTrue, assertFalse
// and assertCaveated lines, caveats with and without their context.
func spicedbWorkload(t *testing.T) *workload.Workload {
	t.Helper()
	w, err := workload.FromFiles(workload.UserSpec{Policies: []string{filepath.Join("testdata", "docshare.yaml")}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// decideEvery asks the target every input and wants each to pass as its assertion says.
func decideEvery(t *testing.T, tg kinds.Target, w *workload.Workload) {
	t.Helper()
	d := tg.Worker()
	defer kinds.CloseDecider(d)
	for i, in := range w.Inputs {
		out := d.Decide(context.Background(), i)
		if c := verify.Classify(in.Expect, out); c != verify.OK {
			t.Errorf("%s: %s (%+v)", in.Source, verify.Name(c, out.Status), out)
		}
	}
}

// SpiceDB in process, its server started by authzbench (authzbench-spicedb, found on PATH, and
// the same given as spicedb_bin) and the same server found at a URL, decide a validation file's
// assertions alike; the started server is stopped by its PID.
func TestSpiceDBModesDecideAlike(t *testing.T) {
	w := spicedbWorkload(t)
	// Two workers: each dials its own connection, which the info must not count as a pool.
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 2}
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
	t.Run("inproc", func(t *testing.T) { decideEvery(t, start(t, "spicedb/inproc", nil), w) })
	onPath, err := exec.LookPath(ServerProgram)
	if err != nil {
		t.Fatalf("TestMain put no %s on PATH: %v", ServerProgram, err)
	}
	for _, tc := range []struct {
		name string
		cfg  *SpiceDBServerConfig
	}{{"server found on PATH", &SpiceDBServerConfig{}}, {"server given", &SpiceDBServerConfig{SpiceDBBin: onPath}}} {
		t.Run(tc.name, func(t *testing.T) {
			tg := start(t, "spicedb/server", tc.cfg)
			decideEvery(t, tg, w)
			info := tg.Info()
			if info.PID == 0 || !strings.HasPrefix(info.Version, "spicedb ") || !strings.HasPrefix(info.URL, "grpc://127.0.0.1:") {
				t.Errorf("info %+v: want the started server's PID, SpiceDB's version and its loopback gRPC address", info)
			}
			if !info.HTTP2 || info.Connections != 0 {
				t.Errorf("info HTTP2 %t, connections %d: want gRPC's HTTP/2 and no shared pool, so a worker sweep is one series", info.HTTP2, info.Connections)
			}
			if err := tg.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(info.PID, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("server %d still there after Stop: %v", info.PID, err)
			}
		})
	}
}

// A running SpiceDB, found by its URL with its key: an empty one takes the workload; one with a
// schema is refused unless spicedb_overwrite says to write into it; a wrong key is refused.
func TestSpiceDBRunningServer(t *testing.T) {
	addr, err := sut.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	const key = "authzbench-test-key"
	cmd := exec.Command(ServerProgram, "serve", "--grpc-addr", addr, "--metrics-enabled=false", "--datastore-engine", "memory")
	cmd.Env = append(os.Environ(), "SPICEDB_GRPC_PRESHARED_KEY="+key)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := (sut.GRPCProbe{Addr: addr}).Ready(ctx); err != nil {
		deadline := time.Now().Add(60 * time.Second)
		for err != nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			err = (sut.GRPCProbe{Addr: addr}).Ready(ctx)
		}
		if err != nil {
			t.Fatalf("SpiceDB at %s not ready: %v", addr, err)
		}
	}
	w := spicedbWorkload(t)
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared()}
	try := func(cfg *SpiceDBServerConfig) (kinds.Target, error) {
		cfg.URL = "grpc://" + addr
		tg, err := kinds.New("spicedb/server", common, cfg)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { tg.Stop(context.Background()) })
		return tg, tg.Start(context.Background(), w)
	}
	tg, err := try(&SpiceDBServerConfig{SpiceDBKey: key})
	if err != nil {
		t.Fatalf("empty SpiceDB: %v", err)
	}
	decideEvery(t, tg, w)
	if info := tg.Info(); !info.External || info.PID != 0 {
		t.Errorf("info %+v: want a server authzbench did not start", info)
	}
	for _, tc := range []struct {
		name string
		cfg  *SpiceDBServerConfig
		want string
	}{
		{"a schema there", &SpiceDBServerConfig{SpiceDBKey: key}, "already has a schema"},
		{"wrong key", &SpiceDBServerConfig{SpiceDBKey: "wrong", SpiceDBOverwrite: true}, "refuses the key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := try(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	t.Run("overwrite", func(t *testing.T) {
		t.Setenv("SPICEDB_GRPC_PRESHARED_KEY", key) // the key from the environment
		tg, err := try(&SpiceDBServerConfig{SpiceDBOverwrite: true})
		if err != nil {
			t.Fatal(err)
		}
		decideEvery(t, tg, w)
	})
}

// Settings spicedb/server cannot use are refused before anything starts, each naming its
// option; with no server binary to start, the message says how to get one.
func TestSpiceDBServerSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  SpiceDBServerConfig
		env  map[string]string
		want []string
	}{
		{"url over HTTP", SpiceDBServerConfig{ServerConfig: kinds.ServerConfig{URL: "http://127.0.0.1:50051"}, SpiceDBKey: "k"}, nil, []string{"want grpc://host:port"}},
		{"url without a key", SpiceDBServerConfig{ServerConfig: kinds.ServerConfig{URL: "grpc://127.0.0.1:50051"}}, map[string]string{"SPICEDB_GRPC_PRESHARED_KEY": ""}, []string{"spicedb_key", "SPICEDB_GRPC_PRESHARED_KEY"}},
		{"url and a binary", SpiceDBServerConfig{ServerConfig: kinds.ServerConfig{URL: "grpc://127.0.0.1:50051"}, SpiceDBKey: "k", SpiceDBBin: "spicedb"}, nil, []string{"spicedb_bin names a server authzbench starts"}},
		{"key for a started server", SpiceDBServerConfig{SpiceDBKey: "k"}, nil, []string{"spicedb_key is a running server's key"}},
		{"overwrite for a started server", SpiceDBServerConfig{SpiceDBOverwrite: true}, nil, []string{"spicedb_overwrite is for a running server"}},
		{"TLS", SpiceDBServerConfig{ServerConfig: kinds.ServerConfig{TLSClient: kinds.TLSClient{Insecure: true}, URL: "grpc://127.0.0.1:50051"}, SpiceDBKey: "k"}, nil, []string{"gRPC in clear"}},
		{"a binary that is none", SpiceDBServerConfig{SpiceDBBin: "/bin/true"}, nil, []string{"/bin/true is not a SpiceDB server binary"}},
		{"no binary", SpiceDBServerConfig{}, map[string]string{"PATH": t.TempDir()},
			[]string{"no authzbench-spicedb beside authzbench", "go build -o ", "./cmd/authzbench-spicedb",
				"go install github.com/authzbench/authzbench/cmd/...", "spicedb_bin PATH to SpiceDB's own release binary", "url grpc://HOST:PORT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			err := tc.cfg.Check()
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
	// And what it takes: a running server with its key, or a server binary to start.
	for _, ok := range []SpiceDBServerConfig{{ServerConfig: kinds.ServerConfig{URL: "grpc://127.0.0.1:50051"}, SpiceDBKey: "k"}, {}} {
		if err := ok.Check(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

// The way to get the server names the directory authzbench looks in, as a path: a shell's
// "$(dirname $(command -v authzbench))" is "." for a bin/authzbench not on PATH, and the
// server built there is not found. A go run binary's directory is gone after the run.
func TestSpiceDBBuildBesideNamesTheDirectory(t *testing.T) {
	for _, tc := range []struct{ beside, want string }{
		{"/home/u/authzbench/bin", "go build -o /home/u/authzbench/bin/ ./cmd/authzbench-spicedb"},
		{"/tmp/go-build1234/b001/exe", "go build -o bin/ ./cmd/authzbench ./cmd/authzbench-spicedb"},
		{"", "go build -o bin/ ./cmd/authzbench ./cmd/authzbench-spicedb"},
	} {
		got := buildBeside(&NoServerError{Beside: tc.beside})
		if !strings.Contains(got, tc.want) || strings.Contains(got, "dirname") {
			t.Errorf("beside %q: got %q, want it to say %q", tc.beside, got, tc.want)
		}
	}
}

// spicedb_key is a secret: its value never reaches the command line a result records, in
// either form of the flag; everything else is left as given.
func TestSpiceDBKeyRedacted(t *testing.T) {
	args := []string{"run", "--target", "spicedb/server", "--spicedb-key", "k1", "--url", "grpc://127.0.0.1:50051", "--spicedb-key=k2", "--name", "--spicedb-key"}
	got := strings.Join(kinds.RedactSecrets(args), " ")
	want := "run --target spicedb/server --spicedb-key REDACTED --url grpc://127.0.0.1:50051 --spicedb-key=REDACTED --name --spicedb-key"
	if got != want {
		t.Errorf("redacted:\n%s\nwant\n%s", got, want)
	}
	if strings.Join(args, " ") == got {
		t.Error("the arguments given were changed")
	}
}
