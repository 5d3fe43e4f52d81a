package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/authzed/authzed-go/proto/authzed/api/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/sut"
)

var spicedbTestdata = filepath.Join("..", "..", "internal", "engine", "spicedb", "testdata")

// workloads verify runs a validation file in every mode of every engine: SpiceDB's modes check
// each of its assertions (assertCaveated's conditional answers included), and every other mode
// says it has no version of it. An assertion SpiceDB does not hold fails verify in both modes,
// naming its line.
func TestSpiceDBValidationFileVerifies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a SpiceDB server")
	}
	code, stdout, stderr := run(t, "workloads", "verify", "--policy", filepath.Join(spicedbTestdata, "docshare.yaml"))
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
		f := strings.Fields(line)
		rows[f[1]] = strings.Join(f[2:], " ")
	}
	for _, m := range engineModes(t) {
		got, want := rows[m.Label], "0 0 skipped: no "
		if m.Kind.Engine == "spicedb" {
			want = "9 9 ok"
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want %q", m.Label, got, want)
		}
	}

	// dave's check at an hour in office hours, asserted false: SpiceDB allows it.
	data, err := os.ReadFile(filepath.Join(spicedbTestdata, "docshare.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const denied = `'document:plan#view@user:dave with {"hour": 20}'`
	at := strings.Index(string(data), denied)
	if at < 0 {
		t.Fatalf("docshare.yaml has no %s", denied)
	}
	line := strconv.Itoa(strings.Count(string(data[:at]), "\n") + 1)
	wrong := strings.Replace(string(data), denied, `'document:plan#view@user:dave with {"hour": 11}'`, 1)
	path := filepath.Join(t.TempDir(), "wrong.yaml")
	if err := os.WriteFile(path, []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "workloads", "verify", "--target", "spicedb/inproc,spicedb/server", "--policy", path)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, exitFailed, stdout, stderr)
	}
	for _, mode := range []string{"spicedb/inproc", "spicedb/server"} {
		if want := "target " + mode + ": " + path + ":" + line + " expects deny, got allow"; !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// A schema, a relationships file and a JSONL of checks run in both modes, every check verified;
// the result records the server's version and the checks' source; bad files exit 2 before any
// load, naming the file and line.
func TestSpiceDBFilesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a SpiceDB server")
	}
	files := []string{"--policy", filepath.Join(spicedbTestdata, "docshare.zed"), "--data", filepath.Join(spicedbTestdata, "docshare.relationships"),
		"--inputs", filepath.Join(spicedbTestdata, "checks.jsonl")}
	doc, _ := runOK(t, filepath.Join(t.TempDir(), "r.json"), append([]string{"run", "--target", "spicedb/inproc,spicedb/server",
		"--requests", "50", "--warmup", "0", "--workers", "2", "--no-progress"}, files...)...)
	for _, r := range doc.Runs {
		if r.Summary.OK != 50 || r.Summary.Errors != 0 {
			t.Errorf("%s: ok %d errors %d, want 50 and none", r.Target, r.Summary.OK, r.Summary.Errors)
		}
		if !strings.HasPrefix(r.SUT.Version, "spicedb ") {
			t.Errorf("%s: version %q", r.Target, r.SUT.Version)
		}
	}
	if len(doc.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(doc.Runs))
	}

	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badRels := write("bad.relationships", "document:readme#owner@user:carol\ndocument:readme#nosuch@user:carol\n")
	badChecks := write("bad.jsonl", `{"check": "document:readme#view@user:alice", "expect": true}`+"\n"+`{"check": "document:readme#view@user:alice", "expect": "yes"}`+"\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"relationship the schema lacks", []string{"--policy", filepath.Join(spicedbTestdata, "docshare.zed"), "--data", badRels, "--inputs", filepath.Join(spicedbTestdata, "checks.jsonl")},
			badRels + ":2: spicedb refuses relationship document:readme#nosuch@user:carol"},
		{"check line", []string{"--policy", filepath.Join(spicedbTestdata, "docshare.zed"), "--inputs", badChecks}, badChecks + `:2: expect is "yes"`},
		{"validation file with inputs", []string{"--policy", filepath.Join(spicedbTestdata, "docshare.yaml"), "--inputs", badChecks}, "give it alone, without --data or --inputs"},
		{"schema without checks", []string{"--policy", filepath.Join(spicedbTestdata, "docshare.zed")}, "a SpiceDB schema needs --inputs FILE.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			code, _, stderr := run(t, append([]string{"run", "--target", "spicedb/inproc,spicedb/server", "--requests", "10", "--no-progress", "-o", out}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q in\n%s", code, exitUsage, tc.want, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a result was written: something ran")
			}
		})
	}
}

// A run against the user's own SpiceDB (--url) leaves it as it found it, and what it refuses it
// refuses before any load: an empty server gets the workload, which is deleted at the end (so a
// second run finds it empty again, where it was refused for the first run's schema); a server
// with a schema of its own, or a wrong key, is bad input, exit 2 with no result, where it exited
// 1 and wrote an empty row; written over with --spicedb-overwrite, the server's own schema and
// relationships are as they were at the end; --keep-written keeps the workload's, and the
// result says which.
func TestSpiceDBURLLeavesTheServerAsFound(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a SpiceDB server")
	}
	addr, err := sut.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	const key = "authzbench-test-key"
	// SpiceDB's server program, which TestMain put on PATH (alltest.PutOnPath): this test binary.
	server := exec.Command("authzbench-spicedb", "serve", "--grpc-addr", addr, "--grpc-preshared-key", key, "--datastore-engine", "memory",
		"--http-enabled=false", "--metrics-enabled=false", "--telemetry-endpoint=", "--skip-release-check")
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		server.Process.Kill()
		server.Wait()
	})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(bearer(key)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	schemas, perms := v1.NewSchemaServiceClient(conn), v1.NewPermissionsServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// held is the server's schema and its relationships of type document, as strings.
	held := func() (string, []string) {
		t.Helper()
		var schema string
		resp, err := schemas.ReadSchema(ctx, &v1.ReadSchemaRequest{})
		if status.Code(err) != codes.NotFound {
			if err != nil {
				t.Fatal(err)
			}
			schema = resp.GetSchemaText()
		}
		var rels []string
		if schema != "" {
			stream, err := perms.ReadRelationships(ctx, &v1.ReadRelationshipsRequest{Consistency: &v1.Consistency{Requirement: &v1.Consistency_FullyConsistent{FullyConsistent: true}},
				RelationshipFilter: &v1.RelationshipFilter{ResourceType: "document"}})
			if err != nil {
				t.Fatal(err)
			}
			for {
				r, err := stream.Recv()
				if err != nil {
					break
				}
				rels = append(rels, r.GetRelationship().GetResource().GetObjectId()+"#"+r.GetRelationship().GetRelation()+"@"+r.GetRelationship().GetSubject().GetObject().GetObjectId())
			}
		}
		return schema, rels
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		if _, err := schemas.ReadSchema(ctx, &v1.ReadSchemaRequest{}); status.Code(err) == codes.NotFound {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("SpiceDB at %s not ready: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	dir := t.TempDir()
	url := "grpc://" + addr
	files := []string{"--policy", filepath.Join(spicedbTestdata, "docshare.yaml")}
	runOn := func(name string, wantCode int, more ...string) (*result.Document, string) {
		t.Helper()
		out := filepath.Join(dir, name+".json")
		args := append(append([]string{"run", "--target", "spicedb/server", "--url", url, "--requests", "20", "--workers", "1", "--warmup", "0s",
			"--no-progress", "-o", out}, files...), more...)
		code, stdout, stderr := run(t, args...)
		if code != wantCode {
			t.Fatalf("%s: exit %d, want %d\n%s\n%s", name, code, wantCode, stdout, stderr)
		}
		doc, err := result.Read(out)
		if wantCode == exitUsage {
			if err == nil {
				t.Errorf("%s: refused, yet a result was written", name)
			}
			return nil, stderr
		}
		if err != nil {
			t.Fatal(err)
		}
		return doc, stderr
	}

	for _, name := range []string{"first", "second"} {
		doc, _ := runOn(name, 0, "--spicedb-key", key)
		if w := doc.Runs[0].SUT.Written; w == nil || !w.Removed || w.Kept || !strings.Contains(w.What, "docshare.yaml and ") {
			t.Errorf("%s: sut.written %+v; want the schema and relationships named and removed", name, w)
		}
		if schema, rels := held(); schema != "" || len(rels) != 0 {
			t.Fatalf("after the %s run the server holds schema %q and %v; want it empty, as found", name, schema, rels)
		}
	}

	_, stderr := runOn("wrong-key", exitUsage, "--spicedb-key", "wrong")
	if !strings.Contains(stderr, "refuses the key (--spicedb-key or $SPICEDB_GRPC_PRESHARED_KEY)") {
		t.Errorf("wrong key: stderr %s", stderr)
	}

	// The user's own schema and one relationship of theirs.
	const own = "definition user {}\n\ndefinition document {\n\trelation owner: user\n\trelation reader: user\n}"
	if _, err := schemas.WriteSchema(ctx, &v1.WriteSchemaRequest{Schema: own}); err != nil {
		t.Fatal(err)
	}
	mine := &v1.Relationship{Resource: &v1.ObjectReference{ObjectType: "document", ObjectId: "mine"}, Relation: "owner",
		Subject: &v1.SubjectReference{Object: &v1.ObjectReference{ObjectType: "user", ObjectId: "me"}}}
	if _, err := perms.WriteRelationships(ctx, &v1.WriteRelationshipsRequest{Updates: []*v1.RelationshipUpdate{{Operation: v1.RelationshipUpdate_OPERATION_TOUCH, Relationship: mine}}}); err != nil {
		t.Fatal(err)
	}
	schemaBefore, relsBefore := held()

	_, stderr = runOn("a-schema-there", exitUsage, "--spicedb-key", key)
	if !strings.Contains(stderr, "already has a schema") || !strings.Contains(stderr, "--spicedb-overwrite") {
		t.Errorf("a schema there: stderr %s", stderr)
	}
	doc, _ := runOn("overwrite", 0, "--spicedb-key", key, "--spicedb-overwrite")
	if w := doc.Runs[0].SUT.Written; w == nil || !w.Removed || !strings.Contains(w.What, "over the server's own schema") {
		t.Errorf("overwrite: sut.written %+v", w)
	}
	if schema, rels := held(); schema != schemaBefore || strings.Join(rels, " ") != strings.Join(relsBefore, " ") {
		t.Errorf("after a run over the user's schema the server holds %q %v; want %q %v as it was", schema, rels, schemaBefore, relsBefore)
	}

	doc, _ = runOn("kept", 0, "--spicedb-key", key, "--spicedb-overwrite", "--keep-written")
	if w := doc.Runs[0].SUT.Written; w == nil || !w.Kept || w.Removed {
		t.Errorf("kept: sut.written %+v", w)
	}
	if schema, rels := held(); schema == schemaBefore || len(rels) <= len(relsBefore) {
		t.Errorf("with --keep-written the server holds %q %v; want the workload's schema and relationships", schema, rels)
	}
}

// bearer sends SpiceDB's preshared key as its clients do, over a connection in clear.
type bearer string

func (k bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(k)}, nil
}

func (bearer) RequireTransportSecurity() bool { return false }
