package openfga

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openfga/openfga/pkg/encoder"
	"github.com/openfga/openfga/pkg/logger"
	"github.com/openfga/openfga/pkg/server"
	serverconfig "github.com/openfga/openfga/pkg/server/config"
	"github.com/openfga/openfga/pkg/storage"
	"github.com/openfga/openfga/pkg/storage/memory"
	"github.com/openfga/openfga/pkg/storage/migrate"
	"github.com/openfga/openfga/pkg/storage/postgres"
	"github.com/openfga/openfga/pkg/storage/sqlcommon"
	"github.com/openfga/openfga/pkg/storage/sqlite"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/authzbench/authzbench/internal/datastore"
	"github.com/authzbench/authzbench/internal/result"
)

// Marker is how OpenFGA's schema is told apart in a PostgreSQL database: goose's version table,
// which its migrations keep, and the tables that hold its stores.
var Marker = datastore.Marker{Engine: "OpenFGA", VersionTable: "goose_db_version", StoreTables: []string{"store", "tuple"}}

// MetricsPrefix is put before the names of the metrics OpenFGA's SQL datastores register in
// Prometheus's default registry (pgxpool_*, go_sql_*): SpiceDB's Postgres datastore registers
// pgxpool_* there too, with other labels, and the default registry refuses a name registered
// twice with different labels, so the second engine of a process failed to start. Prefixed,
// each engine's pool metrics stay readable under names of their own (openfga_pgxpool_*).
const MetricsPrefix = "openfga_"

// MetricsLabel is the label that tells apart the pools of OpenFGA datastores open at once in one
// process (two openfga/inproc targets of a scenario over PostgreSQL, with different pools):
// OpenFGA labels each pool db_name="openfga" alone, and the registry refuses the same metric
// with the same labels twice. Its value is the datastore's database and a number of its own.
const MetricsLabel = "authzbench_datastore"

// registering serializes the swaps of prometheus.DefaultRegisterer that prefix and label
// OpenFGA's datastore metrics: OpenFGA registers and unregisters through that global.
var (
	registering sync.Mutex
	opened      int
)

// withMetricsAs runs f with Prometheus's default registerer prefixing every name with
// MetricsPrefix and labelling every metric MetricsLabel=label: OpenFGA's datastore
// constructors and Close (whose Unregister must go through the same wrapper to find what was
// registered) call prometheus.Register and Unregister.
func withMetricsAs(label string, f func()) {
	registering.Lock()
	defer registering.Unlock()
	saved := prometheus.DefaultRegisterer
	prometheus.DefaultRegisterer = prometheus.WrapRegistererWith(prometheus.Labels{MetricsLabel: label},
		prometheus.WrapRegistererWithPrefix(MetricsPrefix, saved))
	defer func() { prometheus.DefaultRegisterer = saved }()
	f()
}

// metricsLabel is a new datastore's MetricsLabel value: its database, and a number no other
// datastore of the process has.
func metricsLabel(uri string) string {
	registering.Lock()
	defer registering.Unlock()
	opened++
	name := filepath.Base(uri)
	if u, err := url.Parse(uri); err == nil && u.Scheme != "" {
		name = strings.TrimPrefix(u.Path, "/")
	}
	return fmt.Sprintf("%s#%d", name, opened)
}

// DatastoreConfig is an OpenFGA datastore to open: memory (the zero value), sqlite over the
// file URI names, or postgres over the database it names, with its pool.
type DatastoreConfig struct {
	Engine             string // memory, sqlite, postgres
	URI                string
	MaxConns, MinConns int // 0: OpenFGA's defaults
}

// Pool says the connection pool as OpenFGA is configured with it, its defaults filled in.
func (c DatastoreConfig) Pool() string {
	maxOpen, minOpen := c.pool()
	return fmt.Sprintf("OpenFGA --datastore-max-open-conns %d --datastore-min-open-conns %d", maxOpen, minOpen)
}

func (c DatastoreConfig) pool() (maxOpen, minOpen int) {
	def := serverconfig.DefaultConfig().Datastore
	maxOpen, minOpen = def.MaxOpenConns, def.MinOpenConns
	if c.MaxConns > 0 {
		maxOpen = c.MaxConns
	}
	if c.MinConns > 0 {
		minOpen = c.MinConns
	}
	return maxOpen, minOpen
}

// Migrate runs OpenFGA's own migrations (those its `openfga migrate` runs) to the latest
// version, and returns that version.
func (c DatastoreConfig) Migrate(ctx context.Context) (string, error) {
	if c.Engine == "memory" || c.Engine == "" {
		return "", nil
	}
	err := migrate.RunMigrations(migrate.MigrationConfig{Engine: c.Engine, URI: c.URI,
		Timeout: time.Minute, PingTimeout: 5 * time.Second, Logger: logger.NewNoopLogger()})
	if err != nil {
		return "", fmt.Errorf("OpenFGA's migrations (%s): %w", c.Engine, err)
	}
	return "OpenFGA migration " + c.migrated(ctx), nil
}

// migrated is the version goose's table says the migrations reached; "latest" where it cannot
// be read (the migrations said they ran).
func (c DatastoreConfig) migrated(ctx context.Context) string {
	driver, dsn := "pgx", c.URI // the drivers OpenFGA's migrations registered
	if c.Engine == "sqlite" {
		driver = "sqlite"
		var err error
		if dsn, err = sqlite.PrepareDSN(c.URI); err != nil {
			return "latest"
		}
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return "latest"
	}
	defer db.Close()
	var version int64
	if err := db.QueryRowContext(ctx, "SELECT max(version_id) FROM goose_db_version WHERE is_applied").Scan(&version); err != nil {
		return "latest"
	}
	return strconv.FormatInt(version, 10)
}

// Open opens the datastore, with the continuation tokens its kind needs; Close (of the
// datastore) releases it. The SQL datastores' metrics are registered under MetricsPrefix,
// labelled MetricsLabel.
func (c DatastoreConfig) Open(log logger.Logger) (storage.OpenFGADatastore, encoder.ContinuationTokenSerializer, error) {
	if log == nil {
		log = logger.NewNoopLogger()
	}
	def := serverconfig.DefaultConfig()
	maxOpen, minOpen := c.pool()
	cfg := sqlcommon.NewConfig(sqlcommon.WithLogger(log),
		sqlcommon.WithMaxTuplesPerWrite(def.MaxTuplesPerWrite),
		sqlcommon.WithMaxTypesPerAuthorizationModel(def.MaxTypesPerAuthorizationModel),
		sqlcommon.WithMaxOpenConns(maxOpen), sqlcommon.WithMinOpenConns(minOpen),
		sqlcommon.WithMaxIdleConns(def.Datastore.MaxIdleConns), sqlcommon.WithMinIdleConns(def.Datastore.MinIdleConns),
		sqlcommon.WithConnMaxIdleTime(def.Datastore.ConnMaxIdleTime), sqlcommon.WithConnMaxLifetime(def.Datastore.ConnMaxLifetime),
		sqlcommon.WithMetrics())
	var ds storage.OpenFGADatastore
	var err error
	var label string
	switch c.Engine {
	case "", "memory":
		return memory.New(), encoder.NewStringContinuationTokenSerializer(), nil
	case "postgres":
		label = metricsLabel(c.URI)
		withMetricsAs(label, func() { ds, err = postgres.New(c.URI, cfg) })
	case "sqlite":
		label = metricsLabel(c.URI)
		withMetricsAs(label, func() { ds, err = sqlite.New(c.URI, cfg) })
	default:
		return nil, nil, fmt.Errorf("OpenFGA has no %s datastore here: memory, sqlite or postgres", c.Engine)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open OpenFGA's %s datastore: %w", c.Engine, err)
	}
	return labelledClose{ds, label}, sqlcommon.NewSQLContinuationTokenSerializer(), nil
}

// labelledClose closes an SQL datastore with the registerer it registered its metrics with.
type labelledClose struct {
	storage.OpenFGADatastore
	label string
}

func (l labelledClose) Close() { withMetricsAs(l.label, l.OpenFGADatastore.Close) }

// Over is an OpenFGA engine in this process over the datastore a target's settings chose, with
// what the result records of it, and what to release when the target stops.
type Over struct {
	Engine *Engine
	Record *result.Datastore
	db     *datastore.DB
	dir    string // SQLite's file's directory, removed at the end
}

// StartOverSettings opens the datastore s chooses for the target named name (a new SQLite
// file, a database on the run's PostgreSQL or the one s.URI names), runs OpenFGA's migrations
// into it, and writes f into it through OpenFGA's Write, timed: all before the clock.
//
// opts are pkg/server's settings beyond OpenFGA's defaults (its caches).
func StartOverSettings(ctx context.Context, s datastore.Settings, name string, f *Fixture, opts ...server.OpenFGAServiceV1Option) (_ *Over, err error) {
	o := &Over{}
	defer func() {
		if err != nil {
			o.Close(ctx)
		}
	}()
	cfg := DatastoreConfig{Engine: s.Engine(), MaxConns: s.MaxConns, MinConns: s.MinConns}
	rec := &result.Datastore{Engine: cfg.Engine}
	switch cfg.Engine {
	case datastore.SQLite:
		if o.dir, err = os.MkdirTemp("", "authzbench-openfga-sqlite-"); err != nil {
			return nil, err
		}
		cfg.URI = filepath.Join(o.dir, "openfga.db")
	case datastore.Postgres:
		if o.db, err = s.Open(ctx, name); err != nil {
			return nil, err
		}
		cfg.URI = o.db.URI
		rec = &o.db.Record
		rec.Pool = cfg.Pool()
	}
	if rec.Migrated, err = cfg.Migrate(ctx); err != nil {
		return nil, err
	}
	ds, tokens, err := cfg.Open(nil)
	if err != nil {
		return nil, err
	}
	tuples := 0
	for _, set := range f.TupleSets {
		tuples += len(set.Tuples)
	}
	began := time.Now()
	if o.Engine, err = StartOver(ctx, f, ds, tokens, opts...); err != nil {
		return nil, err
	}
	elapsed := time.Since(began)
	const bulk = "OpenFGA Write, 100 tuples a request (its --max-tuples-per-write)"
	if o.db != nil {
		o.db.Loaded(ctx, tuples, elapsed, bulk)
	} else {
		rec.Tuples, rec.BulkPath, rec.LoadSeconds = tuples, bulk, elapsed.Seconds()
		if elapsed > 0 {
			rec.TuplesPerSecond = float64(tuples) / elapsed.Seconds()
		}
		if fi, err := os.Stat(cfg.URI); err == nil && cfg.URI != "" {
			rec.SizeBytes = fi.Size()
		}
	}
	o.Record = rec
	return o, nil
}

// Close closes the engine and its datastore, and releases the database. What the run wrote into
// a database the user named stays there, as a server's database keeps what was written to it
// (a second run over it needs --datastore-overwrite).
func (o *Over) Close(context.Context) error {
	var errs []error
	if o.Engine != nil {
		o.Engine.Close()
		o.Engine = nil
	}
	if o.db != nil {
		errs = append(errs, o.db.Close())
		o.db = nil
	}
	if o.dir != "" {
		errs = append(errs, os.RemoveAll(o.dir))
		o.dir = ""
	}
	return errors.Join(errs...)
}
