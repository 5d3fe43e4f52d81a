package serve

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/authzed/authzed-go/proto/authzed/api/v1"
	"github.com/authzed/grpcutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/authzed/spicedb/pkg/tuple"

	"github.com/authzbench/authzbench/internal/engine/spicedb"
)

// TestMain lets this test binary become SpiceDB's server when reached through a link called
// authzbench-spicedb (serverCommand).
func TestMain(m *testing.M) {
	DispatchIfNamed()
	os.Exit(m.Run())
}

// serverCommand is a link called authzbench-spicedb to this test binary: the command the
// spicedb/server target runs.
func serverCommand(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), Command)
	if err := os.Symlink(os.Args[0], path); err != nil {
		t.Fatal(err)
	}
	return path
}

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
	root, err := rootCommand()
	if err != nil {
		t.Fatal(err)
	}
	serve, _, err := root.Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	for name := range serverDefaults {
		f := serve.Flags().Lookup(name)
		if name == "telemetry-endpoint" {
			continue
		}
		if host, _, err := net.SplitHostPort(f.Value.String()); err != nil || host != "127.0.0.1" {
			t.Errorf("--%s defaults to %q, want a 127.0.0.1 address", name, f.Value.String())
		}
		if f.Changed {
			t.Errorf("--%s is set, not defaulted: it would hide SPICEDB_* variables", name)
		}
	}
	// SpiceDB reports telemetry to Authzed unless its endpoint is empty; traffic stays on loopback.
	if f := serve.Flags().Lookup("telemetry-endpoint"); f == nil || f.Value.String() != "" || f.Changed {
		t.Errorf("--telemetry-endpoint: %v; want an empty default", f)
	}
	// Nor does it ask GitHub for SpiceDB's latest release.
	if f := root.PersistentFlags().Lookup("skip-release-check"); f == nil || f.Value.String() != "true" || f.Changed {
		t.Errorf("--skip-release-check: %v; want a true default", f)
	}
	if err := serve.Flags().Parse([]string{"--grpc-addr", "127.0.0.1:9"}); err != nil {
		t.Fatal(err)
	}
	if got := serve.Flags().Lookup("grpc-addr").Value.String(); got != "127.0.0.1:9" {
		t.Errorf("--grpc-addr given: %q", got)
	}
}

// TestServerSubprocess runs `authzbench-spicedb serve` as the spicedb/server target runs it: SpiceDB's own server, on loopback, over its memory datastore.
func TestServerSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	const key = "authzbench-test-key"
	addrs := freePorts(t, 2)
	grpcAddr, metricsAddr := addrs[0], addrs[1]
	var out bytes.Buffer
	cmd := exec.Command(serverCommand(t), "serve", "--grpc-preshared-key", key, "--datastore-engine", "memory",
		"--grpc-addr", grpcAddr, "--metrics-addr", metricsAddr)
	cmd.Stdout, cmd.Stderr = &out, &out
	// No SPICEDB_* settings of the machine running the tests.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SPICEDB_") {
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

	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpcutil.WithInsecureBearerToken(key))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			break
		}
		select {
		case err := <-exited:
			stopped = true
			t.Fatalf("server exited before it was healthy: %v", err)
		case <-ctx.Done():
			t.Fatalf("server not healthy within 60 s: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}

	f, err := spicedb.LoadValidationFile("../testdata/docshare.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// More relationships than SpiceDB takes in one write: Load must batch them.
	for i := range 2*spicedb.MaxUpdatesPerWrite + 500 {
		f.Relationships = append(f.Relationships, spicedb.Relationship{Rel: tuple.MustParse(fmt.Sprintf("group:eng#member@user:u%d", i)), Origin: "generated"})
	}
	if _, err := spicedb.WriteInto(ctx, conn, f); err != nil {
		t.Fatal(err)
	}
	perms := v1.NewPermissionsServiceClient(conn)
	for _, tc := range []struct {
		check   string
		context map[string]any
		want    v1.CheckPermissionResponse_Permissionship
	}{
		{"document:readme#view@user:alice", nil, v1.CheckPermissionResponse_PERMISSIONSHIP_HAS_PERMISSION},
		{"document:readme#view@user:u2499", nil, v1.CheckPermissionResponse_PERMISSIONSHIP_HAS_PERMISSION},
		{"document:plan#view@user:dave", map[string]any{"hour": 20}, v1.CheckPermissionResponse_PERMISSIONSHIP_NO_PERMISSION},
		{"document:plan#view@user:dave", nil, v1.CheckPermissionResponse_PERMISSIONSHIP_CONDITIONAL_PERMISSION},
	} {
		rel := tuple.MustParse(tc.check)
		var caveatContext *structpb.Struct
		if tc.context != nil {
			if caveatContext, err = structpb.NewStruct(tc.context); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := perms.CheckPermission(ctx, &v1.CheckPermissionRequest{
			Consistency: &v1.Consistency{Requirement: &v1.Consistency_FullyConsistent{FullyConsistent: true}},
			Resource:    &v1.ObjectReference{ObjectType: rel.Resource.ObjectType, ObjectId: rel.Resource.ObjectID},
			Permission:  rel.Resource.Relation,
			Subject:     &v1.SubjectReference{Object: &v1.ObjectReference{ObjectType: rel.Subject.ObjectType, ObjectId: rel.Subject.ObjectID}},
			Context:     caveatContext,
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.check, err)
		}
		if resp.GetPermissionship() != tc.want {
			t.Errorf("%s with %v: %s, want %s", tc.check, tc.context, resp.GetPermissionship(), tc.want)
		}
	}

	// Without the key, SpiceDB refuses.
	bare, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if _, err := v1.NewSchemaServiceClient(bare).ReadSchema(ctx, &v1.ReadSchemaRequest{}); err == nil {
		t.Error("server answered a request without its preshared key")
	}

	// Stopped by PID, as authzbench stops it.
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("server exited on SIGTERM with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("server still running 30 s after SIGTERM")
	}
}
