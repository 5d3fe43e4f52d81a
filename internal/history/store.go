// Package history keeps result documents in a database, so that every run of a project can be
// looked at again and a change can be found along its commits: an embedded SQLite file by
// default, or a shared Postgres server. It stores each document as written (any report can be
// rebuilt from the database alone), where and when it was measured (commit, branch, time, the
// testbed and the machine's whole environment), and per repetition the figures every view reads
// with its histograms; a series is one workload × target × load × testbed over the commits of a
// branch, and Changes finds where a series' figures moved (changes.go).
//
// It is not a report: it renders nothing, and reads documents only through package result.
package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Store is a history database.
type Store interface {
	// Add keeps a document and its repetitions; adding a document whose repetitions are all
	// stored already changes nothing, and says so.
	Add(ctx context.Context, in *Input) (Added, error)
	// Series lists every series, in the order of their keys.
	Series(ctx context.Context) ([]Series, error)
	// Points are a series' points along one branch (all branches when branch is ""), one per
	// commit in commit order (see Point).
	Points(ctx context.Context, series int64, branch string) ([]Point, error)
	// Document reads a stored document back, byte for byte as it was written.
	Document(ctx context.Context, id int64) (*StoredDocument, error)
	// Changes finds the change points of every series matching the filter (changes.go).
	Changes(ctx context.Context, o ChangeOptions) ([]Change, error)
	// Writable says whether Add could write: nil, or why not (a file or directory the user
	// may not write, a read-only file system, a server role without the right). It writes
	// nothing, so a run checks it before its load.
	Writable(ctx context.Context) error
	// Created reports whether this Open made the history (a new file, or an empty one).
	Created() bool
	// Where names the database for messages: the file, or the URL without its password.
	Where() string
	Close() error
}

// Added says what Add did.
type Added struct {
	Document    int64 // the stored document's id; 0 when nothing was added
	Repetitions int   // repetitions added
	// Known counts the repetitions that were stored already (the same ids, or a merge of
	// them); a document whose repetitions were all known is not added again.
	Known int
}

// Nothing reports that the document was stored already.
func (a Added) Nothing() bool { return a.Document == 0 }

// Testbed is what a series is measured on: its name, the user's (--testbed) or DefaultTestbed's,
// and the machine of the series' latest document (every document's is kept: Point.Environment).
type Testbed struct {
	Name     string `json:"name"`
	CPUModel string `json:"cpu_model"`
	Cores    int    `json:"cores"`
	Kernel   string `json:"kernel"`
	Pinning  string `json:"pinning"`
}

// Series is one workload through one target under one load on one testbed.
type Series struct {
	ID       int64     `json:"id"`
	Key      string    `json:"key"`
	Workload string    `json:"workload"`
	Target   string    `json:"target"` // the run's label: kind, TLS mode, HTTP/2, replicas
	Load     string    `json:"load"`   // "8 workers", "2,000/s x64"
	Testbed  Testbed   `json:"testbed"`
	Branches []string  `json:"branches"`
	Commits  int       `json:"commits"` // points over every branch
	Last     time.Time `json:"last"`    // the latest document's time
}

// Label names the series as a user filters it: "rbac opa/server 8 workers @amd-epyc-2c".
func (s Series) Label() string {
	return s.Workload + " " + s.Target + " " + s.Load + " @" + s.Testbed.Name
}

// Point is one commit of a series: every repetition the series' documents of that commit hold.
// Points are in commit order: the order in which their commits were first stored measured (the
// earliest document's time), which along one branch is the order CI measured them in.
type Point struct {
	Commit      string       `json:"commit"` // "" when the document recorded none
	Dirty       bool         `json:"dirty,omitempty"`
	Branch      string       `json:"branch"`
	Time        time.Time    `json:"time"`      // the earliest document's
	Documents   []int64      `json:"documents"` // their ids, for Document
	Repetitions []Repetition `json:"repetitions"`
	// Environment is what its documents recorded of the machine and the build, beyond the
	// testbed's name (EnvironmentChanges says where it changed along a series).
	Environment []Fact `json:"environment,omitempty"`
}

// Repetition is what a view reads of one stored repetition.
type Repetition struct {
	ID         string  `json:"id"`
	Document   int64   `json:"document"`
	Throughput float64 `json:"throughput_rps"`
	P50        float64 `json:"p50_us"`
	P90        float64 `json:"p90_us"`
	P99        float64 `json:"p99_us"`
	P999       float64 `json:"p999_us"`
	ErrorRatio float64 `json:"error_ratio"`
	Requests   uint64  `json:"requests"`
	OK         uint64  `json:"ok"`
	// Usable: the repetition ran to its end and served something, so its throughput and
	// latencies are figures (result.RepetitionFigures' rule).
	Usable   bool   `json:"usable"`
	HDR      string `json:"hdr,omitempty"`       // ok latencies, ns, HdrHistogram V2 compressed
	ErrorHDR string `json:"error_hdr,omitempty"` // the other responses'
}

// StoredDocument is a document as stored.
type StoredDocument struct {
	ID      int64
	Name    string // the file it was added from
	Commit  string
	Dirty   bool
	Branch  string
	Created time.Time
	Added   time.Time
	Testbed string // the name its series are filed under
	Body    []byte // the document as written
}

// Options tune how a store is opened.
type Options struct {
	// MustExist refuses a SQLite path with no database yet, rather than creating one: commands
	// that only read say "no history" instead of leaving an empty file behind.
	MustExist bool
	// BusyTimeout is how long a SQLite writer waits for another's lock before it retries, then
	// gives up; 10 s by default. A writer retries a few times, so it
	// gives up after about four times this.
	BusyTimeout time.Duration
}

// ErrNoHistory is returned by Open with MustExist for a file that does not exist, or a
// database that holds no history yet.
var ErrNoHistory = errors.New("no history database there")

// NotHistoryError is a database that is not an authzbench history: another program's (tables
// of its own), or an empty file where a history must already be. Nothing is written to it.
type NotHistoryError struct {
	Where  string
	Tables []string // the tables it holds; none for an empty file or database
}

func (e *NotHistoryError) Error() string {
	if len(e.Tables) == 0 {
		return fmt.Sprintf("history %s is empty, not an authzbench history: this command only reads one; add results with authzbench history add (nothing was changed)", e.Where)
	}
	shown := e.Tables
	if len(shown) > 5 {
		shown = append(slices.Clone(shown[:5]), "…")
	}
	return fmt.Sprintf("history %s is not an authzbench history but another database (tables %s): name the history's file, or a new one (nothing was changed)",
		e.Where, strings.Join(shown, ", "))
}

// ErrNoDocument is returned by Document for an id the database does not hold.
var ErrNoDocument = errors.New("no such document")

// IsPostgres reports whether where names a Postgres server rather than a SQLite file.
func IsPostgres(where string) bool {
	return strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://")
}

// Open opens the history at where — a postgres:// URL, or a SQLite file path ("" for
// DefaultPath) — and brings its schema up to date. A database whose schema is newer than this
// program knows is refused.
func Open(ctx context.Context, where string, o Options) (Store, error) {
	if IsPostgres(where) {
		return openPostgres(ctx, where, o)
	}
	if where == "" {
		p, err := DefaultPath()
		if err != nil {
			return nil, err
		}
		where = p
	}
	return openSQLite(ctx, where, o)
}

// DefaultPath is where the history lives when none is named: $XDG_DATA_HOME/authzbench/history.db,
// or ~/.local/share/authzbench/history.db (the XDG base directory rule).
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "authzbench", "history.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("default history: %w; name one with --history", err)
	}
	return filepath.Join(home, ".local", "share", "authzbench", "history.db"), nil
}
