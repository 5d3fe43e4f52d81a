package history

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// migration is one version of the schema: DDL, then, when the data must be rewritten to fit
// it, a step in Go, both in the migration's one transaction.
type migration struct {
	ddl  string
	data func(ctx context.Context, tx *sql.Tx, d dialect) error
}

// migrations are the schema's versions, in order: migrations[i] brings a database from version
// i to i+1. A released migration is never edited; a change is a new one.
//
// The DDL is written once for both databases; dialect.ddl fills in the few words they spell
// differently ({id}, {blob}, {real}).
var migrations = []migration{{ddl:
// 1: documents as written, the testbeds, the series, and per repetition the figures every
// view reads with its histograms; repetition_keys holds every identity a repetition is
// known by (its id, the shards it adds up), each once.
`CREATE TABLE testbeds (
		key TEXT PRIMARY KEY,
		cpu_model TEXT NOT NULL,
		cores INTEGER NOT NULL,
		kernel TEXT NOT NULL,
		pinning TEXT NOT NULL
	);
	CREATE TABLE documents (
		id {id},
		name TEXT NOT NULL,
		sha256 TEXT NOT NULL UNIQUE,
		commit_hash TEXT NOT NULL,
		dirty INTEGER NOT NULL,
		branch TEXT NOT NULL,
		created TEXT NOT NULL,
		added TEXT NOT NULL,
		testbed TEXT NOT NULL REFERENCES testbeds(key),
		encoding TEXT NOT NULL,
		body {blob} NOT NULL
	);
	CREATE INDEX documents_branch_created ON documents(branch, created);
	CREATE TABLE series (
		id {id},
		key TEXT NOT NULL UNIQUE,
		workload TEXT NOT NULL,
		target TEXT NOT NULL,
		load TEXT NOT NULL,
		testbed TEXT NOT NULL REFERENCES testbeds(key)
	);
	CREATE TABLE runs (
		id {id},
		document_id BIGINT NOT NULL REFERENCES documents(id),
		run_index INTEGER NOT NULL,
		series_id BIGINT NOT NULL REFERENCES series(id)
	);
	CREATE TABLE repetitions (
		id TEXT PRIMARY KEY,
		run_id BIGINT NOT NULL REFERENCES runs(id),
		document_id BIGINT NOT NULL REFERENCES documents(id),
		series_id BIGINT NOT NULL REFERENCES series(id),
		rep_index INTEGER NOT NULL,
		throughput_rps {real} NOT NULL,
		p50_us {real} NOT NULL,
		p90_us {real} NOT NULL,
		p99_us {real} NOT NULL,
		p999_us {real} NOT NULL,
		error_ratio {real} NOT NULL,
		requests BIGINT NOT NULL,
		ok BIGINT NOT NULL,
		usable INTEGER NOT NULL,
		hdr TEXT NOT NULL,
		error_hdr TEXT NOT NULL
	);
	CREATE INDEX repetitions_series ON repetitions(series_id);
	CREATE TABLE repetition_keys (
		key TEXT PRIMARY KEY,
		repetition_id TEXT NOT NULL REFERENCES repetitions(id)
	);`}, {
	// 2: testbeds named (refile.go): each document keeps its whole environment, each run the
	// engine it measured, and the series are keyed by the testbed's name and the load's whole
	// identity; series of a machine whose kernel build alone changed are one series again.
	ddl: `ALTER TABLE documents ADD COLUMN env TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN engine TEXT NOT NULL DEFAULT ''`,
	data: refile,
}}

// SchemaVersion is the schema this program writes.
var SchemaVersion = len(migrations)

// NewerSchemaError is a database written by a newer authzbench: reading it could misread
// tables this version does not know, and writing could break them.
type NewerSchemaError struct {
	Where         string
	Version, Know int
}

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("history %s has schema version %d; this authzbench knows up to %d: use a newer authzbench (nothing was changed)",
		e.Where, e.Version, e.Know)
}

// historyTables are the tables that make a database an authzbench history, beside
// schema_version: another program may well have a schema_version of its own.
var historyTables = []string{"schema_version", "documents", "repetition_keys"}

// checkHistory says whether a database holding tables is a history (nil), one that may become
// one (create, and it holds no table), or neither.
func checkHistory(where string, tables []string, create bool) error {
	if len(tables) == 0 {
		if create {
			return nil
		}
		return &NotHistoryError{Where: where}
	}
	for _, t := range historyTables {
		if !slices.Contains(tables, t) {
			return &NotHistoryError{Where: where, Tables: tables}
		}
	}
	return nil
}

// migrate brings the database's schema up to SchemaVersion in one transaction, or refuses a
// newer one, or a database that is not a history (another program's, or, unless create, an
// empty one) before writing anything to it. Concurrent openers serialise on the dialect's
// lock, so each migration runs once. It returns the version it found: 0 for a new history.
func migrate(ctx context.Context, db *sql.DB, d dialect, where string, create bool) (from int, err error) {
	tables, err := listTables(ctx, db, d)
	if err != nil {
		return 0, err
	}
	if err := checkHistory(where, tables, create); err != nil {
		return 0, err
	}
	// A database already at this version needs no write lock: opening it to read, or to add
	// once another writer's lock is gone, must not wait for that writer.
	var version int
	if len(tables) > 0 {
		if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&version); err != nil {
			return 0, err
		}
		switch {
		case version > SchemaVersion:
			return version, &NewerSchemaError{Where: where, Version: version, Know: SchemaVersion}
		case version == SchemaVersion:
			return version, nil
		}
	}
	err = d.retry(ctx, func() error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if d.lockMigrations != "" {
			if _, err := tx.ExecContext(ctx, d.lockMigrations); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&version); err != nil {
			return err
		}
		from = version
		if version > SchemaVersion {
			return &NewerSchemaError{Where: where, Version: version, Know: SchemaVersion}
		}
		for v := version; v < SchemaVersion; v++ {
			for _, stmt := range strings.Split(d.ddl(migrations[v].ddl), ";") {
				if strings.TrimSpace(stmt) == "" {
					continue
				}
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("migrate to schema version %d: %w", v+1, err)
				}
			}
			if migrations[v].data != nil {
				if err := migrations[v].data(ctx, tx, d); err != nil {
					return fmt.Errorf("migrate to schema version %d: %w", v+1, err)
				}
			}
			if _, err := tx.ExecContext(ctx, d.bind(`INSERT INTO schema_version (version) VALUES (?)`), v+1); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
	return from, err
}

// listTables are the tables of the database, sorted.
func listTables(ctx context.Context, db *sql.DB, d dialect) ([]string, error) {
	rows, err := db.QueryContext(ctx, d.tables)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out, rows.Err()
}
