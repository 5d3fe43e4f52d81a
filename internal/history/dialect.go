package history

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
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dialect is what differs between SQLite and Postgres for this package's SQL: a few type
// names, placeholders, how schema migrations are serialised, and what a writer does when
// another holds the lock. Every query is written once, with ? placeholders.
type dialect struct {
	name           string
	types          *strings.Replacer
	dollars        bool   // placeholders are $1, $2, … (Postgres)
	lockMigrations string // run first in the migration's transaction
	busy           func(error) bool
}

func (d dialect) ddl(s string) string { return d.types.Replace(s) }

// bind rewrites ? placeholders for the dialect (the queries hold no literal ?).
func (d dialect) bind(q string) string {
	if !d.dollars {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// retry runs f again while another writer holds the database (SQLite's busy timeout ran out
// under a long queue of parallel CI jobs), up to a bound; its last error otherwise.
func (d dialect) retry(ctx context.Context, f func() error) error {
	const attempts = 4
	var err error
	for i := range attempts {
		err = f()
		if err == nil || d.busy == nil || !d.busy(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(i+1) * 50 * time.Millisecond):
		}
	}
	return &LockedError{Err: err}
}

// LockedError is a database another writer kept locked through every wait and retry.
type LockedError struct{ Err error }

func (e *LockedError) Error() string {
	return fmt.Sprintf("locked by another writer through every wait: %v", e.Err)
}
func (e *LockedError) Unwrap() error { return e.Err }

var sqliteDialect = dialect{
	name:  "sqlite",
	types: strings.NewReplacer("{id}", "INTEGER PRIMARY KEY AUTOINCREMENT", "{blob}", "BLOB", "{real}", "REAL"),
	busy: func(err error) bool {
		var e *sqlite.Error
		if !errors.As(err, &e) {
			return false
		}
		c := e.Code() & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	},
}

var postgresDialect = dialect{
	name:    "postgres",
	types:   strings.NewReplacer("{id}", "BIGSERIAL PRIMARY KEY", "{blob}", "BYTEA", "{real}", "DOUBLE PRECISION"),
	dollars: true,
	// Two CI jobs opening a new database at once: one migrates, the other waits and finds it
	// done. The number is this package's own lock (any constant no other tool uses).
	lockMigrations: "SELECT pg_advisory_xact_lock(4175297161)",
	// Two writers adding the same repetition at once: the second's insert meets the first's
	// row when it commits, and its transaction is run again, now finding the repetition
	// stored. A deadlock or a serialization failure is run again too.
	busy: func(err error) bool {
		var e *pgconn.PgError
		if !errors.As(err, &e) {
			return false
		}
		switch e.Code {
		case "23505", "40001", "40P01": // unique_violation, serialization_failure, deadlock_detected
			return true
		}
		return false
	},
}

func openSQLite(ctx context.Context, path string, o Options) (Store, error) {
	where := path
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return nil, fmt.Errorf("history %s is a directory: name a file (%s)", where, filepath.Join(path, "history.db"))
		}
	} else if errors.Is(err, os.ErrNotExist) {
		if o.MustExist {
			return nil, fmt.Errorf("history %s: %w (add results to it with authzbench history add)", where, ErrNoHistory)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("history %s: %w", where, err)
		}
	} else {
		return nil, fmt.Errorf("history %s: %w", where, err)
	}
	busy := o.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	// WAL lets readers go on while one writes; busy_timeout makes a writer wait for another's
	// lock rather than fail at once; _txlock=immediate takes the write lock when a transaction
	// begins, so two writers queue rather than deadlock upgrading read locks.
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", where, err)
	}
	s := &sqlStore{db: db, d: sqliteDialect, where: where}
	if err := s.init(ctx); err != nil {
		db.Close()
		var newer *NewerSchemaError
		if errors.As(err, &newer) {
			return nil, err
		}
		var e *sqlite.Error
		if errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_NOTADB {
			return nil, fmt.Errorf("history %s is not a SQLite database (corrupted, or another kind of file): %w", where, err)
		}
		return nil, fmt.Errorf("history %s: %w", where, err)
	}
	return s, nil
}

func openPostgres(ctx context.Context, dsn string) (Store, error) {
	where := dsn
	if u, err := url.Parse(dsn); err == nil {
		where = u.Redacted()
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", where, err)
	}
	connect, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(connect); err != nil {
		db.Close()
		return nil, fmt.Errorf("history %s: cannot connect: %w", where, err)
	}
	s := &sqlStore{db: db, d: postgresDialect, where: where}
	if err := s.init(ctx); err != nil {
		db.Close()
		var newer *NewerSchemaError
		if errors.As(err, &newer) {
			return nil, err
		}
		return nil, fmt.Errorf("history %s: %w", where, err)
	}
	return s, nil
}
