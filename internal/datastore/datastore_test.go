package datastore

import (
	"errors"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/pgserver"
)

// Where PostgreSQL is not installed, --datastore postgres is refused before anything starts,
// as a program not installed, naming the flag, the package and where it looked; a URI needs no
// installation.
func TestPostgresNotInstalled(t *testing.T) {
	saved := pgserver.Where
	pgserver.Where = t.TempDir() + "/*/bin/initdb"
	defer func() { pgserver.Where = saved }()
	errs := (&Settings{Datastore: Postgres}).Check("openfga/inproc", Memory, Postgres)
	if len(errs) != 1 {
		t.Fatalf("got %v, want one error", errs)
	}
	var missing *kinds.NotInstalledError
	if !errors.As(errs[0], &missing) {
		t.Errorf("%v is not a program not installed", errs[0])
	}
	var option *kinds.OptionError
	if !errors.As(errs[0], &option) {
		t.Fatalf("%v names no option", errs[0])
	}
	msg := option.Named(func(key string) string { return "--" + strings.ReplaceAll(key, "_", "-") })
	for _, want := range []string{"--datastore postgres", "openfga/inproc", "postgresql package", pgserver.Where, "--datastore-uri"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if errs := (&Settings{URI: "postgres://u@127.0.0.1:5432/db"}).Check("openfga/inproc", Memory, Postgres); len(errs) != 0 {
		t.Errorf("a running database refused for want of an installation: %v", errs)
	}
}

func TestRedacted(t *testing.T) {
	if got := Redacted("postgres://bench:s3cret@db:5432/x"); strings.Contains(got, "s3cret") || !strings.Contains(got, "bench") {
		t.Errorf("got %s", got)
	}
}
