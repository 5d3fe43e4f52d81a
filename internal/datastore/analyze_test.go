package datastore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/pgserver"
	"github.com/authzbench/authzbench/internal/result"
)

// A load recorded on PostgreSQL is followed by ANALYZE before the clock: the table it filled has
// statistics (pg_stats) afterwards and had none before, and the record says how long it took. A
// database that cannot be analyzed is recorded so, and the load's record is kept.
func TestLoadedAnalyzesTheDatabase(t *testing.T) {
	ctx := context.Background()
	db, err := (&Settings{Datastore: Postgres, NotDurable: true}).Open(ctx, "analyze_test")
	var none *pgserver.NotInstalledError
	if errors.As(err, &none) {
		t.Skipf("PostgreSQL not installed: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := connect(ctx, db.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE tuple (object text, relation text, subject text);
		INSERT INTO tuple SELECT 'doc:' || i, 'viewer', 'user:' || (i % 97) FROM generate_series(1, 5000) i`); err != nil {
		t.Fatal(err)
	}
	stats := func() int {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stats WHERE tablename = 'tuple'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := stats(); n != 0 {
		t.Fatalf("the table has statistics (%d columns) before any ANALYZE: the test shows nothing", n)
	}
	db.Loaded(ctx, 5000, time.Second, "INSERT")
	if db.Record.AnalyzeSeconds <= 0 || db.Record.AnalyzeError != "" {
		t.Errorf("recorded analyze_seconds %v, analyze_error %q; want a time and no error", db.Record.AnalyzeSeconds, db.Record.AnalyzeError)
	}
	if n := stats(); n != 3 {
		t.Errorf("after the load the table has statistics of %d columns, want 3", n)
	}
	if db.Record.Tuples != 5000 || db.Record.SizeBytes <= 0 {
		t.Errorf("the load's record lost: %+v", db.Record)
	}

	// Asked for none, the next load leaves the statistics as they were and says so.
	if _, err := conn.Exec(ctx, `CREATE TABLE fresh AS SELECT * FROM tuple`); err != nil {
		t.Fatal(err)
	}
	db.noAnalyze, db.Record = true, result.Datastore{}
	db.Loaded(ctx, 5000, time.Second, "INSERT")
	var fresh int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stats WHERE tablename = 'fresh'").Scan(&fresh); err != nil {
		t.Fatal(err)
	}
	if !db.Record.NotAnalyzed || db.Record.AnalyzeSeconds != 0 || fresh != 0 {
		t.Errorf("--datastore-no-analyze: recorded %+v, and the new table has statistics of %d columns; want none, said", db.Record, fresh)
	}

	gone := &DB{URI: "postgres://nobody@127.0.0.1:1/none?connect_timeout=2"}
	gone.Loaded(ctx, 10, time.Second, "INSERT")
	if gone.Record.AnalyzeError == "" || gone.Record.AnalyzeSeconds != 0 || gone.Record.Tuples != 10 {
		t.Errorf("a database that cannot be analyzed recorded %+v; want the error and the load", gone.Record)
	}
}
