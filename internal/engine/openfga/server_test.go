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
