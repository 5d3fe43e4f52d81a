package openfga

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/IBM/pgxpoolprometheus"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/authzbench/authzbench/internal/datastore"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/pgserver"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// One PostgreSQL for the package's tests, started on first use and stopped when they end
// (TestMain). Without PostgreSQL installed the tests that need it skip, saying so; CI installs
// it, so there they run.
var (
	pgOnce sync.Once
	pg     *pgserver.Server
	pgErr  error
	pgDBs  int
)

func postgresDB(t *testing.T) string {
	t.Helper()
	pgOnce.Do(func() { pg, pgErr = pgserver.Start(context.Background(), pgserver.Options{NotDurable: true}) })
	var none *pgserver.NotInstalledError
	if errors.As(pgErr, &none) {
		t.Skipf("PostgreSQL half skipped: %v", pgErr)
	}
	if pgErr != nil {
		t.Fatal(pgErr)
	}
	pgDBs++
	uri, err := pg.CreateDatabase(context.Background(), fmt.Sprintf("openfga_test_%d_%d", os.Getpid(), pgDBs))
	if err != nil {
		t.Fatal(err)
	}
	return uri
}

func stopPostgres() {
	if pg != nil {
		pg.Stop()
	}
}

// The users' files that run on memory run unchanged on SQLite and PostgreSQL, every assertion
// met, each written through OpenFGA's migrations and Write, and the load recorded.
func TestFilesDecideOnDatastores(t *testing.T) {
	load := map[string]func() (*Fixture, error){
		"store.fga.yaml":         func() (*Fixture, error) { return LoadStore("testdata/store.fga.yaml") },
		"modular/store.fga.yaml": func() (*Fixture, error) { return LoadStore("testdata/modular/store.fga.yaml") },
		"checks.jsonl": func() (*Fixture, error) {
			return LoadChecks("testdata/model.fga", "testdata/tuples.jsonl", "testdata/checks.jsonl")
		},
	}
	for _, store := range []string{datastore.SQLite, datastore.Postgres} {
		for name, read := range load {
			t.Run(store+"/"+name, func(t *testing.T) {
				s := datastore.Settings{Datastore: store}
				if store == datastore.Postgres {
					s.URI = postgresDB(t)
				}
				f, err := read()
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				o, err := StartOverSettings(ctx, s, "openfga_test", f)
				if err != nil {
					t.Fatal(err)
				}
				defer o.Close(ctx)
				tuples := 0
				for _, set := range f.TupleSets {
					tuples += len(set.Tuples)
				}
				if o.Record.Engine != store || !strings.HasPrefix(o.Record.Migrated, "OpenFGA migration ") || strings.HasSuffix(o.Record.Migrated, "latest") || o.Record.Tuples != tuples || o.Record.LoadSeconds <= 0 || o.Record.SizeBytes <= 0 ||
					(store == datastore.Postgres) != (o.Record.AnalyzeSeconds > 0) {
					t.Errorf("recorded %+v, want %s, its migration version, %d tuples, a load time, a size and ANALYZE's time on PostgreSQL alone", o.Record, store, tuples)
				}
				decided := 0
				for _, a := range f.Assertions {
					req, err := o.Engine.Prepare(a)
					if err != nil {
						t.Fatal(err)
					}
					got, err := o.Engine.Check(ctx, req)
					if err != nil {
						t.Errorf("%s: %v", a.Origin, err)
						continue
					}
					if got != a.Expect {
						t.Errorf("%s: test %q: %s %s %s: got %v, want %v", a.Origin, a.Name, a.User, a.Relation, a.Object, got, a.Expect)
					}
					decided++
				}
				if decided != len(f.Assertions) || decided == 0 {
					t.Errorf("%d of %d assertions decided", decided, len(f.Assertions))
				}
			})
		}
	}
}

// A database the user names is checked before any load: one that does not answer, one that
// holds another schema, and one that holds OpenFGA's stores (without --datastore-overwrite)
// are refused, naming the flag, and nothing in them is changed.
func TestRunningDatabaseRefused(t *testing.T) {
	ctx := context.Background()
	named := func(err error) string {
		var o *kinds.OptionError
		if !errors.As(err, &o) {
			return fmt.Sprintf("not an option error: %v", err)
		}
		return o.Named(func(key string) string { return "--" + strings.ReplaceAll(key, "_", "-") })
	}
	t.Run("does not answer", func(t *testing.T) {
		c := &OpenFGAInprocConfig{Settings: datastore.Settings{URI: "postgres://nobody@127.0.0.1:1/none?sslmode=disable"}}
		err := c.Probe(ctx)
		if msg := named(err); !strings.Contains(msg, "--datastore-uri") || !strings.Contains(msg, "does not answer") {
			t.Errorf("got %s", msg)
		}
	})
	t.Run("another schema", func(t *testing.T) {
		uri := postgresDB(t)
		execSQL(t, uri, "CREATE TABLE invoices (id int)")
		err := (&OpenFGAInprocConfig{Settings: datastore.Settings{URI: uri, Overwrite: true}}).Probe(ctx)
		if msg := named(err); !strings.Contains(msg, "holds another schema") || !strings.Contains(msg, "invoices") {
			t.Errorf("got %s", msg)
		}
	})
	t.Run("holds a store", func(t *testing.T) {
		uri := postgresDB(t)
		f, err := LoadStore("testdata/store.fga.yaml")
		if err != nil {
			t.Fatal(err)
		}
		// A store someone keeps: written with OpenFGA's own migrations and Write, not removed.
		cfg := DatastoreConfig{Engine: datastore.Postgres, URI: uri}
		if _, err := cfg.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		ds, tokens, err := cfg.Open(nil)
		if err != nil {
			t.Fatal(err)
		}
		e, err := StartOver(ctx, f, ds, tokens)
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		before := count(t, uri, "SELECT count(*) FROM tuple")
		err = (&OpenFGAInprocConfig{Settings: datastore.Settings{URI: uri}}).Probe(ctx)
		if msg := named(err); !strings.Contains(msg, "already holds a OpenFGA store") || !strings.Contains(msg, "--datastore-overwrite") {
			t.Errorf("got %s", msg)
		}
		if err := (&OpenFGAInprocConfig{Settings: datastore.Settings{URI: uri, Overwrite: true}}).Probe(ctx); err != nil {
			t.Errorf("with overwrite: %v", err)
		}
		if after := count(t, uri, "SELECT count(*) FROM tuple"); after != before {
			t.Errorf("probing changed the database: %d tuples, then %d", before, after)
		}
	})
	t.Run("empty", func(t *testing.T) {
		if err := (&OpenFGAInprocConfig{Settings: datastore.Settings{URI: postgresDB(t)}}).Probe(ctx); err != nil {
			t.Errorf("an empty database refused: %v", err)
		}
	})
}

// Settings refused on their face, before anything starts.
func TestDatastoreSettingsRefused(t *testing.T) {
	for _, c := range []struct {
		s    datastore.Settings
		want string
	}{
		{datastore.Settings{Datastore: "mysql"}, "datastore mysql: openfga/inproc decides over memory, sqlite or postgres"},
		{datastore.Settings{Datastore: "sqlite", URI: "postgres://u@127.0.0.1:5432/db"}, "datastore_uri names a PostgreSQL, and datastore is sqlite"},
		{datastore.Settings{URI: "mysql://u@host/db"}, "want postgres://"},
		{datastore.Settings{Datastore: "postgres", Overwrite: true}, "datastore_overwrite is for a running database"},
		{datastore.Settings{Datastore: "memory", MaxConns: 4}, "datastore_max_conns configures PostgreSQL"},
		{datastore.Settings{Datastore: "sqlite", NoAnalyze: true}, "datastore_no_analyze configures PostgreSQL, and datastore is sqlite"},
		{datastore.Settings{Datastore: "postgres", MaxConns: 2, MinConns: 4}, "want 0 <= min <= max"},
	} {
		err := (&OpenFGAInprocConfig{Settings: c.s}).Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.s, err, c.want)
		}
	}
}

// SpiceDB's Postgres datastore registers pgxpool_* in Prometheus's default registry with the
// labels db_name and pool_usage; OpenFGA's, the same names with db_name alone, which the
// registry refused, so OpenFGA over PostgreSQL failed to start beside SpiceDB over PostgreSQL
// in one process. Prefixed, both start, and each one's pool is read under its own names.
func TestPoolMetricsBesideSpiceDBs(t *testing.T) {
	uri := postgresDB(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	spicedbs := pgxpoolprometheus.NewCollector(pool, map[string]string{"db_name": "spicedb", "pool_usage": "read"})
	if err := prometheus.Register(spicedbs); err != nil {
		t.Fatal(err)
	}
	defer prometheus.Unregister(spicedbs)
	// Without the prefix, OpenFGA's own registration is refused: the clash is real.
	clash := pgxpoolprometheus.NewCollector(pool, map[string]string{"db_name": "openfga"})
	if err := prometheus.Register(clash); err == nil {
		prometheus.Unregister(clash)
		t.Fatal("the default registry took OpenFGA's pool metrics beside SpiceDB's unprefixed: the test would pass for no reason")
	}
	f, err := LoadChecks("testdata/model.fga", "testdata/tuples.jsonl", "testdata/checks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// Two at once (two openfga/inproc targets of a scenario, their pools apart), then both
	// closed and two opened again: the metrics of the first two were unregistered.
	for round := range 2 {
		var open []*Over
		for range 2 {
			o, err := StartOverSettings(ctx, datastore.Settings{URI: uri, Overwrite: true}, "openfga_test", f)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			open = append(open, o)
		}
		families, err := prometheus.DefaultGatherer.Gather()
		if err != nil {
			t.Fatal(err)
		}
		spicedb, openfgas := 0, map[string]bool{}
		for _, mf := range families {
			for _, m := range mf.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				switch {
				case mf.GetName() == "pgxpool_acquire_count" && labels["db_name"] == "spicedb":
					spicedb++
				case mf.GetName() == MetricsPrefix+"pgxpool_acquire_count" && labels["db_name"] == "openfga":
					openfgas[labels[MetricsLabel]] = true
				}
			}
		}
		if spicedb != 1 || len(openfgas) != 2 {
			t.Errorf("round %d: SpiceDB's pool %d times, OpenFGA's pools %v: want SpiceDB's once and two of OpenFGA's, told apart", round, spicedb, openfgas)
		}
		for _, o := range open {
			if err := o.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func execSQL(t *testing.T, uri, sql string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, uri, sql string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The store files run unchanged through openfga/server over SQLite and PostgreSQL (HTTP and
// gRPC), every assertion met, the server given the datastore as OpenFGA's run takes it, the
// load recorded, and no password on the command line the result keeps.
func TestServerFilesOnDatastores(t *testing.T) {
	w, err := workload.FromFiles(workload.UserSpec{Policies: []string{"testdata/store.fga.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		store, api string
	}{{datastore.SQLite, "http"}, {datastore.Postgres, "http"}, {datastore.Postgres, "grpc"}} {
		t.Run(tc.store+"-"+tc.api, func(t *testing.T) {
			s := datastore.Settings{Datastore: tc.store}
			if tc.store == datastore.Postgres {
				s.URI = strings.Replace(postgresDB(t), "authzbench@", "authzbench:pw@", 1) // trust auth: any password
			}
			cfg := &OpenFGAServerConfig{API: tc.api, Settings: s}
			if err := cfg.Check(); err != nil {
				t.Fatal(err)
			}
			tg, err := kinds.New("openfga/server", kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := tg.Start(context.Background(), w); err != nil {
				tg.Stop(context.Background())
				t.Fatal(err)
			}
			defer tg.Stop(context.Background())
			d := tg.Worker()
			defer kinds.CloseDecider(d)
			for i, in := range w.Inputs {
				out := d.Decide(context.Background(), i)
				if c := verify.Classify(in.Expect, out); c != verify.OK {
					t.Errorf("%s: %s (%+v)", in.Source, verify.Name(c, out.Status), out)
				}
			}
			info := tg.Info()
			if rec := info.Datastore; rec == nil || rec.Engine != tc.store || rec.Tuples == 0 || rec.SizeBytes <= 0 {
				t.Errorf("recorded %+v, want %s with the load and a size", rec, tc.store)
			}
			cmd := strings.Join(info.Command, " ")
			if !strings.Contains(cmd, "--datastore-engine "+tc.store) || strings.Contains(cmd, "pw") {
				t.Errorf("command line %q: want the datastore named and no URI", cmd)
			}
		})
	}
}
