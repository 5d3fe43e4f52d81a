package openfga

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, l.Addr().String())
		defer l.Close()
	}
	return addrs
}

// Left to itself, the server listens on loopback only, and the user's flags still win.
func TestServerListensOnLoopbackByDefault(t *testing.T) {
	cmd, err := runCommand()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"http-addr", "grpc-addr", "metrics-addr"} {
		f := cmd.Flags().Lookup(name)
		if host, _, err := net.SplitHostPort(f.Value.String()); err != nil || host != "127.0.0.1" {
			t.Errorf("--%s defaults to %q, want a 127.0.0.1 address", name, f.Value.String())
		}
		if f.Changed {
			t.Errorf("--%s is set, not defaulted: it would hide OPENFGA_* variables and config.yaml", name)
		}
	}
	if err := cmd.Flags().Parse([]string{"--http-addr", "127.0.0.1:9"}); err != nil {
		t.Fatal(err)
	}
	if got := cmd.Flags().Lookup("http-addr").Value.String(); got != "127.0.0.1:9" {
		t.Errorf("--http-addr given: %q", got)
	}
}

// TestServerSubprocess runs `<test binary> openfga run` as authzbench will run
// `authzbench openfga run`: OpenFGA's own server, on loopback, over its memory datastore.
func TestServerSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	addrs := freePorts(t, 3)
	httpAddr, grpcAddr, metricsAddr := addrs[0], addrs[1], addrs[2]
	var out bytes.Buffer
	cmd := exec.Command(os.Args[0], Arg, "run", "--http-addr", httpAddr, "--grpc-addr", grpcAddr, "--metrics-addr", metricsAddr)
	cmd.Stdout, cmd.Stderr = &out, &out
	// No OPENFGA_* settings of the machine running the tests.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENFGA_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("server output:\n%s", out.String())
		}
	}()

	base := "http://" + httpAddr
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), "SERVING") {
				break
			}
		}
		select {
		case err := <-exited:
			stopped = true
			t.Fatalf("server exited before it was healthy: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no healthy /healthz on %s in 30s: %v", httpAddr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Its gRPC API answers on its own port: the health service OpenFGA registers.
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("gRPC health on %s: %v %v", grpcAddr, h.GetStatus(), err)
	}

	// The defaults authzbench sets: metrics on the loopback port given, no playground.
	if resp, err := client.Get("http://" + metricsAddr + "/metrics"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("metrics on %s: %v", metricsAddr, err)
	} else {
		resp.Body.Close()
	}
	if strings.Contains(out.String(), "starting openfga playground") {
		t.Errorf("the playground started; OpenFGA's default is off")
	}
	if !strings.Contains(out.String(), "using 'memory' storage engine") {
		t.Errorf("not OpenFGA's memory datastore")
	}

	post := func(path string, body any, into any) {
		t.Helper()
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Post(base+path, "application/json", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		reply, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %s: %s", path, resp.Status, reply)
		}
		if into != nil {
			if err := json.Unmarshal(reply, into); err != nil {
				t.Fatalf("POST %s: %v: %s", path, err, reply)
			}
		}
	}

	var store struct {
		ID string `json:"id"`
	}
	post("/stores", map[string]string{"name": "authzbench-test"}, &store)
	model, err := LoadModel("testdata/model.fga")
	if err != nil {
		t.Fatal(err)
	}
	modelJSON, err := protojson.Marshal(model)
	if err != nil {
		t.Fatal(err)
	}
	var written struct {
		ID string `json:"authorization_model_id"`
	}
	post("/stores/"+store.ID+"/authorization-models", json.RawMessage(modelJSON), &written)
	tuples, err := LoadTuples("testdata/tuples.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var keys []json.RawMessage
	for _, tu := range tuples {
		k, err := protojson.Marshal(tu.Key)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	post("/stores/"+store.ID+"/write", map[string]any{"authorization_model_id": written.ID, "writes": map[string]any{"tuple_keys": keys}}, nil)

	for _, c := range []struct {
		user string
		want bool
	}{{"user:anne", true}, {"user:hank", false}} {
		var decision struct {
			Allowed *bool `json:"allowed"`
		}
		post("/stores/"+store.ID+"/check", map[string]any{
			"authorization_model_id": written.ID,
			"tuple_key":              map[string]string{"user": c.user, "relation": "viewer", "object": "document:roadmap"},
		}, &decision)
		if decision.Allowed == nil {
			t.Errorf("check %s viewer document:roadmap over HTTP: no decision", c.user)
		} else if *decision.Allowed != c.want {
			t.Errorf("check %s viewer document:roadmap over HTTP: allowed %v, want %v", c.user, *decision.Allowed, c.want)
		}
	}

	// Its metrics count what it served: OpenFGA's own (pkg/server's) and, from the gRPC
	// interceptor chain, the two checks the HTTP gateway passed on to the gRPC server.
	resp, err := client.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`openfga_check_result_count{allowed="true"} 1`,
		`openfga_check_result_count{allowed="false"} 1`,
		`grpc_server_handled_total{grpc_code="OK",grpc_method="Check",grpc_service="openfga.v1.OpenFGAService",grpc_type="unary"} 2`,
	} {
		if !strings.Contains(string(metrics), want+"\n") {
			t.Errorf("metrics on %s lack %s", metricsAddr, want)
		}
	}

	// Stopped by its PID, as a target stops it; OpenFGA shuts down gracefully on SIGTERM.
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("server exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("server still running 20s after SIGTERM")
	}
}

// runBounded runs `openfga` with args and environ in this process; a server it starts by
// mistake stops after a few seconds, so a test of a refusal fails rather than hangs.
func runBounded(t *testing.T, environ []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code = execute(ctx, args, &out, &errb, environ)
	return code, out.String(), errb.String()
}

// What the server does not serve is refused before it starts, in one line that names the flag
// or the variable, with exit 2; OPENFGA_* variables are read for the flags it has.
func TestRunRefusesWhatItDoesNotServe(t *testing.T) {
	loopback := []string{"run", "--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--log-level", "error"}
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want []string
	}{
		{name: "OpenFGA's authentication", args: []string{"--authn-method", "preshared"},
			want: []string{"unknown flag: --authn-method", "run OpenFGA's own server binary", "--openfga-bin PATH", "--url"}},
		{name: "OpenFGA's TLS", args: []string{"--grpc-tls-enabled"}, want: []string{"unknown flag: --grpc-tls-enabled", "--openfga-bin"}},
		{name: "another datastore", args: []string{"--datastore-engine", "mysql"},
			want: []string{"--datastore-engine mysql: authzbench openfga run serves OpenFGA's memory, postgres and sqlite datastores", "--openfga-bin"}},
		{name: "another datastore, from the environment", env: []string{"OPENFGA_DATASTORE_ENGINE=mysql"},
			want: []string{"OPENFGA_DATASTORE_ENGINE=mysql: authzbench openfga run serves OpenFGA's memory, postgres and sqlite datastores"}},
		{name: "postgres without its URI", args: []string{"--datastore-engine", "postgres"},
			want: []string{"--datastore-engine postgres: the postgres datastore needs --datastore-uri"}},
		{name: "memory with a URI, from the environment", env: []string{"OPENFGA_DATASTORE_URI=postgres://db"},
			want: []string{"OPENFGA_DATASTORE_URI=postgres://db: the memory datastore takes no URI"}},
		{name: "a setting it does not take, from the environment", env: []string{"HOME=/x", "OPENFGA_AUTHN_METHOD=preshared"},
			want: []string{"OPENFGA_AUTHN_METHOD is set in the environment, and authzbench openfga run takes no such setting: unset it", "--openfga-bin"}},
		{name: "the playground", args: []string{"--playground-enabled"}, want: []string{"--playground-enabled: authzbench openfga run has no playground"}},
		{name: "a log level OpenFGA has not", args: []string{"--log-level", "verbose"},
			want: []string{"--log-level verbose: want one of none, debug, info, warn, error, panic, fatal"}},
		{name: "a log format from the environment", env: []string{"OPENFGA_LOG_FORMAT=xml"},
			want: []string{"OPENFGA_LOG_FORMAT=xml: want one of text, json"}},
		{name: "a number that is not one, from the environment", env: []string{"OPENFGA_RESOLVE_NODE_LIMIT=deep"},
			want: []string{"OPENFGA_RESOLVE_NODE_LIMIT=deep (--resolve-node-limit)"}},
		{name: "throttling OpenFGA's own check refuses",
			args: []string{"--check-dispatch-throttling-enabled", "--check-dispatch-throttling-threshold", "200", "--check-dispatch-throttling-max-threshold", "100"},
			want: []string{"OpenFGA's check of the settings:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runBounded(t, tc.env, append(loopback, tc.args...)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d\nstderr %s", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 {
				t.Errorf("%d lines on stderr, want the error alone:\n%s", lines, stderr)
			}
		})
	}
}

// A variable sets the flag it names, as OpenFGA's run reads it, and a flag given wins over it.
func TestRunReadsOpenFGAVariables(t *testing.T) {
	cmd := newRunCommand(nil)
	if err := cmd.Flags().Parse([]string{"--resolve-node-limit", "30"}); err != nil {
		t.Fatal(err)
	}
	fromEnv, err := applyEnvironment(cmd.Flags(), []string{"OPENFGA_CHECK_QUERY_CACHE_ENABLED=true", "OPENFGA_RESOLVE_NODE_LIMIT=50", "PATH=/bin"})
	if err != nil {
		t.Fatal(err)
	}
	for flag, want := range map[string]string{"check-query-cache-enabled": "true", "resolve-node-limit": "30", "check-query-cache-ttl": "10s"} {
		if got := cmd.Flags().Lookup(flag).Value.String(); got != want {
			t.Errorf("--%s is %q, want %q", flag, got, want)
		}
	}
	if got := fromEnv["check-query-cache-enabled"]; got != "OPENFGA_CHECK_QUERY_CACHE_ENABLED=true" {
		t.Errorf("the variable read is recorded as %q", got)
	}
	if _, ok := fromEnv["resolve-node-limit"]; ok {
		t.Errorf("OPENFGA_RESOLVE_NODE_LIMIT recorded as read, though the flag was given")
	}
}

// A port in use is one error line naming the flag, exit 1, not a goroutine dump.
func TestRunPortInUseIsOneLine(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for _, flag := range []string{"--http-addr", "--grpc-addr", "--metrics-addr"} {
		t.Run(flag, func(t *testing.T) {
			args := map[string]string{"--http-addr": "127.0.0.1:0", "--grpc-addr": "127.0.0.1:0", "--metrics-addr": "127.0.0.1:0"}
			args[flag] = held.Addr().String()
			code, _, stderr := runBounded(t, nil, "run", "--http-addr", args["--http-addr"], "--grpc-addr", args["--grpc-addr"],
				"--metrics-addr", args["--metrics-addr"], "--log-level", "error")
			if code != exitFailed || !strings.Contains(stderr, "("+flag+")") || !strings.Contains(stderr, "address already in use") {
				t.Errorf("exit %d, want %d and an error naming %s\nstderr %s", code, exitFailed, flag, stderr)
			}
			if strings.Contains(stderr, "goroutine") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("want one line:\n%s", stderr)
			}
		})
	}
}

// `openfga version` says the version linked in as OpenFGA's own version command says its own,
// so that one reader takes both.
func TestVersionReadsAsOpenFGAs(t *testing.T) {
	code, stdout, stderr := runBounded(t, nil, "version")
	if v, ok := versionIn(stdout); code != 0 || !ok || v != Version() {
		t.Errorf("exit %d, version %q %t, want %q\nstdout %s\nstderr %s", code, v, ok, Version(), stdout, stderr)
	}
	// OpenFGA v1.8's binary, through Go's log package.
	if v, ok := versionIn("2025/01/02 10:00:00 OpenFGA version `v1.8.1` build from `4e0b4b2` on `2024-12-17T16:21:34Z` \n"); !ok || v != "v1.8.1" {
		t.Errorf("OpenFGA's own line read as %q %t", v, ok)
	}
}
