package spicedb

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	v1 "github.com/authzed/authzed-go/proto/authzed/api/v1"
	"github.com/authzed/spicedb/pkg/tuple"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/authzbench/authzbench/internal/datastore"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.Register(kinds.Kind{Name: "spicedb/server", Engine: Name, Placement: kinds.LaunchedServer, LoadsPolicy: true, Order: 59,
		NewConfig: func() kinds.Config { return &SpiceDBServerConfig{} },
		New: func(common kinds.Common, c kinds.Config) kinds.Target {
			cfg := c.(*SpiceDBServerConfig)
			// SpiceDB has no per-request timers to ask for; its own are Prometheus metrics.
			common.ServerMetricsEvery = 0
			return &spicedbServer{Server: kinds.NewServer(common, Registered, &cfg.ServerConfig), settings: cfg}
		}})
	kinds.DeclareOption(kinds.Option{Key: "spicedb_bin", Flag: "spicedb-bin", Selective: true, File: true,
		Help: "{kinds}: the SpiceDB server binary to start (SpiceDB's own release binary, or authzbench-spicedb); by default authzbench-spicedb beside authzbench, else on PATH"})
	kinds.DeclareOption(kinds.Option{Key: "spicedb_key", Flag: "spicedb-key", Selective: true, Secret: true,
		Help: "{kinds}: the preshared key of the running SpiceDB --url names (default: $" + spicedbKeyEnv + "); left out of the result's command line"})
	kinds.DeclareKeepWritten()
	kinds.DeclareOption(kinds.Option{Key: "spicedb_overwrite", Flag: "spicedb-overwrite", Selective: true,
		Help: "{kinds}: with --url, write the workload into a SpiceDB that already has a schema: its schema is replaced for the run, its relationships stay beside the workload's, and both are as they were at the end (unless --keep-written)"})
}

// spicedbKeyEnv is the variable SpiceDB's own serve reads its preshared key from, and where
// spicedb/server finds a running server's key unless spicedb_key gives it.
const spicedbKeyEnv = "SPICEDB_GRPC_PRESHARED_KEY"

// SpiceDBServerConfig is spicedb/server's settings: a running SpiceDB to measure (url, over
// gRPC in clear, and its key), or which SpiceDB server binary to start.
type SpiceDBServerConfig struct {
	kinds.ServerConfig `yaml:",inline"`
	// SpiceDBBin is the server binary to start; empty finds authzbench-
	SpiceDBBin string `yaml:"spicedb_bin"`
	// SpiceDBKey is the running server's preshared key; empty reads SPICEDB_GRPC_PRESHARED_KEY.
	SpiceDBKey string `yaml:"spicedb_key"`
	// SpiceDBOverwrite lets the workload be written into a running server that has a schema.
	SpiceDBOverwrite bool `yaml:"spicedb_overwrite"`
	// KeepWritten leaves the workload's schema and relationships in the running server; by
	// default the relationships the run added are deleted when it stops, and the schema the
	// server had (none, or its own) is written back.
	KeepWritten bool `yaml:"keep_written"`
	// The datastore the server authzbench starts runs over: memory (SpiceDB's default) or
	// postgres.
	datastore.Settings `yaml:",inline"`
	ConsistencySetting `yaml:",inline"`
	// DispatchCache is on or off for the server authzbench starts; "" leaves SpiceDB's
	// default, on.
	DispatchCache string `yaml:"spicedb_dispatch_cache"`
}

// Check refuses what spicedb/server cannot do (TLS, a URL that is not a gRPC address in
// clear, a key for no running server) and, when it is to start a server, a server binary
// that is missing or is none, saying how to get one: all before any load.
func (c *SpiceDBServerConfig) Check() error {
	errs := append(c.CheckLaunch(), c.checkDispatchCache()...)
	errs = append(errs, c.ConsistencySetting.check("spicedb/server", minimizeLatency, atLeastAsFresh, fullyConsistent))
	if key := cmp.Or(c.TLSServer.ModeKey(), c.TLSClient.ModeKey()); key != "" {
		errs = append(errs, kinds.NewOptionError(key, func(n func(string) string) string {
			return n(key) + ": spicedb/server speaks gRPC in clear, to the SpiceDB it starts and to a running one"
		}))
	}
	if c.URL != "" && c.Settings.Chosen() {
		errs = append(errs, kinds.NewOptionError("datastore", func(n func(string) string) string {
			return fmt.Sprintf("%s chooses the datastore of the SpiceDB authzbench starts; the running one %s names has its own", n("datastore"), n("url"))
		}))
	} else if c.Settings.Chosen() {
		errs = append(errs, c.Settings.Check("spicedb/server", datastore.Memory, datastore.Postgres)...)
	}
	if c.URL != "" {
		if _, err := spicedbAddr(c.URL); err != nil {
			errs = append(errs, kinds.NewOptionError("url", func(n func(string) string) string { return fmt.Sprintf("%s %v", n("url"), err) }))
		}
		if c.SpiceDBBin != "" {
			errs = append(errs, kinds.NewOptionError("spicedb_bin", func(n func(string) string) string {
				return n("spicedb_bin") + " names a server authzbench starts; with " + n("url") + " it starts none"
			}))
		}
		if c.key() == "" {
			errs = append(errs, kinds.NewOptionError("spicedb_key", func(n func(string) string) string {
				return fmt.Sprintf("%s %s: a running SpiceDB takes requests with its preshared key; give it with %s or $%s", n("url"), c.URL, n("spicedb_key"), spicedbKeyEnv)
			}))
		}
		return errors.Join(errs...)
	}
	if c.SpiceDBKey != "" {
		errs = append(errs, kinds.NewOptionError("spicedb_key", func(n func(string) string) string {
			return n("spicedb_key") + " is a running server's key, with " + n("url") + "; the server authzbench starts gets a key of its own"
		}))
	}
	if c.SpiceDBOverwrite {
		errs = append(errs, kinds.NewOptionError("spicedb_overwrite", func(n func(string) string) string {
			return n("spicedb_overwrite") + " is for a running server, with " + n("url") + "; the server authzbench starts is empty"
		}))
	}
	if c.KeepWritten {
		errs = append(errs, kinds.KeepWrittenWithoutURL())
	}
	// Found and asked its version now, so that no server to start is bad input, before any load.
	if _, err := FindServer(context.Background(), c.SpiceDBBin); err != nil {
		errs = append(errs, noSpiceDBServer(err))
	}
	return errors.Join(errs...)
}

// noSpiceDBServer says why there is no server to start, and how to get one.
func noSpiceDBServer(err error) error {
	if errors.Is(err, ErrNoServer) {
		return &kinds.NotInstalledError{Missing: err.Error(), Err: kinds.NewOptionError("spicedb_bin", func(n func(string) string) string {
			return fmt.Sprintf("spicedb/server starts %s (SpiceDB's own server, with loopback defaults), a program of its own: %v. "+
				"%s\n"+
				"or install both: go install github.com/authzbench/authzbench/cmd/...\n"+
				"or give %s PATH to SpiceDB's own release binary, or %s grpc://HOST:PORT for a running SpiceDB",
				ServerProgram, err, buildBeside(err), n("spicedb_bin"), n("url"))
		})}
	}
	return kinds.NewOptionError("spicedb_bin", func(n func(string) string) string { return n("spicedb_bin") + " " + err.Error() })
}

// buildBeside says how to build the server where FindServer looks first, in the directory of
// the authzbench that asked. It names that directory rather than computing it in the shell
// ("$(dirname $(command -v authzbench))" is "." for a bin/authzbench not on PATH); a go run
// binary's directory is temporary, so that one is told to build both into bin/.
func buildBeside(err error) string {
	var none *NoServerError
	if !errors.As(err, &none) || none.Beside == "" || strings.Contains(none.Beside, "go-build") {
		return fmt.Sprintf("Build both into bin/, from authzbench's checkout, and run bin/authzbench:\n  go build -o bin/ ./cmd/authzbench ./cmd/%s", ServerProgram)
	}
	return fmt.Sprintf("Build it beside authzbench, from authzbench's checkout:\n  go build -o %s/ ./cmd/%s", none.Beside, ServerProgram)
}

// key is the running server's preshared key: the setting's, else the environment's.
func (c *SpiceDBServerConfig) key() string {
	if c.SpiceDBKey != "" {
		return c.SpiceDBKey
	}
	return os.Getenv(spicedbKeyEnv)
}

// spicedbAddr is the host:port of grpc://host:port.
func spicedbAddr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "grpc" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return "", fmt.Errorf("%q: want grpc://host:port, the running SpiceDB's gRPC address in clear", raw)
	}
	return u.Host, nil
}

// spicedbServer drives SpiceDB's server over its gRPC API: by default authzbench-spicedb serve
// (spicedb_bin for SpiceDB's own binary) on a free loopback port, over its memory datastore,
// probed on gRPC health until ready and stopped by PID; with a URL, a running SpiceDB. Either
// way the workload's schema and relationships are written into it over the API before the
// clock, and each input is a CheckPermission asked at least as fresh as that write.
type spicedbServer struct {
	*kinds.Server
	settings *SpiceDBServerConfig
	url      string // grpc://host:port of the server measured
	version  string // of the server started
	key      string
	grpcAddr string
	loaded   *Loaded
	checks   []*v1.CheckPermissionRequest

	conns kinds.GRPCConns

	// With a URL, what the run writes into the user's server, undone when the target stops
	// (unless keep_written): the schema it found there ("" for none), written back, and the
	// relationships it adds (those the server did not hold already), deleted. written says
	// what became of them.
	found   string
	added   []*v1.Relationship
	written *result.Written

	// The database the server started runs over (--datastore postgres), and what the result
	// records of it; record is also kept for --datastore memory.
	db     *datastore.DB
	record *result.Datastore

	// fresh, for checks asked at_least_as_fresh, is the consistency naming the last
	// acknowledged write's token (the load's before any): the writer stores it, every check
	// reads it (writes.go).
	fresh *atomic.Pointer[v1.Consistency]
	// versions maps the answers' checked_at to the run's versions, for the server authzbench
	// started (checkedat.go); nil for a running server, whose datastore is its own.
	versions *versions
	// metricsURL is the started server's metrics endpoint, where its dispatch cache's counters
	// are read ("" for a running server a URL names).
	metricsURL string
	// lookups are the list queries of --operation list-objects and list-users (list.go), bulk
	// the batches of --operation batch-check (batch.go).
	lookups *lookups
	bulk    *bulk
}

func (t *spicedbServer) Start(ctx context.Context, w *workload.Workload) error {
	l, err := Load(ctx, t.Common().Prepared, w)
	if err != nil {
		return err
	}
	t.loaded = l
	if t.settings.URL != "" {
		if t.grpcAddr, err = spicedbAddr(t.settings.URL); err != nil {
			return kinds.NewOptionError("url", func(n func(string) string) string { return fmt.Sprintf("%s %v", n("url"), err) })
		}
		t.key, t.url = t.settings.key(), "grpc://"+t.grpcAddr
	} else if err := t.launch(ctx); err != nil {
		return err
	}
	conn, err := t.dial()
	if err != nil {
		return err
	}
	if t.settings.URL != "" {
		found, err := t.settings.readSchema(ctx, conn)
		if err != nil {
			return err
		}
		if err := t.willWrite(ctx, conn, found, l.Fixture); err != nil {
			return err
		}
	}
	began := time.Now()
	var written *v1.ZedToken
	if t.db != nil && !t.settings.Overwrite {
		// An empty database, the run's or the user's: SpiceDB's bulk path, as its users load
		// one. A database written over (--datastore-overwrite) may hold some of the workload's
		// relationships already, which an import refuses: those are touched.
		written, err = ImportInto(ctx, conn, l.Fixture)
	} else {
		written, err = WriteInto(ctx, conn, l.Fixture)
	}
	if err != nil {
		return fmt.Errorf("write the workload into SpiceDB at %s: %w", t.grpcAddr, err)
	}
	t.recordLoad(ctx, len(l.Fixture.Relationships), time.Since(began))
	if t.settings.URL == "" {
		// A token that cannot be read leaves the answers judged by their decisions (the result
		// says how many named their version).
		t.versions, _ = newVersions(revisionKindOf(t.settings.Engine()), written)
	}
	// By default at least as fresh as the write, as SpiceDB's clients ask after one: every
	// check sees the whole workload, and no more recent revision than that is asked for. Asked
	// minimize_latency, the clock waits until SpiceDB's snapshot holds the workload.
	consistency := t.checkConsistency(written)
	if t.settings.Consistency == minimizeLatency {
		if err := awaitSnapshot(ctx, conn, l.Fixture); err != nil {
			return err
		}
	}
	t.checks = make([]*v1.CheckPermissionRequest, len(l.Fixture.Assertions))
	for i, a := range l.Fixture.Assertions {
		if t.checks[i], err = checkRequest(a, consistency); err != nil {
			return err
		}
	}
	return t.startLookups(w)
}

// checkRequest is the CheckPermission asking a.
func checkRequest(a Assertion, consistency *v1.Consistency) (*v1.CheckPermissionRequest, error) {
	req := &v1.CheckPermissionRequest{
		Consistency: consistency,
		Resource:    &v1.ObjectReference{ObjectType: a.Resource.ObjectType, ObjectId: a.Resource.ObjectID},
		Permission:  a.Resource.Relation,
		Subject:     &v1.SubjectReference{Object: &v1.ObjectReference{ObjectType: a.Subject.ObjectType, ObjectId: a.Subject.ObjectID}},
	}
	if r := a.Subject.Relation; r != "" && r != "..." {
		req.Subject.OptionalRelation = r
	}
	if a.Context != nil {
		ctx, err := structpb.NewStruct(a.Context)
		if err != nil {
			return nil, fmt.Errorf("%s: caveat context: %w", a.Origin, err)
		}
		req.Context = ctx
	}
	return req, nil
}

// readSchema reads the running server's schema ("" when it has none), refusing a key it does
// not take, and a schema unless spicedb_overwrite says to write over it: writing the workload
// would replace it, and its relationships could change the workload's decisions. A server that
// does not answer is Unreachable.
func (c *SpiceDBServerConfig) readSchema(ctx context.Context, conn grpc.ClientConnInterface) (string, error) {
	resp, err := v1.NewSchemaServiceClient(conn).ReadSchema(ctx, &v1.ReadSchemaRequest{})
	switch {
	case status.Code(err) == codes.NotFound:
		return "", nil // no schema written yet
	case status.Code(err) == codes.Unauthenticated || status.Code(err) == codes.PermissionDenied:
		return "", kinds.NewOptionError("spicedb_key", func(n func(string) string) string {
			return fmt.Sprintf("SpiceDB at %s refuses the key (%s or $%s): %s", n("url"), n("spicedb_key"), spicedbKeyEnv, status.Convert(err).Message())
		})
	case err != nil:
		return "", kinds.Unreachable(kinds.NewOptionError("url", func(n func(string) string) string {
			return fmt.Sprintf("cannot reach SpiceDB at %s %s: %s", n("url"), c.URL, status.Convert(err).Message())
		}), err)
	case strings.TrimSpace(resp.GetSchemaText()) != "" && !c.SpiceDBOverwrite:
		return "", kinds.NewOptionError("spicedb_overwrite", func(n func(string) string) string {
			return fmt.Sprintf("SpiceDB at %s %s already has a schema, which writing the workload would replace (and its relationships could change the decisions): "+
				"point %s at an empty SpiceDB, or give %s", n("url"), c.URL, n("url"), n("spicedb_overwrite"))
		})
	}
	return resp.GetSchemaText(), nil
}

// Probe asks the running SpiceDB a URL names, before any load, whether it takes the run: a key
// it refuses, or a schema it has already, is bad input then, said before anything is measured,
// where found at the target's start it failed the run and wrote an empty row. A server that
// does not answer is left to the run, which reports it as it does today.
func (c *SpiceDBServerConfig) Probe(ctx context.Context) error {
	if c.URL == "" {
		// The database a server authzbench starts will run over, if the user named one: it
		// must answer, hold no other schema, and no SpiceDB store unless overwrite is given.
		return c.Settings.Probe(ctx, Marker)
	}
	addr, err := spicedbAddr(c.URL)
	if c.URL == "" || err != nil {
		return nil // nothing to ask, or Check's to refuse
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(presharedKey(c.key())))
	if err != nil {
		return nil
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = c.readSchema(ctx, conn)
	var option *kinds.OptionError
	if errors.As(err, &option) && !kinds.IsUnreachable(err) {
		return err
	}
	return nil
}

// willWrite notes, before the workload is written into the user's server, what must be undone
// at the end: the schema found there, and which of the workload's relationships the server did
// not hold already (a server written over, spicedb_overwrite, may share some).
func (t *spicedbServer) willWrite(ctx context.Context, conn grpc.ClientConnInterface, found string, f *Fixture) error {
	held := map[string]bool{}
	if strings.TrimSpace(found) != "" {
		var err error
		if held, err = heldAlready(ctx, conn, f); err != nil {
			return fmt.Errorf("read what SpiceDB at %s holds of the workload's relationships: %w", t.grpcAddr, err)
		}
	}
	t.found, t.added = found, nil
	for _, r := range f.Relationships {
		rel := tuple.ToV1Relationship(r.Rel)
		if !held[tuple.V1StringRelationshipWithoutCaveatOrExpiration(rel)] {
			t.added = append(t.added, rel)
		}
	}
	what := fmt.Sprintf("SpiceDB schema of %s and %d relationships", f.SchemaFile, len(t.added))
	if strings.TrimSpace(found) != "" {
		what += " (over the server's own schema, written back at the end)"
	}
	t.written = &result.Written{What: what, Kept: t.settings.KeepWritten}
	return nil
}

// heldAlready are the relationships of f's resource types the server holds, by their string
// without caveat: written again by the run, they are the user's and stay.
func heldAlready(ctx context.Context, conn grpc.ClientConnInterface, f *Fixture) (map[string]bool, error) {
	held := map[string]bool{}
	types := map[string]bool{}
	for _, r := range f.Relationships {
		types[r.Rel.Resource.ObjectType] = true
	}
	perms := v1.NewPermissionsServiceClient(conn)
	for typ := range types {
		stream, err := perms.ReadRelationships(ctx, &v1.ReadRelationshipsRequest{
			Consistency:        &v1.Consistency{Requirement: &v1.Consistency_FullyConsistent{FullyConsistent: true}},
			RelationshipFilter: &v1.RelationshipFilter{ResourceType: typ}})
		if err != nil {
			return nil, err
		}
		for {
			resp, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if status.Code(err) == codes.FailedPrecondition || status.Code(err) == codes.NotFound {
				break // a type the server's schema does not define: it holds none
			}
			if err != nil {
				return nil, status.Error(status.Code(err), status.Convert(err).Message())
			}
			held[tuple.V1StringRelationshipWithoutCaveatOrExpiration(resp.GetRelationship())] = true
		}
	}
	return held, nil
}

// undoWrite deletes the relationships the run added to the user's server and writes back the
// schema it found there, unless asked to keep them: a run's schema and relationships were left
// in the user's SpiceDB, and the next run was refused for the schema it found.
func (t *spicedbServer) undoWrite(ctx context.Context) error {
	if t.written == nil || t.written.Kept || t.written.Removed {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	conn, err := t.dial()
	if err != nil {
		return t.undoFailed(err)
	}
	perms := v1.NewPermissionsServiceClient(conn)
	for batch := range slices.Chunk(t.added, MaxUpdatesPerWrite) {
		updates := make([]*v1.RelationshipUpdate, len(batch))
		for i, r := range batch {
			updates[i] = &v1.RelationshipUpdate{Operation: v1.RelationshipUpdate_OPERATION_DELETE, Relationship: r}
		}
		if _, err := perms.WriteRelationships(ctx, &v1.WriteRelationshipsRequest{Updates: updates}); err != nil {
			return t.undoFailed(fmt.Errorf("delete relationships: %s", status.Convert(err).Message()))
		}
	}
	if _, err := v1.NewSchemaServiceClient(conn).WriteSchema(ctx, &v1.WriteSchemaRequest{Schema: t.found}); err != nil {
		return t.undoFailed(fmt.Errorf("write back the schema it had: %s", status.Convert(err).Message()))
	}
	t.written.Removed = true
	return nil
}

func (t *spicedbServer) undoFailed(err error) error {
	t.written.RemoveError = err.Error()
	return fmt.Errorf("remove what the run wrote into SpiceDB at %s: %w", t.settings.URL, err)
}

// launch starts the SpiceDB server binary's serve on free loopback ports, over its memory
// datastore, with a key of its own for this run, given in its environment rather than on the
// command line a result records.
func (t *spicedbServer) launch(ctx context.Context) error {
	server, err := FindServer(ctx, t.settings.SpiceDBBin)
	if err != nil {
		return noSpiceDBServer(err)
	}
	t.version = server.Version
	grpcAddr, err := t.settings.ListenAddr()
	if err != nil {
		return err
	}
	metricsAddr, err := sut.FreeAddr()
	if err != nil {
		return err
	}
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	t.key = hex.EncodeToString(secret)
	// Every address and setting that would reach beyond loopback is given, so that SpiceDB's own
	// binary, whose defaults listen on every interface and report telemetry, stays on it too.
	engine, env := "memory", []string{spicedbKeyEnv + "=" + t.key}
	if t.settings.Engine() == datastore.Postgres {
		if t.db, err = t.settings.Settings.Open(ctx, "spicedb_server"); err != nil {
			return err
		}
		t.record = &t.db.Record
		t.record.Pool = poolString(t.settings.Settings)
		if t.record.Migrated, err = migrate(ctx, server, t.db.URI); err != nil {
			return err
		}
		engine, env = datastore.Postgres, append(env, datastoreURIEnv+"="+t.db.URI)
	}
	args := []string{"--datastore-engine", engine, "--grpc-addr", grpcAddr, "--http-enabled=false",
		"--metrics-addr", metricsAddr, "--dispatch-cluster-enabled=false", "--telemetry-endpoint=", "--skip-release-check",
		"--log-level", t.Common().ServerLogLevel()}
	if engine == datastore.Postgres {
		args = append(args, poolArgs(t.settings.Settings)...)
	}
	if v := t.settings.DispatchCache; v != "" {
		args = append(args, fmt.Sprintf("--dispatch-cache-enabled=%t", v == "on"))
	}
	cmd := server.Command(append(args, t.settings.Args...)...)
	cmd.Env = append(os.Environ(), env...)
	if err := t.Launch(ctx, "spicedb server", grpcAddr, cmd); err != nil {
		return err
	}
	t.grpcAddr, t.url, t.metricsURL = grpcAddr, "grpc://"+grpcAddr, "http://"+metricsAddr+"/metrics"
	return nil
}

// CacheCounts reads the started server's dispatch cache counters from its metrics
// (kinds.CacheCounter); a running server a URL names is not asked.
func (t *spicedbServer) CacheCounts(ctx context.Context) (map[string]result.CacheCount, error) {
	if t.metricsURL == "" {
		return nil, nil
	}
	return servedCounts(ctx, t.metricsURL)
}

func (t *spicedbServer) dial() (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(t.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(presharedKey(t.key)))
	if err != nil {
		return nil, fmt.Errorf("connect to SpiceDB's gRPC API at %s: %w", t.grpcAddr, err)
	}
	t.conns.Add(conn)
	return conn, nil
}

// presharedKey sends SpiceDB's preshared key as its clients do, a bearer token, over a
// connection in clear (loopback).
type presharedKey string

func (k presharedKey) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(k)}, nil
}

func (presharedKey) RequireTransportSecurity() bool { return false }

// Worker is a connection of its own, dialled before the clock and connected by the first
// request, as the other servers' workers have.
func (t *spicedbServer) Worker() kinds.Decider {
	if t.lookups != nil {
		return t.lookupWorker()
	}
	if t.bulk != nil {
		return t.bulkWorker()
	}
	conn, err := t.dial()
	if err != nil {
		return kinds.FailedDecider(err)
	}
	return &spicedbGRPCWorker{client: v1.NewPermissionsServiceClient(conn), checks: t.checks,
		assertions: t.loaded.Fixture.Assertions, timeout: t.Common().RequestTimeout(), fresh: t.fresh, versions: t.versions}
}

// spicedbGRPCWorker asks PermissionsService.CheckPermission over one gRPC connection.
type spicedbGRPCWorker struct {
	client     v1.PermissionsServiceClient
	checks     []*v1.CheckPermissionRequest
	assertions []Assertion
	timeout    time.Duration
	// fresh, when checks ask at_least_as_fresh, names the last acknowledged write's token: each
	// check is the prepared one with it, one allocation of the request's shell.
	fresh *atomic.Pointer[v1.Consistency]
	// versions, in a run whose world changes, names each answer's version by its checked_at.
	versions *versions
	checked  tokenCache
}

func (w *spicedbGRPCWorker) Decide(ctx context.Context, i int) verify.Outcome {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	req := w.checks[i]
	if w.fresh != nil {
		req = &v1.CheckPermissionRequest{Consistency: w.fresh.Load(), Resource: req.Resource, Permission: req.Permission,
			Subject: req.Subject, Context: req.Context}
	}
	resp, err := w.client.CheckPermission(ctx, req)
	if err != nil {
		// A failed check (a depth limit, a caveat's error): no decision, never a deny.
		return kinds.GRPCCheckFailed(ctx, "spicedb check", err)
	}
	var allowed bool
	switch p := resp.GetPermissionship(); p {
	case v1.CheckPermissionResponse_PERMISSIONSHIP_HAS_PERMISSION:
		allowed = true
	case v1.CheckPermissionResponse_PERMISSIONSHIP_NO_PERMISSION:
	case v1.CheckPermissionResponse_PERMISSIONSHIP_CONDITIONAL_PERMISSION:
		err = &ConditionalError{Missing: resp.GetPartialCaveatInfo().GetMissingRequiredContext()}
	default:
		return verify.Outcome{Kind: verify.Malformed, Err: fmt.Errorf("spicedb check: permissionship %s", p)}
	}
	if err == nil && w.assertions[i].Expect != ExpectConditional {
		out := verify.Outcome{Kind: verify.Decided, Allow: allowed}
		if v, ok := w.versions.version(&w.checked, resp.GetCheckedAt()); ok {
			out.Versioned, out.Version = true, int64(v)
		}
		return out
	}
	return Outcome(w.assertions[i], allowed, err)
}

func (t *spicedbServer) Info() kinds.Info {
	version := t.version
	if version == "" {
		// A running server found at a URL is not asked its version (SpiceDB's API has no
		// call for it): the one linked in stands, as for OpenFGA.
		version = Version()
	}
	info := t.BaseInfo(Name, "spicedb "+version)
	info.Datastore = t.record
	info.Consistency = t.settings.Promise().Record()
	if t.settings.URL == "" {
		// A running server's caches are its own settings, which its API does not say.
		info.Caches = dispatchCacheRecord(t.settings.DispatchCache)
	}
	if t.written != nil {
		w := *t.written
		info.Written = &w
	}
	return kinds.OverGRPC(info, t.url)
}

func (t *spicedbServer) Stop(ctx context.Context) error {
	err := t.undoWrite(ctx)
	t.conns.CloseAll()
	err = errors.Join(err, t.Server.Stop(ctx))
	// The database after the server that used it.
	return errors.Join(err, t.db.Close())
}

// recordLoad records the load of the workload, when a datastore was chosen.
func (t *spicedbServer) recordLoad(ctx context.Context, relationships int, elapsed time.Duration) {
	switch {
	case t.db != nil && t.settings.Overwrite:
		t.db.Loaded(ctx, relationships, elapsed, fmt.Sprintf("SpiceDB WriteRelationships (touch), %d updates a request", MaxUpdatesPerWrite))
	case t.db != nil:
		t.db.Loaded(ctx, relationships, elapsed, fmt.Sprintf("SpiceDB ImportBulkRelationships, one stream of %d-relationship messages", importBatch))
	case t.settings.Settings.Chosen():
		t.record = &result.Datastore{Engine: datastore.Memory, Tuples: relationships, LoadSeconds: elapsed.Seconds(),
			BulkPath: fmt.Sprintf("SpiceDB WriteRelationships, %d updates a request", MaxUpdatesPerWrite)}
		if elapsed > 0 {
			t.record.TuplesPerSecond = float64(relationships) / elapsed.Seconds()
		}
	}
}
