package history

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// sqlStore is the Store both databases share: one SQL layer, the dialect filling in what they
// spell differently.
type sqlStore struct {
	db      *sql.DB
	d       dialect
	where   string
	created bool
}

func (s *sqlStore) Where() string { return s.where }
func (s *sqlStore) Close() error  { return s.db.Close() }
func (s *sqlStore) Created() bool { return s.created }

// init brings the schema up to date; create says whether a database with no history yet may
// become one.
func (s *sqlStore) init(ctx context.Context, create bool) error {
	from, err := migrate(ctx, s.db, s.d, s.where, create)
	s.created = err == nil && from == 0
	return err
}

// Writable tries what Add does first, a write inside a transaction, and rolls it back: a file
// or a directory the user may not write, a read-only file system or a role without the right
// fails here as it would fail the add. Another writer's lock is no answer either way: the
// add will wait for it as it always does.
func (s *sqlStore) Writable(ctx context.Context) error {
	err := func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		_, err = tx.ExecContext(ctx, s.d.bind(`INSERT INTO testbeds (key, cpu_model, cores, kernel, pinning) VALUES (?, '', 0, '', '')`),
			"authzbench: can it be written?")
		return err
	}()
	if err == nil || s.d.busy != nil && s.d.busy(err) {
		return nil
	}
	return fmt.Errorf("history %s cannot be written: %w", s.where, err)
}

// timeFormat stores times as text that sorts as time does, alike in both databases.
const timeFormat = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeFormat, s)
	return t
}

func (s *sqlStore) Add(ctx context.Context, in *Input) (Added, error) {
	var added Added
	err := s.d.retry(ctx, func() error {
		var err error
		added, err = s.add(ctx, in)
		return err
	})
	if err != nil {
		return Added{}, fmt.Errorf("history %s: add %s: %w", s.where, in.Name, err)
	}
	return added, nil
}

func (s *sqlStore) add(ctx context.Context, in *Input) (Added, error) {
	if err := CheckAddable(in.Doc); err != nil {
		return Added{}, err
	}
	testbed := in.Testbed
	if testbed == "" {
		testbed = TestbedName(in.Doc.Env)
	}
	if err := result.CheckTestbed(testbed); err != nil {
		return Added{}, err
	}
	env, err := json.Marshal(in.Doc.Env)
	if err != nil {
		return Added{}, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Added{}, err
	}
	defer tx.Rollback()
	q := func(query string) string { return s.d.bind(query) }
	exists := func(query string, args ...any) (bool, error) {
		var one int
		err := tx.QueryRowContext(ctx, q(query), args...).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}

	sum := sha256.Sum256(in.Body)
	digest := hex.EncodeToString(sum[:])
	var added Added
	total := 0
	for ri := range in.Doc.Runs {
		for pi := range in.Doc.Runs[ri].Repetitions {
			total++
			for _, key := range repetitionKeys(&in.Doc.Runs[ri].Repetitions[pi]) {
				known, err := exists(`SELECT 1 FROM repetition_keys WHERE key = ?`, key)
				if err != nil {
					return Added{}, err
				}
				if known {
					added.Known++
					break
				}
			}
		}
	}
	if total > 0 && added.Known == total {
		return added, nil
	}
	if same, err := exists(`SELECT 1 FROM documents WHERE sha256 = ?`, digest); err != nil || same {
		return Added{Known: added.Known}, err
	}

	// A testbed's row holds its name; the machine it stood for when first seen is kept for
	// readers of the table, every document's own in documents.env.
	if _, err := tx.ExecContext(ctx, q(`INSERT INTO testbeds (key, cpu_model, cores, kernel, pinning) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (key) DO NOTHING`), testbed, in.Doc.Env.CPUModel, in.Doc.Env.Cores, in.Doc.Env.Kernel, in.Doc.Env.Pinning); err != nil {
		return Added{}, err
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(in.Body)
	if err := zw.Close(); err != nil {
		return Added{}, err
	}
	commit, dirty := commitOf(in.Doc.Env)
	if err := tx.QueryRowContext(ctx, q(`INSERT INTO documents (name, sha256, commit_hash, dirty, branch, created, added, testbed, encoding, body, env)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		in.Name, digest, commit, boolInt(dirty), in.Branch, formatTime(in.Doc.Created), formatTime(time.Now()), testbed, "gzip", zipped.Bytes(), string(env),
	).Scan(&added.Document); err != nil {
		return Added{}, err
	}
	for ri := range in.Doc.Runs {
		run := &in.Doc.Runs[ri]
		series := seriesOf(run, testbed)
		if _, err := tx.ExecContext(ctx, q(`INSERT INTO series (key, workload, target, load, testbed) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (key) DO NOTHING`), series.Key, series.Workload, series.Target, series.Load, testbed); err != nil {
			return Added{}, err
		}
		if err := tx.QueryRowContext(ctx, q(`SELECT id FROM series WHERE key = ?`), series.Key).Scan(&series.ID); err != nil {
			return Added{}, err
		}
		var runID int64
		if err := tx.QueryRowContext(ctx, q(`INSERT INTO runs (document_id, run_index, series_id, engine) VALUES (?, ?, ?, ?) RETURNING id`),
			added.Document, ri, series.ID, engineOf(run)).Scan(&runID); err != nil {
			return Added{}, err
		}
		for pi := range run.Repetitions {
			rep := &run.Repetitions[pi]
			keys := repetitionKeys(rep)
			known := false
			for _, key := range keys {
				if known, err = exists(`SELECT 1 FROM repetition_keys WHERE key = ?`, key); err != nil {
					return Added{}, err
				} else if known {
					break
				}
			}
			if known {
				continue
			}
			f := figuresOf(rep)
			if _, err := tx.ExecContext(ctx, q(`INSERT INTO repetitions (id, run_id, document_id, series_id, rep_index,
				throughput_rps, p50_us, p90_us, p99_us, p999_us, error_ratio, requests, ok, usable, hdr, error_hdr)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
				f.ID, runID, added.Document, series.ID, pi, f.Throughput, f.P50, f.P90, f.P99, f.P999, f.ErrorRatio,
				int64(f.Requests), int64(f.OK), boolInt(f.Usable), f.HDR, f.ErrorHDR); err != nil {
				return Added{}, err
			}
			for _, key := range keys {
				if _, err := tx.ExecContext(ctx, q(`INSERT INTO repetition_keys (key, repetition_id) VALUES (?, ?)`), key, f.ID); err != nil {
					return Added{}, err
				}
			}
			added.Repetitions++
		}
	}
	return added, tx.Commit()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *sqlStore) Series(ctx context.Context) ([]Series, error) {
	// Through the repetitions, as Points reads a series: a document whose repetitions of this
	// series were all stored before (a merge of files already added) is no point of it.
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT s.id, s.key, s.workload, s.target, s.load, s.testbed,
		d.branch, d.commit_hash, d.id, d.created, d.env
		FROM series s JOIN repetitions r ON r.series_id = s.id JOIN documents d ON d.id = r.document_id
		ORDER BY s.key, d.created, d.id`)
	if err != nil {
		return nil, fmt.Errorf("history %s: list series: %w", s.where, err)
	}
	defer rows.Close()
	var out []Series
	commits := map[int64]map[string]bool{}
	lastEnv := map[int64]string{}
	for rows.Next() {
		var se Series
		var branch, commit, created, env string
		var doc int64
		if err := rows.Scan(&se.ID, &se.Key, &se.Workload, &se.Target, &se.Load, &se.Testbed.Name,
			&branch, &commit, &doc, &created, &env); err != nil {
			return nil, fmt.Errorf("history %s: list series: %w", s.where, err)
		}
		if len(out) == 0 || out[len(out)-1].ID != se.ID {
			out = append(out, se)
			commits[se.ID] = map[string]bool{}
		}
		last := &out[len(out)-1]
		if !slices.Contains(last.Branches, branch) {
			last.Branches = append(last.Branches, branch)
		}
		commits[se.ID][branch+"\x00"+pointKey(commit, doc)] = true
		last.Commits = len(commits[se.ID])
		if t := parseTime(created); !t.Before(last.Last) {
			last.Last = t
			lastEnv[se.ID] = env
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: list series: %w", s.where, err)
	}
	for i := range out {
		var env result.Env
		if json.Unmarshal([]byte(lastEnv[out[i].ID]), &env) == nil {
			tb := &out[i].Testbed
			tb.CPUModel, tb.Cores, tb.Kernel, tb.Pinning = env.CPUModel, env.Cores, env.Kernel, env.Pinning
		}
	}
	return out, nil
}

// pointKey groups a series' documents into points: by commit, or each document on its own when
// it recorded none.
func pointKey(commit string, doc int64) string {
	if commit == "" {
		return fmt.Sprintf("document %d", doc)
	}
	return commit
}

func (s *sqlStore) Points(ctx context.Context, series int64, branch string) ([]Point, error) {
	query := `SELECT d.id, d.commit_hash, d.dirty, d.branch, d.created, d.env, ru.engine,
		r.id, r.throughput_rps, r.p50_us, r.p90_us, r.p99_us, r.p999_us, r.error_ratio, r.requests, r.ok, r.usable, r.hdr, r.error_hdr
		FROM repetitions r JOIN documents d ON d.id = r.document_id JOIN runs ru ON ru.id = r.run_id
		WHERE r.series_id = ?`
	args := []any{series}
	if branch != "" {
		query += ` AND d.branch = ?`
		args = append(args, branch)
	}
	query += ` ORDER BY d.created, d.id, r.run_id, r.rep_index`
	rows, err := s.db.QueryContext(ctx, s.d.bind(query), args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: read series %d: %w", s.where, series, err)
	}
	defer rows.Close()
	var out []Point
	at := map[string]int{}
	// Each document's facts, once per run it holds in the series (a run is one engine).
	facts := map[int][]map[string]string{}
	envs := map[int64]result.Env{}
	seenRun := map[string]bool{}
	for rows.Next() {
		var doc int64
		var commit, br, created, env, engine string
		var dirty, usable int
		var requests, ok int64
		var r Repetition
		if err := rows.Scan(&doc, &commit, &dirty, &br, &created, &env, &engine, &r.ID, &r.Throughput, &r.P50, &r.P90, &r.P99, &r.P999,
			&r.ErrorRatio, &requests, &ok, &usable, &r.HDR, &r.ErrorHDR); err != nil {
			return nil, fmt.Errorf("history %s: read series %d: %w", s.where, series, err)
		}
		r.Document, r.Requests, r.OK, r.Usable = doc, uint64(requests), uint64(ok), usable != 0
		key := br + "\x00" + pointKey(commit, doc)
		i, seen := at[key]
		if !seen {
			i = len(out)
			at[key] = i
			out = append(out, Point{Commit: commit, Branch: br, Time: parseTime(created)})
		}
		p := &out[i]
		p.Dirty = p.Dirty || dirty != 0
		if !slices.Contains(p.Documents, doc) {
			p.Documents = append(p.Documents, doc)
		}
		if runKey := fmt.Sprintf("%d\x00%s", doc, engine); !seenRun[runKey] {
			seenRun[runKey] = true
			e, parsed := envs[doc]
			if !parsed {
				json.Unmarshal([]byte(env), &e) // a document stored before its environment was kept has none: no facts
				envs[doc] = e
			}
			facts[i] = append(facts[i], factsOf(e, engine))
		}
		p.Repetitions = append(p.Repetitions, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: read series %d: %w", s.where, series, err)
	}
	for i := range out {
		out[i].Environment = pointFacts(facts[i])
	}
	return out, nil
}

func (s *sqlStore) Document(ctx context.Context, id int64) (*StoredDocument, error) {
	d := &StoredDocument{ID: id}
	var dirty int
	var created, added, encoding string
	var body []byte
	err := s.db.QueryRowContext(ctx, s.d.bind(`SELECT d.name, d.commit_hash, d.dirty, d.branch, d.created, d.added, d.encoding, d.body, d.testbed
		FROM documents d WHERE d.id = ?`), id).Scan(
		&d.Name, &d.Commit, &dirty, &d.Branch, &created, &added, &encoding, &body, &d.Testbed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("history %s: document %d: %w", s.where, id, ErrNoDocument)
	}
	if err != nil {
		return nil, fmt.Errorf("history %s: read document %d: %w", s.where, id, err)
	}
	d.Dirty, d.Created, d.Added = dirty != 0, parseTime(created), parseTime(added)
	switch encoding {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err == nil {
			d.Body, err = io.ReadAll(zr)
		}
		if err != nil {
			return nil, fmt.Errorf("history %s: document %d: %w", s.where, id, err)
		}
	case "plain":
		d.Body = body
	default:
		return nil, fmt.Errorf("history %s: document %d: unknown encoding %q", s.where, id, encoding)
	}
	return d, nil
}

// matches reports whether a series' label holds every word of the filter, in any case.
func matches(se Series, filter string) bool {
	label := strings.ToLower(se.Label())
	for _, w := range strings.Fields(strings.ToLower(filter)) {
		if !strings.Contains(label, w) {
			return false
		}
	}
	return true
}
