package spicedb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/authzbench/authzbench/internal/datastore"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/pgserver"
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
	uri, err := pg.CreateDatabase(context.Background(), fmt.Sprintf("spicedb_test_%d_%d", os.Getpid(), pgDBs))
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

// The validation files that run on memory run unchanged on PostgreSQL through spicedb/server:
// SpiceDB's migrations, its bulk import, every assertion met (assertCaveated and expiring
// relationships among them), and the load recorded.
func TestValidationFilesOnPostgres(t *testing.T) {
	postgresDB(t) // skips without PostgreSQL
	for _, file := range []string{"docshare.yaml", "expiration.yaml", "schemafile.yaml"} {
		t.Run(file, func(t *testing.T) {
			w, err := workload.FromFiles(workload.UserSpec{Policies: []string{filepath.Join("testdata", file)}})
			if err != nil {
				t.Fatal(err)
			}
			cfg := &SpiceDBServerConfig{Settings: datastore.Settings{URI: postgresDB(t)}}
			if err := cfg.Check(); err != nil {
				t.Fatal(err)
			}
			if err := cfg.Probe(context.Background()); err != nil {
				t.Fatal(err)
			}
			tg, err := kinds.New("spicedb/server", kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := tg.Start(context.Background(), w); err != nil {
				tg.Stop(context.Background())
				t.Fatal(err)
			}
			defer tg.Stop(context.Background())
			decideEvery(t, tg, w)
			rec := tg.Info().Datastore
			f, err := FixtureOf(w)
			if err != nil {
				t.Fatal(err)
			}
			if rec == nil || rec.Engine != datastore.Postgres || rec.Tuples != len(f.Relationships) || rec.SizeBytes <= 0 || rec.AnalyzeSeconds <= 0 ||
				!strings.Contains(rec.BulkPath, "ImportBulkRelationships") || !strings.HasPrefix(rec.Migrated, "SpiceDB migration ") {
				t.Errorf("recorded %+v, want postgres, %d relationships imported, a size, ANALYZE's time and the migration", rec, len(f.Relationships))
			}
			if n := rows(t, cfg.URI, "SELECT count(*) FROM relation_tuple"); n < len(f.Relationships) {
				t.Errorf("the database holds %d relationships, want %d", n, len(f.Relationships))
			}
		})
	}
}

// --datastore postgres alone starts a PostgreSQL for the run and stops it with the target.
func TestStartedPostgresStopsWithTheServer(t *testing.T) {
	postgresDB(t) // skips without PostgreSQL
	w := spicedbWorkload(t)
	cfg := &SpiceDBServerConfig{Settings: datastore.Settings{Datastore: datastore.Postgres, NotDurable: true, MaxConns: 4}}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	tg, err := kinds.New("spicedb/server", kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		tg.Stop(context.Background())
		t.Fatal(err)
	}
	decideEvery(t, tg, w)
	rec := tg.Info().Datastore
	if rec == nil || !rec.Started || rec.Settings["fsync"] != "off" || !strings.Contains(rec.Pool, "read-max-open 4") {
		t.Errorf("recorded %+v, want a PostgreSQL started, fsync off as asked, and the pool of 4", rec)
	}
	started := tg.(*spicedbServer).db
	if err := tg.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.Connect(context.Background(), started.URI); err == nil {
		t.Error("the PostgreSQL started for the run still answers after the target stopped")
	}
}

// A database that already holds SpiceDB's store is refused before any load unless
// --datastore-overwrite is given; a running SpiceDB (--url) takes no datastore.
func TestSpiceDBDatastoreRefused(t *testing.T) {
	uri := postgresDB(t)
	server, err := FindServer(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate(context.Background(), server, uri); err != nil {
		t.Fatal(err)
	}
	// Migrated but empty: taken.
	if err := (&SpiceDBServerConfig{Settings: datastore.Settings{URI: uri}}).Probe(context.Background()); err != nil {
		t.Errorf("a migrated, empty database refused: %v", err)
	}
	execSQL(t, uri, "INSERT INTO namespace_config (namespace, serialized_config, created_xid) VALUES ('user', '', pg_current_xact_id())")
	err = (&SpiceDBServerConfig{Settings: datastore.Settings{URI: uri}}).Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "already holds a SpiceDB store") || !strings.Contains(err.Error(), "datastore_overwrite") {
		t.Errorf("got %v", err)
	}
	if err := (&SpiceDBServerConfig{Settings: datastore.Settings{URI: uri, Overwrite: true}}).Probe(context.Background()); err != nil {
		t.Errorf("with overwrite: %v", err)
	}
	err = (&SpiceDBServerConfig{ServerConfig: kinds.ServerConfig{URL: "grpc://127.0.0.1:50051"}, SpiceDBKey: "k",
		Settings: datastore.Settings{Datastore: datastore.Postgres}}).Check()
	if err == nil || !strings.Contains(err.Error(), "the running one url names has its own") {
		t.Errorf("got %v", err)
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

func rows(t *testing.T, uri, sql string) int {
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

// A second run over the database a first one loaded is refused without --datastore-overwrite;
// with it, the workload is touched in beside what is there, and decides as before.
func TestSecondRunNeedsOverwrite(t *testing.T) {
	uri := postgresDB(t)
	w := spicedbWorkload(t)
	runOver := func(t *testing.T, s datastore.Settings) *spicedbServer {
		t.Helper()
		cfg := &SpiceDBServerConfig{Settings: s}
		if err := cfg.Probe(context.Background()); err != nil {
			t.Fatal(err)
		}
		tg, err := kinds.New("spicedb/server", kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tg.Stop(context.Background()) })
		if err := tg.Start(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		decideEvery(t, tg, w)
		return tg.(*spicedbServer)
	}
	first := runOver(t, datastore.Settings{URI: uri})
	if !strings.Contains(first.record.BulkPath, "ImportBulkRelationships") {
		t.Errorf("first run loaded by %q, want the import", first.record.BulkPath)
	}
	first.Stop(context.Background())
	if err := (&SpiceDBServerConfig{Settings: datastore.Settings{URI: uri}}).Probe(context.Background()); err == nil {
		t.Fatal("a second run without --datastore-overwrite was taken")
	}
	second := runOver(t, datastore.Settings{URI: uri, Overwrite: true})
	if !strings.Contains(second.record.BulkPath, "touch") {
		t.Errorf("second run loaded by %q, want relationships touched", second.record.BulkPath)
	}
}
