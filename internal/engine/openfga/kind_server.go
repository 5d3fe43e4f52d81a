package openfga

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/authzbench/authzbench/internal/datastore"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.Register(kinds.Kind{Name: "openfga/server", Engine: "openfga", Placement: kinds.LaunchedServer, LoadsPolicy: true, Order: 58,
		// The gRPC API is asked by a worker of its own (openfgaGRPCWorker), its answers read
		// from protobuf, not JSON: a mode of its own to verify.
		Variants:  []kinds.Variant{{Label: "grpc", Set: func(c kinds.Config) { c.(*OpenFGAServerConfig).API = "grpc" }}},
		NewConfig: func() kinds.Config { return &OpenFGAServerConfig{} },
		New: func(common kinds.Common, c kinds.Config) kinds.Target {
			cfg := c.(*OpenFGAServerConfig)
			// OpenFGA has no per-request timers to ask for (OPA's ?metrics=true); its own are
			// Prometheus metrics, on a port of their own.
			common.ServerMetricsEvery = 0
			return &openfgaServer{Server: kinds.NewServer(common, Registered, &cfg.ServerConfig), cfg: &cfg.ServerConfig, api: cfg.API, bin: cfg.OpenFGABin,
				keep: cfg.KeepWritten, store: cfg.Settings, consistency: cfg.ConsistencySetting, promise: cfg.Promise(), caches: cfg.CacheSettings}
		}})
}

// OpenFGAServerConfig is openfga/server's settings: a running OpenFGA to measure, or how to
// start `authzbench openfga run`, and which of its APIs to measure.
type OpenFGAServerConfig struct {
	kinds.ServerConfig `yaml:",inline"`
	// API is the API measured: "http" (the default, its HTTP gateway) or "grpc".
	API string `yaml:"api"`
	// OpenFGABin runs this OpenFGA binary's `run` instead of `authzbench openfga run`.
	OpenFGABin string `yaml:"openfga_bin"`
	// KeepWritten leaves the workload's stores in the running OpenFGA a URL names; by default
	// they are deleted when the target stops.
	KeepWritten bool `yaml:"keep_written"`
	// The datastore the server authzbench starts runs over: memory (OpenFGA's default),
	// sqlite or postgres.
	datastore.Settings `yaml:",inline"`
	ConsistencySetting `yaml:",inline"`
	// Its caches, OpenFGA's defaults (all off) unless set.
	CacheSettings `yaml:",inline"`
}

func init() {
	kinds.DeclareOption(kinds.Option{Key: "api", Flag: "openfga-api", Selective: true,
		Help: "{kinds}: the API measured, http (the default: POST /stores/{id}/check) or grpc (OpenFGAService.Check); with --url, the running server's address for that API"})
	kinds.DeclareKeepWritten()
	kinds.DeclareOption(kinds.Option{Key: "openfga_bin", Flag: "openfga-bin", Selective: true, File: true,
		Help: "{kinds}: run this OpenFGA server binary (its run command) instead of the OpenFGA linked in"})
}

// Check refuses an API OpenFGA does not serve, TLS, which openfga/server does not set up for
// the server it starts yet, and an openfga_bin that is not an OpenFGA server binary.
func (c *OpenFGAServerConfig) Check() error {
	errs := []error{c.ServerConfig.CheckRefusing(openfgaRefusesMTLSAuthz), c.ConsistencySetting.check("openfga/server")}
	switch c.API {
	case "", "http", "grpc":
	default:
		errs = append(errs, kinds.NewOptionError("api", func(n func(string) string) string {
			return fmt.Sprintf("%s %q: OpenFGA serves http and grpc", n("api"), c.API)
		}))
	}
	if key := c.TLSServer.ModeKey(); key != "" && key != "mtls_authz" { // mtls_authz has its own reason, above
		errs = append(errs, kinds.NewOptionError(key, func(n func(string) string) string {
			return fmt.Sprintf("%s: openfga/server starts OpenFGA in clear; measure one you run over TLS with %s", n(key), n("url"))
		}))
	}
	if c.URL != "" && c.Settings.Chosen() {
		errs = append(errs, kinds.NewOptionError("datastore", func(n func(string) string) string {
			return fmt.Sprintf("%s chooses the datastore of the OpenFGA authzbench starts; the running one %s names has its own", n("datastore"), n("url"))
		}))
	} else if c.Settings.Chosen() {
		errs = append(errs, c.Settings.Check("openfga/server", datastore.Memory, datastore.SQLite, datastore.Postgres)...)
	}
	if c.URL != "" && c.CacheSettings.Chosen() {
		for _, key := range []string{"openfga_check_query_cache", "openfga_check_iterator_cache", "openfga_cache_controller"} {
			if c.CacheSettings.value(key) != "" || c.CacheSettings.value(key+"_ttl") != "" {
				errs = append(errs, kinds.NewOptionError(key, func(n func(string) string) string {
					return fmt.Sprintf("%s sets a cache of the OpenFGA authzbench starts; the running one %s names has its own settings", n(key), n("url"))
				}))
				break
			}
		}
	} else {
		errs = append(errs, c.CacheSettings.Check()...)
	}
	if c.KeepWritten && c.URL == "" {
		errs = append(errs, kinds.KeepWrittenWithoutURL())
	}
	if c.URL != "" && c.OpenFGABin != "" {
		errs = append(errs, kinds.NewOptionError("openfga_bin", func(n func(string) string) string {
			return n("openfga_bin") + " configures a server authzbench starts; with " + n("url") + " it starts none"
		}))
	} else if c.OpenFGABin != "" {
		// Asked its version now, so that a missing or wrong binary is refused before any load.
		if _, err := BinaryServer(context.Background(), c.OpenFGABin); err != nil {
			errs = append(errs, kinds.NewOptionError("openfga_bin", func(n func(string) string) string { return n("openfga_bin") + " " + err.Error() }))
		}
	}
	if u, err := url.Parse(c.URL); c.API == "grpc" && c.URL != "" && err == nil && u.Scheme != "http" {
		errs = append(errs, kinds.NewOptionError("url", func(n func(string) string) string {
			return fmt.Sprintf("%s %q with %s grpc: want http://host:port, the running server's gRPC address in clear", n("url"), c.URL, n("api"))
		}))
	}
	return errors.Join(errs...)
}

// Probe asks the running OpenFGA a URL names, before any load, whether it takes authzbench's
// requests: one that wants credentials (its authn preshared key or OIDC), which openfga/server
// does not send, refuses the run then, as bad input, rather than at the target's start with an
// empty row. A server that does not answer is left to the run.
func (c *OpenFGAServerConfig) Probe(ctx context.Context) error {
	if c.URL == "" {
		// The database a server authzbench starts will run over, if the user named one: it
		// must answer, hold no other schema, and no OpenFGA store unless overwrite is given.
		return c.Settings.Probe(ctx, Marker)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var code int
	var msg string
	if c.API == "grpc" {
		u, err := url.Parse(c.URL)
		if err != nil {
			return nil
		}
		conn, err := grpc.NewClient(u.Host, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil
		}
		defer conn.Close()
		_, err = openfgav1.NewOpenFGAServiceClient(conn).ListStores(ctx, &openfgav1.ListStoresRequest{PageSize: wrapperspb.Int32(1)})
		switch status.Code(err) {
		case codes.Unauthenticated:
			code = http.StatusUnauthorized
		case codes.PermissionDenied:
			code = http.StatusForbidden
		}
		msg = status.Convert(err).Message()
	} else {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.URL, "/")+"/stores?page_size=1", nil)
		if err != nil {
			return nil
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		code, msg = resp.StatusCode, strings.TrimSpace(string(body))
	}
	if code != http.StatusUnauthorized && code != http.StatusForbidden {
		return nil
	}
	return kinds.NewOptionError("url", func(n func(string) string) string {
		return fmt.Sprintf("OpenFGA at %s %s refuses authzbench's requests (%d %s: %s): openfga/server sends no credentials; measure an OpenFGA that takes requests without them",
			n("url"), c.URL, code, http.StatusText(code), msg)
	})
}

func openfgaRefusesMTLSAuthz(n func(string) string) string {
	return fmt.Sprintf("%s is not supported by openfga/server: OpenFGA has no authorization policy in front of its checks, as OPA's --authorization=basic", n("mtls_authz"))
}

// openfgaServer drives OpenFGA's server: by default `authzbench openfga run` (OpenFGA's server
// package with its default settings, linked in; openfga_bin for OpenFGA's own binary) on free
// loopback ports, its in-memory datastore holding the workload's stores, model and tuples,
// written over its API before the clock; with a URL, a running OpenFGA, into which the same
// stores are written. Its HTTP API (POST /stores/{id}/check) is measured by default, its gRPC
// API (OpenFGAService.Check) with api grpc.
type openfgaServer struct {
	*kinds.Server
	cfg     *kinds.ServerConfig
	api     string
	bin     string // OpenFGA's own binary, instead of authzbench openfga run
	version string // of the server started

	// Over gRPC: the server's address (and as grpc://host:port, what the result records), the
	// prepared requests, and the workers' connections.
	grpcAddr string
	url      string
	checks   []*openfgav1.CheckRequest
	conns    kinds.GRPCConns

	// With a URL, the stores written into the user's server (even those of a failed start),
	// deleted when the target stops unless keep; written says what became of them.
	stores  *Stores
	keep    bool
	written *result.Written

	// The datastore the started server runs over (store, as the settings chose it): the
	// database it was given (db, or a SQLite file in sqliteDir), and what the result records.
	store     datastore.Settings
	db        *datastore.DB
	sqliteDir string
	record    *result.Datastore

	// consistency is what each Check asks (promise what OpenFGA promises under it); loaded the
	// stores the workload was written into, which a run whose world changes writes into.
	consistency ConsistencySetting
	promise     kinds.Consistency
	loaded      *Stores
	// caches are the started server's caches; metricsURL its metrics endpoint, where their
	// counters are read ("" for a running server a URL names).
	caches     CacheSettings
	metricsURL string
	// --operation list-objects, list-users, batch-check (list.go, batch.go): the queries or
	// checks, and the stores they ask.
	lists      listing
	listStores *Stores
}

func (t *openfgaServer) Start(ctx context.Context, w *workload.Workload) error {
	if err := t.lists.prepare(ctx, t.Common().Prepared, t.Common().Operation, w); err != nil {
		return err
	}
	l, err := Load(ctx, t.Common().Prepared, w)
	if err != nil {
		return err
	}
	if t.api == "grpc" {
		return t.startGRPC(ctx, l.Fixture)
	}
	return t.StartHTTP(ctx, t.launch, func(ctx context.Context) ([][]byte, []string, error) {
		client := &http.Client{Timeout: 30 * time.Second}
		defer client.CloseIdleConnections()
		began := time.Now()
		stores, err := WriteFixture(ctx, HTTPAPI(t.URL(), client), l.Fixture)
		t.wrote(stores)
		t.recordLoad(ctx, l.Fixture, time.Since(began), "OpenFGA Write over HTTP, 100 tuples a request (its --max-tuples-per-write)")
		if err != nil {
			return nil, nil, fmt.Errorf("write the workload into OpenFGA at %s: %w", t.URL(), err)
		}
		t.loaded = stores
		bodies := make([][]byte, len(l.Fixture.Assertions))
		paths := make([]string, len(bodies))
		for i, a := range l.Fixture.Assertions {
			req, err := stores.Prepare(a)
			if err != nil {
				return nil, nil, err
			}
			req.Consistency = t.consistency.preference()
			if bodies[i], err = HTTPBody(req); err != nil {
				return nil, nil, err
			}
			paths[i] = "/stores/" + req.GetStoreId() + "/check"
		}
		return bodies, paths, nil
	})
}

// startGRPC starts (or finds) the server, writes the fixture over gRPC and prepares every
// Check request.
func (t *openfgaServer) startGRPC(ctx context.Context, f *Fixture) error {
	if t.cfg.URL != "" {
		u, err := url.Parse(t.cfg.URL)
		if err != nil {
			return err
		}
		t.grpcAddr, t.url = u.Host, "grpc://"+u.Host
	} else if err := t.launch(ctx); err != nil {
		return err
	}
	conn, err := t.dial()
	if err != nil {
		return err
	}
	began := time.Now()
	stores, err := WriteFixture(ctx, GRPCAPI(conn), f)
	t.wrote(stores)
	t.recordLoad(ctx, f, time.Since(began), "OpenFGA Write over gRPC, 100 tuples a request (its --max-tuples-per-write)")
	if err != nil {
		return fmt.Errorf("write the workload into OpenFGA at %s (gRPC): %w", t.grpcAddr, err)
	}
	t.loaded = stores
	t.checks = make([]*openfgav1.CheckRequest, len(f.Assertions))
	for i, a := range f.Assertions {
		if t.checks[i], err = stores.Prepare(a); err != nil {
			return err
		}
		t.checks[i].Consistency = t.consistency.preference()
	}
	return nil
}

// launch starts `authzbench openfga run`, or OpenFGA's own binary's run, on free loopback ports
// (its HTTP API, gRPC API and metrics each their own), its log at the run's level: OpenFGA logs
// every request at info.
func (t *openfgaServer) launch(ctx context.Context) error {
	httpAddr, err := t.cfg.ListenAddr()
	if err != nil {
		return err
	}
	grpcAddr, err := sut.FreeAddr()
	if err != nil {
		return err
	}
	metricsAddr, err := sut.FreeAddr()
	if err != nil {
		return err
	}
	var server ServerCommand
	if t.bin == "" {
		server, err = LinkedServer()
	} else if server, err = BinaryServer(ctx, t.bin); err != nil {
		cause := err
		err = kinds.NewOptionError("openfga_bin", func(n func(string) string) string { return n("openfga_bin") + " " + cause.Error() })
	}
	if err != nil {
		return err
	}
	t.version = server.Version
	args := []string{"--http-addr", httpAddr, "--grpc-addr", grpcAddr,
		"--metrics-addr", metricsAddr, "--log-level", t.Common().ServerLogLevel(), "--playground-enabled=false"}
	dbArgs, env, err := t.openDatastore(ctx)
	if err != nil {
		return err
	}
	args = append(args, t.caches.Args()...)
	cmd := server.Command(append(append(args, dbArgs...), t.cfg.Args...)...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	if err := t.Launch(ctx, "openfga server", httpAddr, cmd); err != nil {
		return err
	}
	t.grpcAddr, t.metricsURL = grpcAddr, "http://"+metricsAddr+"/metrics"
	if t.api == "grpc" {
		t.url = "grpc://" + grpcAddr
	}
	return nil
}

func (t *openfgaServer) dial() (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(t.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("connect to OpenFGA's gRPC API at %s: %w", t.grpcAddr, err)
	}
	t.conns.Add(conn)
	return conn, nil
}

func (t *openfgaServer) Worker() kinds.Decider {
	if t.lists.on() {
		return t.listWorker()
	}
	if t.api != "grpc" {
		return t.HTTPWorker()
	}
	// A connection per worker, as the HTTP API's workers have: dialled before the clock,
	// connected by the first request.
	conn, err := t.dial()
	if err != nil {
		return kinds.FailedDecider(err)
	}
	return &openfgaGRPCWorker{client: openfgav1.NewOpenFGAServiceClient(conn), checks: t.checks, timeout: t.Common().RequestTimeout()}
}

// openfgaGRPCWorker asks OpenFGAService.Check over one gRPC connection.
type openfgaGRPCWorker struct {
	client  openfgav1.OpenFGAServiceClient
	checks  []*openfgav1.CheckRequest
	timeout time.Duration
}

func (w *openfgaGRPCWorker) Decide(ctx context.Context, i int) verify.Outcome {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	resp, err := w.client.Check(ctx, w.checks[i])
	if err != nil {
		// A failed check (a resolution limit, a condition's error): no decision, never a deny.
		return kinds.GRPCCheckFailed(ctx, "openfga grpc check", err)
	}
	return verify.Outcome{Kind: verify.Decided, Allow: resp.GetAllowed()}
}

func (t *openfgaServer) Info() kinds.Info {
	version := t.version
	if version == "" {
		// A running server found at a URL is not asked its version: the one linked in stands.
		version = Version()
	}
	info := t.BaseInfo("openfga", "openfga "+version)
	info.Datastore = t.record
	info.Consistency = t.promise.Record()
	if t.cfg.URL == "" {
		// A running server's caches are its own settings, which its API does not say.
		info.Caches = t.caches.Record()
	}
	if t.written != nil {
		w := *t.written
		info.Written = &w
	}
	if t.api == "grpc" {
		return kinds.OverGRPC(info, t.url)
	}
	return info
}

// CacheCounts reads the started server's cache counters from its metrics (kinds.CacheCounter);
// a running server a URL names is not asked.
func (t *openfgaServer) CacheCounts(ctx context.Context) (map[string]result.CacheCount, error) {
	if t.metricsURL == "" {
		return nil, nil
	}
	return servedCounts(ctx, t.metricsURL)
}

// wrote notes the stores written into a server the user runs; into the one authzbench starts,
// they go with it.
func (t *openfgaServer) wrote(s *Stores) {
	t.listStores = s
	if t.cfg.URL == "" || s == nil || len(s.Stores) == 0 {
		return
	}
	t.stores = s
	t.written = &result.Written{What: "OpenFGA stores " + s.String(), Kept: t.keep}
}

func (t *openfgaServer) Stop(ctx context.Context) error {
	err := t.removeStores(ctx)
	t.conns.CloseAll()
	err = errors.Join(err, t.Server.Stop(ctx))
	// The database after the server that used it.
	err = errors.Join(err, t.db.Close())
	if t.sqliteDir != "" {
		err = errors.Join(err, os.RemoveAll(t.sqliteDir))
		t.sqliteDir = ""
	}
	return err
}

// openDatastore readies the datastore the settings chose for the server to start: a SQLite
// file, or a database on the run's PostgreSQL or the one the URI names, migrated by OpenFGA's
// own migrations. It returns the server's flags for it, and its URI as OpenFGA's variable, so
// that a password stays off the command line the result records.
func (t *openfgaServer) openDatastore(ctx context.Context) (args, env []string, err error) {
	engine := t.store.Engine()
	if engine == datastore.Memory {
		return nil, nil, nil
	}
	cfg := DatastoreConfig{Engine: engine, MaxConns: t.store.MaxConns, MinConns: t.store.MinConns}
	t.record = &result.Datastore{Engine: engine}
	if engine == datastore.SQLite {
		if t.sqliteDir, err = os.MkdirTemp("", "authzbench-openfga-sqlite-"); err != nil {
			return nil, nil, err
		}
		cfg.URI = filepath.Join(t.sqliteDir, "openfga.db")
	} else {
		if t.db, err = t.store.Open(ctx, "openfga_server"); err != nil {
			return nil, nil, err
		}
		cfg.URI, t.record = t.db.URI, &t.db.Record
		t.record.Pool = cfg.Pool()
	}
	if t.record.Migrated, err = cfg.Migrate(ctx); err != nil {
		return nil, nil, err
	}
	maxOpen, minOpen := cfg.pool()
	return []string{"--datastore-engine", engine, "--datastore-max-open-conns", strconv.Itoa(maxOpen), "--datastore-min-open-conns", strconv.Itoa(minOpen)},
		[]string{"OPENFGA_DATASTORE_URI=" + cfg.URI}, nil
}

// recordLoad records the load of the workload into a datastore the settings chose.
func (t *openfgaServer) recordLoad(ctx context.Context, f *Fixture, elapsed time.Duration, bulk string) {
	if !t.store.Chosen() {
		return
	}
	tuples := 0
	for _, set := range f.TupleSets {
		tuples += len(set.Tuples)
	}
	if t.db != nil {
		t.db.Loaded(ctx, tuples, elapsed, bulk)
		return
	}
	if t.record == nil {
		t.record = &result.Datastore{Engine: datastore.Memory}
	}
	t.record.Tuples, t.record.BulkPath, t.record.LoadSeconds = tuples, bulk, elapsed.Seconds()
	if elapsed > 0 {
		t.record.TuplesPerSecond = float64(tuples) / elapsed.Seconds()
	}
	if t.sqliteDir != "" {
		if fi, err := os.Stat(filepath.Join(t.sqliteDir, "openfga.db")); err == nil {
			t.record.SizeBytes = fi.Size()
		}
	}
}

// removeStores deletes the stores the run wrote into the user's OpenFGA, unless asked to keep
// them: every run left a store named authzbench-0 behind, and the server grew by each run's
// tuples.
func (t *openfgaServer) removeStores(ctx context.Context) error {
	if t.stores == nil || t.keep || t.written.Removed {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var api API
	if t.api == "grpc" {
		conn, err := t.dial()
		if err != nil {
			return t.removeFailed(err)
		}
		api = GRPCAPI(conn)
	} else {
		client := &http.Client{Timeout: 30 * time.Second}
		defer client.CloseIdleConnections()
		api = HTTPAPI(t.URL(), client)
	}
	if err := t.stores.Delete(ctx, api); err != nil {
		return t.removeFailed(err)
	}
	t.written.Removed = true
	return nil
}

func (t *openfgaServer) removeFailed(err error) error {
	t.written.RemoveError = err.Error()
	return fmt.Errorf("remove what the run wrote into OpenFGA at %s: %w", t.cfg.URL, err)
}
