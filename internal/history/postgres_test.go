package history

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/authzbench/authzbench/internal/pgserver"
)

// A throwaway PostgreSQL server for the store suite (pgserver), started on first use and
// stopped by its PID when the tests end (TestMain). Where no PostgreSQL is installed, the
// Postgres half of the suite skips, saying so.

var (
	pgOnce sync.Once
	pg     *pgserver.Server
	pgErr  error // why there is none
	pgDBs  atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pg != nil {
		pg.Stop()
	}
	os.Exit(code)
}

// postgresURL starts the server on first use and returns the URL of a new, empty database on
// it, or skips the test saying why there is no server.
func postgresURL(t *testing.T) string {
	t.Helper()
	// Not durable: the store's tests commit often, and what they check is not the disk.
	pgOnce.Do(func() {
		pg, pgErr = pgserver.Start(context.Background(), pgserver.Options{NotDurable: true, MaxConnections: 50})
	})
	if pgErr != nil {
		t.Skipf("Postgres half skipped: %v", pgErr)
	}
	url, err := pg.CreateDatabase(context.Background(), fmt.Sprintf("t%d_%d", os.Getpid(), pgDBs.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	return url
}
