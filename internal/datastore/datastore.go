// Package datastore is the database an engine with one (OpenFGA, SpiceDB) decides over, as the
// target options --datastore memory|sqlite|postgres and --datastore-uri choose it: the settings
// those targets embed, the check of a running database before any load (it answers, it holds
// no other schema, it holds no store unless overwrite is given), and a database for the run —
// the one the URI names, or a new one on a PostgreSQL authzbench starts from the machine's
// installation (pgserver), stopped when the last target using it stops.
//
// It knows no engine: each engine runs its own migrations and its own bulk load into the URI
// it is handed, and says which tables mark its schema (Marker).
package datastore

import (
	"context"

	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/pgserver"
	"github.com/authzbench/authzbench/internal/result"
)

// The datastores, as --datastore names them.
const (
	Memory   = "memory"
	SQLite   = "sqlite"
	Postgres = "postgres"
)

func init() {
	kinds.DeclareOption(kinds.Option{Key: "datastore", Flag: "datastore", Selective: true, EveryTarget: true,
		Help: "{kinds}: the datastore the engine decides over: memory (the default), sqlite (OpenFGA only) or postgres " +
			"(a PostgreSQL authzbench starts from the machine's postgresql package, or the one --datastore-uri names)"})
	kinds.DeclareOption(kinds.Option{Key: "datastore_uri", Flag: "datastore-uri", Selective: true, EveryTarget: true, Secret: true,
		Help: "{kinds}: measure over the running PostgreSQL this postgres://... URI names instead of one authzbench starts; " +
			"a database already holding the engine's store is refused unless --datastore-overwrite"})
	kinds.DeclareOption(kinds.Option{Key: "datastore_overwrite", Flag: "datastore-overwrite", Selective: true, EveryTarget: true,
		Help: "{kinds}: with --datastore-uri, write the workload into a database that already holds the engine's store"})
	kinds.DeclareOption(kinds.Option{Key: "datastore_nondurable", Flag: "datastore-nondurable", Selective: true, EveryTarget: true,
		Help: "{kinds}: start the PostgreSQL with fsync, synchronous_commit and full_page_writes off (faster loads, no crash safety; recorded)"})
	kinds.DeclareOption(kinds.Option{Key: "datastore_no_analyze", Flag: "datastore-no-analyze", Selective: true, EveryTarget: true,
		Help: "{kinds}: leave out the ANALYZE authzbench runs on PostgreSQL after the load and before the clock, to measure a database " +
			"whose tables the load has just filled, as PostgreSQL plans reads before autovacuum has gathered their statistics (recorded)"})
	kinds.DeclareOption(kinds.Option{Key: "datastore_max_conns", Flag: "datastore-max-conns", Selective: true, EveryTarget: true,
		Help: "{kinds}: the engine's connection pool to PostgreSQL, its most open connections (default: the engine's own; recorded)"})
	kinds.DeclareOption(kinds.Option{Key: "datastore_min_conns", Flag: "datastore-min-conns", Selective: true, EveryTarget: true,
		Help: "{kinds}: the engine's connection pool to PostgreSQL, the connections it keeps open (default: the engine's own; recorded)"})
}

// Settings are the datastore options of a target that takes them, embedded inline in its
// settings.
type Settings struct {
	Datastore  string `yaml:"datastore"`
	URI        string `yaml:"datastore_uri"`
	Overwrite  bool   `yaml:"datastore_overwrite"`
	NotDurable bool   `yaml:"datastore_nondurable"`
	NoAnalyze  bool   `yaml:"datastore_no_analyze"`
	MaxConns   int    `yaml:"datastore_max_conns"`
	MinConns   int    `yaml:"datastore_min_conns"`
}

// Engine is the datastore chosen: memory unless said, postgres when only a URI is given.
func (s *Settings) Engine() string {
	switch {
	case s.Datastore != "":
		return s.Datastore
	case s.URI != "":
		return Postgres
	}
	return Memory
}

// Chosen reports whether a datastore was asked for at all, for the result to record it.
func (s *Settings) Chosen() bool { return *s != Settings{} }

// Check refuses, on their face, a datastore the target does not take (takes lists those it
// does), a URI that is not PostgreSQL's, settings that configure a PostgreSQL the run does not
// use, and PostgreSQL not installed where the run would start one.
func (s *Settings) Check(target string, takes ...string) []error {
	var errs []error
	engine := s.Engine()
	if !slices.Contains(takes, engine) {
		errs = append(errs, kinds.NewOptionError("datastore", func(n func(string) string) string {
			return fmt.Sprintf("%s %s: %s decides over %s", n("datastore"), engine, target, orList(takes))
		}))
		return errs
	}
	if s.URI != "" {
		if engine != Postgres {
			errs = append(errs, kinds.NewOptionError("datastore_uri", func(n func(string) string) string {
				return fmt.Sprintf("%s names a PostgreSQL, and %s is %s", n("datastore_uri"), n("datastore"), engine)
			}))
		} else if u, err := url.Parse(s.URI); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
			errs = append(errs, kinds.NewOptionError("datastore_uri", func(n func(string) string) string {
				return fmt.Sprintf("%s %s: want postgres://user[:password]@host:port/database", n("datastore_uri"), Redacted(s.URI))
			}))
		}
		if s.NotDurable {
			errs = append(errs, kinds.NewOptionError("datastore_nondurable", func(n func(string) string) string {
				return fmt.Sprintf("%s sets up the PostgreSQL authzbench starts; with %s it starts none (set fsync on the running one)", n("datastore_nondurable"), n("datastore_uri"))
			}))
		}
	} else if s.Overwrite {
		errs = append(errs, kinds.NewOptionError("datastore_overwrite", func(n func(string) string) string {
			return fmt.Sprintf("%s is for a running database, with %s; the PostgreSQL authzbench starts is empty", n("datastore_overwrite"), n("datastore_uri"))
		}))
	}
	if engine != Postgres {
		for _, o := range []struct {
			key   string
			given bool
		}{{"datastore_nondurable", s.NotDurable}, {"datastore_no_analyze", s.NoAnalyze},
			{"datastore_max_conns", s.MaxConns != 0}, {"datastore_min_conns", s.MinConns != 0}} {
			if !o.given {
				continue
			}
			key := o.key
			errs = append(errs, kinds.NewOptionError(key, func(n func(string) string) string {
				return fmt.Sprintf("%s configures PostgreSQL, and %s is %s", n(key), n("datastore"), engine)
			}))
		}
	}
	if s.MaxConns < 0 || s.MinConns < 0 || (s.MaxConns > 0 && s.MinConns > s.MaxConns) {
		errs = append(errs, kinds.NewOptionError("datastore_min_conns", func(n func(string) string) string {
			return fmt.Sprintf("%s %d and %s %d: want 0 <= min <= max", n("datastore_min_conns"), s.MinConns, n("datastore_max_conns"), s.MaxConns)
		}))
	}
	if engine == Postgres && s.URI == "" {
		if _, err := pgserver.Find(); err != nil {
			errs = append(errs, &kinds.NotInstalledError{Missing: err.Error(), Err: kinds.NewOptionError("datastore", func(n func(string) string) string {
				return fmt.Sprintf("%s postgres: %s starts a PostgreSQL from the machine's installation: %v; or give %s postgres://... for a running one",
					n("datastore"), target, err, n("datastore_uri"))
			})})
		}
	}
	return errs
}

// Marker is how an engine's schema is told apart in a database: the table its migrations keep
// their version in, and the tables that hold its stores.
type Marker struct {
	Engine       string   // "OpenFGA"
	VersionTable string   // "goose_db_version"
	StoreTables  []string // a row in any is a store
}

// Probe asks the running database the URI names, before any load, whether the run may use it:
// it must answer, hold no tables but the engine's own (another schema is refused whatever the
// flags), and hold none of the engine's stores unless overwrite is given. Nothing is changed.
func (s *Settings) Probe(ctx context.Context, m Marker) error {
	if s.URI == "" || s.Engine() != Postgres {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := connect(ctx, s.URI)
	if err != nil {
		return kinds.NewOptionError("datastore_uri", func(n func(string) string) string {
			return fmt.Sprintf("%s %s does not answer: %s", n("datastore_uri"), Redacted(s.URI), oneLine(err))
		})
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tables, err := userTables(ctx, conn)
	if err != nil {
		return kinds.NewOptionError("datastore_uri", func(n func(string) string) string {
			return fmt.Sprintf("%s %s: list its tables: %v", n("datastore_uri"), Redacted(s.URI), err)
		})
	}
	if len(tables) == 0 {
		return nil
	}
	if !slices.Contains(tables, m.VersionTable) {
		shown := tables
		if len(shown) > 5 {
			shown = append(shown[:5:5], "...")
		}
		return kinds.NewOptionError("datastore_uri", func(n func(string) string) string {
			return fmt.Sprintf("%s %s holds another schema (tables %s), not %s's: point it at an empty database, or one %s's migrations made",
				n("datastore_uri"), Redacted(s.URI), strings.Join(shown, ", "), m.Engine, m.Engine)
		})
	}
	if s.Overwrite {
		return nil
	}
	for _, t := range m.StoreTables {
		if !slices.Contains(tables, t) {
			continue
		}
		var any bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+pgx.Identifier{t}.Sanitize()+")").Scan(&any); err != nil {
			return kinds.NewOptionError("datastore_uri", func(n func(string) string) string {
				return fmt.Sprintf("%s %s: read table %s: %v", n("datastore_uri"), Redacted(s.URI), t, err)
			})
		}
		if any {
			return kinds.NewOptionError("datastore_overwrite", func(n func(string) string) string {
				return fmt.Sprintf("%s %s already holds a %s store (table %s has rows), which the run would write beside or over: "+
					"point %s at an empty database, or give %s", n("datastore_uri"), Redacted(s.URI), m.Engine, t, n("datastore_uri"), n("datastore_overwrite"))
			})
		}
	}
	return nil
}

// orList joins names as a sentence does: "memory, sqlite or postgres".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// oneLine is a driver's error in one line: pgx says each address it tried on a line of its own,
// the same one twice where it tried TLS first.
func oneLine(err error) string {
	var parts []string
	for _, p := range strings.Split(err.Error(), "\n") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

func connect(ctx context.Context, uri string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(uri)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > 5*time.Second {
		cfg.ConnectTimeout = 5 * time.Second
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// userTables lists the tables outside PostgreSQL's own schemas.
func userTables(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY table_name`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Redacted is uri with its password left out, for messages and results.
func Redacted(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "(a URI that does not parse)"
	}
	return u.Redacted()
}

// DB is a PostgreSQL database a target runs over: the one its URI names, or a new one on the
// run's PostgreSQL.
type DB struct {
	URI    string
	Record result.Datastore
	server *pgserver.Server
	// noAnalyze: the load is measured without the ANALYZE after it (--datastore-no-analyze).
	noAnalyze bool
}

// the run's PostgreSQL, shared by every target that asks for one, stopped by the last.
var shared struct {
	sync.Mutex
	server     *pgserver.Server
	notDurable bool
	users      int
	databases  int
}

// Open returns the database for a target named name: the URI's, or a new database on the run's
// PostgreSQL, started on first use. Close releases it.
func (s *Settings) Open(ctx context.Context, name string) (*DB, error) {
	rec := result.Datastore{Engine: Postgres, MaxConns: s.MaxConns, MinConns: s.MinConns}
	if s.URI != "" {
		rec.URI = Redacted(s.URI)
		db := &DB{URI: s.URI, Record: rec, noAnalyze: s.NoAnalyze}
		db.readServer(ctx)
		return db, nil
	}
	shared.Lock()
	defer shared.Unlock()
	if shared.server != nil && shared.notDurable != s.NotDurable {
		return nil, kinds.NewOptionError("datastore_nondurable", func(n func(string) string) string {
			return fmt.Sprintf("targets of one run share the PostgreSQL authzbench starts: give %s to all of them or none", n("datastore_nondurable"))
		})
	}
	if shared.server == nil {
		srv, err := pgserver.Start(ctx, pgserver.Options{NotDurable: s.NotDurable, MaxConnections: 200})
		if err != nil {
			return nil, fmt.Errorf("start PostgreSQL for --datastore postgres: %w", err)
		}
		shared.server, shared.notDurable = srv, s.NotDurable
	}
	shared.databases++
	dbName := fmt.Sprintf("%s_%d", strings.NewReplacer("/", "_", "-", "_").Replace(name), shared.databases)
	uri, err := shared.server.CreateDatabase(ctx, dbName)
	if err != nil {
		if shared.users == 0 {
			shared.server.Stop()
			shared.server = nil
		}
		return nil, err
	}
	shared.users++
	rec.Started = true
	rec.Settings = shared.server.Settings
	db := &DB{URI: uri, Record: rec, server: shared.server, noAnalyze: s.NoAnalyze}
	db.readServer(ctx)
	return db, nil
}

// readServer records the server's version and durability settings, as it reports them.
func (d *DB) readServer(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := connect(ctx, d.URI)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	var version, fsync, commit, pages, maxConns string
	if conn.QueryRow(ctx, `SELECT version(), current_setting('fsync'), current_setting('synchronous_commit'),
		current_setting('full_page_writes'), current_setting('max_connections')`).Scan(&version, &fsync, &commit, &pages, &maxConns) == nil {
		d.Record.ServerVersion = version
		d.Record.Settings = map[string]string{"fsync": fsync, "synchronous_commit": commit, "full_page_writes": pages, "max_connections": maxConns}
	}
}

// Loaded records a load of tuples in elapsed, then has PostgreSQL ANALYZE the database and
// records the database's size after it.
//
// A table a bulk load has just filled has no statistics until autovacuum gets to it (a minute
// or more after the load), and until then PostgreSQL plans its reads as if it were nearly
// empty; a database in production has had them for long. So the checks are measured with the
// statistics a deployed database has: ANALYZE runs before the clock, and its time is recorded;
// unless --datastore-no-analyze asks for the database as the load left it, recorded so.
func (d *DB) Loaded(ctx context.Context, tuples int, elapsed time.Duration, bulkPath string) {
	d.Record.Tuples, d.Record.BulkPath = tuples, bulkPath
	d.Record.LoadSeconds = elapsed.Seconds()
	if elapsed > 0 {
		d.Record.TuplesPerSecond = float64(tuples) / elapsed.Seconds()
	}
	if d.noAnalyze {
		d.Record.NotAnalyzed = true
	} else if took, err := d.analyze(ctx); err != nil {
		d.Record.AnalyzeError = oneLine(err)
	} else {
		d.Record.AnalyzeSeconds = took.Seconds()
	}
	if size, err := d.Size(ctx); err == nil {
		d.Record.SizeBytes = size
	}
}

// analyze has PostgreSQL gather the statistics of every table of the database the connection's
// user may analyze (ANALYZE without a table), and says how long it took.
func (d *DB) analyze(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	conn, err := connect(ctx, d.URI)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	start := time.Now()
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		return 0, fmt.Errorf("ANALYZE after the load: %w", err)
	}
	return time.Since(start), nil
}

// Size is pg_database_size of the database.
func (d *DB) Size(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := connect(ctx, d.URI)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var size int64
	err = conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&size)
	return size, err
}

// Close releases the database: the last target using the run's PostgreSQL stops it.
func (d *DB) Close() error {
	if d == nil || d.server == nil {
		return nil
	}
	shared.Lock()
	defer shared.Unlock()
	d.server = nil
	shared.users--
	if shared.users > 0 || shared.server == nil {
		return nil
	}
	err := shared.server.Stop()
	shared.server = nil
	return err
}
