package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/authzbench/authzbench/internal/pgserver"
)

// A datastore that cannot be used is bad input: exit 2 before any load, naming the flag and
// the cause, and no result written. A run over a PostgreSQL authzbench starts records it.
func TestDatastoreFlags(t *testing.T) {
	dir := t.TempDir()
	refused := func(t *testing.T, want string, args ...string) {
		t.Helper()
		out := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".json")
		code, _, stderr := run(t, append([]string{"run", "--workload", "rbac", "--requests", "10", "--no-progress", "-o", out}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, want %d and %q in\n%s", code, exitUsage, want, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Error("a result was written: something ran")
		}
	}
	t.Run("beside an engine without one", func(t *testing.T) {
		refused(t, "--datastore applies to the openfga/inproc, openfga/server and spicedb/server targets, and opa/inproc takes none",
			"--target", "openfga/inproc,opa/inproc", "--datastore", "postgres")
	})
	t.Run("an engine without one", func(t *testing.T) {
		refused(t, "--datastore-uri applies to the openfga/inproc, openfga/server and spicedb/server targets, and cedar/inproc takes none",
			"--target", "cedar/inproc", "--datastore-uri", "postgres://u@127.0.0.1:1/db")
	})
	t.Run("one the engine has not", func(t *testing.T) {
		refused(t, "--datastore sqlite: spicedb/server decides over memory or postgres", "--target", "spicedb/server", "--datastore", "sqlite")
	})
	t.Run("no ANALYZE of a datastore that is not PostgreSQL", func(t *testing.T) {
		refused(t, "--datastore-no-analyze configures PostgreSQL, and --datastore is memory", "--target", "spicedb/server", "--datastore-no-analyze")
	})
	t.Run("a URI that does not answer", func(t *testing.T) {
		refused(t, "openfga/inproc: --datastore-uri postgres://u@127.0.0.1:1/db does not answer", "--target", "openfga/inproc", "--datastore-uri", "postgres://u@127.0.0.1:1/db")
	})
	t.Run("PostgreSQL not installed", func(t *testing.T) {
		saved := pgserver.Where
		pgserver.Where = filepath.Join(t.TempDir(), "*", "bin", "initdb")
		defer func() { pgserver.Where = saved }()
		refused(t, "--datastore postgres: openfga/inproc starts a PostgreSQL from the machine's installation: no PostgreSQL installed (looked for "+
			pgserver.Where+"; install Debian's postgresql package)", "--target", "openfga/inproc", "--datastore", "postgres")
	})
	srv, err := pgserver.Start(context.Background(), pgserver.Options{NotDurable: true})
	var none *pgserver.NotInstalledError
	if errors.As(err, &none) {
		t.Skipf("the PostgreSQL half skipped: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	t.Run("a database of another schema", func(t *testing.T) {
		uri, err := srv.CreateDatabase(context.Background(), "invoicing")
		if err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(context.Background(), uri)
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.Exec(context.Background(), "CREATE TABLE invoices (id int)")
		conn.Close(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		refused(t, "holds another schema (tables invoices), not OpenFGA's", "--target", "openfga/server", "--datastore-uri", uri)
	})
	t.Run("a run over a database", func(t *testing.T) {
		uri, err := srv.CreateDatabase(context.Background(), "bench")
		if err != nil {
			t.Fatal(err)
		}
		uri = strings.Replace(uri, pgserver.User+"@", pgserver.User+":hunter2@", 1) // trusted: any password
		doc, _ := runOK(t, filepath.Join(dir, "run.json"), "run", "--target", "openfga/inproc", "--workload", "rbac", "--requests", "200",
			"--warmup", "0", "--no-progress", "--datastore-uri", uri, "--datastore-max-conns", "8")
		r := doc.Runs[0]
		ds := r.SUT.Datastore
		if r.Summary.OK != 200 || ds == nil || ds.Engine != "postgres" || ds.Started || ds.MaxConns != 8 || ds.Tuples == 0 || ds.SizeBytes <= 0 ||
			!strings.Contains(ds.Pool, "max-open-conns 8") || ds.Settings["fsync"] != "off" {
			t.Errorf("ok %d, datastore %+v: want 200 decisions over the database given, its pool, load, size and settings recorded", r.Summary.OK, ds)
		}
		for _, s := range append([]string{ds.URI}, doc.Command...) {
			if strings.Contains(s, "hunter2") {
				t.Errorf("the password is in the result: %q", s)
			}
		}
	})
}
