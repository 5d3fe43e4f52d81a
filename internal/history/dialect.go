package history

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
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
	tables         string // lists the database's own tables, one name a row
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
	name:   "sqlite",
	tables: `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`,
	types:  strings.NewReplacer("{id}", "INTEGER PRIMARY KEY AUTOINCREMENT", "{blob}", "BLOB", "{real}", "REAL"),
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
	tables:  `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`,
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
		// Looked at read-only before it is opened to write: opening it as a history turns on
		// write-ahead logging, which rewrites the file's header, and another program's database
		// must come out of this as it went in.
		if err := probeSQLite(ctx, path, !o.MustExist); err != nil {
			return nil, err
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
	if err := s.init(ctx, !o.MustExist); err != nil {
		db.Close()
		return nil, sqliteOpenError(where, err)
	}
	return s, nil
}

// sqliteHeader begins every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// probeSQLite refuses, without writing to it, a file that is not a history: not a SQLite
// database, another program's database, or (unless create) an empty file.
func probeSQLite(ctx context.Context, path string, create bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("history %s: %w", path, err)
	}
	head := make([]byte, len(sqliteHeader))
	n, _ := io.ReadFull(f, head)
	f.Close()
	if n == 0 {
		return checkHistory(path, nil, create)
	}
	if !bytes.Equal(head[:n], sqliteHeader) {
		return fmt.Errorf("history %s is not a SQLite database (corrupted, or another kind of file): nothing was changed", path)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(10000)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("history %s: %w", path, err)
	}
	defer db.Close()
	tables, err := listTables(ctx, db, sqliteDialect)
	if err != nil {
		return sqliteOpenError(path, err)
	}
	return checkHistory(path, tables, create)
}

// sqliteOpenError says why a SQLite history could not be opened, in the user's words where
// SQLite's are obscure.
func sqliteOpenError(where string, err error) error {
	var newer *NewerSchemaError
	var notHistory *NotHistoryError
	if errors.As(err, &newer) || errors.As(err, &notHistory) {
		return err
	}
	var e *sqlite.Error
	if errors.As(err, &e) {
		switch e.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("history %s is not a SQLite database (corrupted, or another kind of file): %w", where, err)
		case sqlite3.SQLITE_READONLY:
			return fmt.Errorf("history %s: %w (a history written by an older authzbench is brought up to date when opened, which needs write access once)", where, err)
		}
	}
	return fmt.Errorf("history %s: %w", where, err)
}

func openPostgres(ctx context.Context, dsn string, o Options) (Store, error) {
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
	if err := s.init(ctx, !o.MustExist); err != nil {
		db.Close()
		var newer *NewerSchemaError
		var notHistory *NotHistoryError
		if errors.As(err, &newer) || errors.As(err, &notHistory) {
			return nil, err
		}
		return nil, fmt.Errorf("history %s: %w", where, err)
	}
	return s, nil
}
