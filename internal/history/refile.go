package history

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"

	"github.com/authzbench/authzbench/internal/result"
)

// refile is schema version 2's data step, run once on a history written before testbeds were
// named. Every document is read back as stored, and:
//
//   - its whole environment is kept beside it, and each of its runs the engine it measured;
//   - it is filed under its testbed's name: the one it recorded, or DefaultTestbed's (CPU
//     model, cores, pinning), so the series that differed only by a kernel build are one
//     series again, their points in the order they were measured;
//   - each run's series is keyed by that name and the load's whole identity: two stage
//     schedules, or two replays, were one series before and are two now;
//   - a shard (--shard i/N), added before shards were refused, leaves every series: its
//     repetitions measured its share of the load and read as a whole run's. The document is
//     kept as written; the merge of its shards, which read as already stored, can now be added.
//
// A series keeps its id when its runs all stay together (the first document's series keeps its
// id when several are joined), so a link to a series page still leads to it.
func refile(ctx context.Context, tx *sql.Tx, d dialect) error {
	q := d.bind
	// Every key is freed first, so a new key never meets an old one half way through.
	if _, err := tx.ExecContext(ctx, `UPDATE series SET key = 'refile ' || CAST(id AS TEXT)`); err != nil {
		return err
	}
	ids, err := int64s(ctx, tx, `SELECT id FROM documents ORDER BY id`)
	if err != nil {
		return err
	}
	seriesOfKey := map[string]int64{}
	claimed := map[int64]bool{}
	for _, id := range ids {
		var encoding string
		var body []byte
		if err := tx.QueryRowContext(ctx, q(`SELECT encoding, body FROM documents WHERE id = ?`), id).Scan(&encoding, &body); err != nil {
			return err
		}
		doc, err := storedDocument(encoding, body)
		if err != nil {
			return fmt.Errorf("document %d: %w", id, err)
		}
		testbed := TestbedName(doc.Env)
		env, err := json.Marshal(doc.Env)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q(`INSERT INTO testbeds (key, cpu_model, cores, kernel, pinning) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (key) DO NOTHING`), testbed, doc.Env.CPUModel, doc.Env.Cores, doc.Env.Kernel, doc.Env.Pinning); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q(`UPDATE documents SET env = ?, testbed = ? WHERE id = ?`), string(env), testbed, id); err != nil {
			return err
		}
		if doc.Shard != nil {
			for _, stmt := range []string{
				`DELETE FROM repetition_keys WHERE repetition_id IN (SELECT id FROM repetitions WHERE document_id = ?)`,
				`DELETE FROM repetitions WHERE document_id = ?`,
				`DELETE FROM runs WHERE document_id = ?`,
			} {
				if _, err := tx.ExecContext(ctx, q(stmt), id); err != nil {
					return err
				}
			}
			continue
		}
		type run struct{ id, index, series int64 }
		var runs []run
		rows, err := tx.QueryContext(ctx, q(`SELECT id, run_index, series_id FROM runs WHERE document_id = ? ORDER BY id`), id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r run
			if err := rows.Scan(&r.id, &r.index, &r.series); err != nil {
				rows.Close()
				return err
			}
			runs = append(runs, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range runs {
			if r.index < 0 || int(r.index) >= len(doc.Runs) {
				return fmt.Errorf("document %d has no run %d", id, r.index)
			}
			dr := &doc.Runs[r.index]
			se := seriesOf(dr, testbed)
			target, ok := seriesOfKey[se.Key]
			switch {
			case ok:
			case !claimed[r.series]:
				target = r.series
				claimed[target] = true
				if _, err := tx.ExecContext(ctx, q(`UPDATE series SET key = ?, workload = ?, target = ?, load = ?, testbed = ? WHERE id = ?`),
					se.Key, se.Workload, se.Target, se.Load, testbed, target); err != nil {
					return err
				}
			default:
				if err := tx.QueryRowContext(ctx, q(`INSERT INTO series (key, workload, target, load, testbed) VALUES (?, ?, ?, ?, ?) RETURNING id`),
					se.Key, se.Workload, se.Target, se.Load, testbed).Scan(&target); err != nil {
					return err
				}
				claimed[target] = true
			}
			seriesOfKey[se.Key] = target
			if _, err := tx.ExecContext(ctx, q(`UPDATE runs SET series_id = ?, engine = ? WHERE id = ?`), target, engineOf(dr), r.id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, q(`UPDATE repetitions SET series_id = ? WHERE run_id = ?`), target, r.id); err != nil {
				return err
			}
		}
	}
	for _, stmt := range []string{
		`DELETE FROM series WHERE id NOT IN (SELECT series_id FROM runs)`,
		`DELETE FROM testbeds WHERE key NOT IN (SELECT testbed FROM documents) AND key NOT IN (SELECT testbed FROM series)`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// storedDocument decodes a document as the documents table holds it.
func storedDocument(encoding string, body []byte) (*result.Document, error) {
	switch encoding {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		if body, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	case "plain":
	default:
		return nil, fmt.Errorf("unknown encoding %q", encoding)
	}
	var doc result.Document
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

func int64s(ctx context.Context, tx *sql.Tx, query string) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
