// Command rebac-table reads the result files of experiments/rebac-matrix.sh (or
// experiments/rebac-tuples.sh) and prints one Markdown row per cell, its rounds' values side by
// side in round order: a file NAME-rROUND.json is round ROUND of cell NAME. Only what the results
// hold is printed, nothing computed beyond a ratio and a share.
//
//	go run ./experiments/rebac-table docs/results/rebac-matrix-uniform-2026-11-29/*.json
//	go run ./experiments/rebac-table -tuples docs/results/rebac-tuples-2026-11-29/*.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// doc is the part of a result file this table reads.
type doc struct {
	Runs []struct {
		Target string `json:"target"`
		SUT    struct {
			Datastore struct {
				Engine          string  `json:"engine"`
				Tuples          int     `json:"tuples"`
				TuplesPerSecond float64 `json:"tuples_per_second"`
				LoadSeconds     float64 `json:"load_seconds"`
			} `json:"datastore"`
			Caches []struct {
				Name    string `json:"name"`
				On      bool   `json:"on"`
				Lookups int64  `json:"lookups"`
				Hits    int64  `json:"hits"`
			} `json:"caches"`
			Consistency struct {
				Name string `json:"name"`
			} `json:"consistency"`
		} `json:"sut"`
		Load struct {
			InputSkew string `json:"input_skew"`
		} `json:"load"`
		Summary struct {
			Requests      int64       `json:"requests"`
			WrongDecision int64       `json:"wrong_decision"`
			Errors        int64       `json:"errors"`
			Latency       percentiles `json:"latency_us"`
			Throughput    struct {
				Mean float64 `json:"mean"`
			} `json:"throughput_rps"`
			Decisions map[string]struct {
				Count   int64       `json:"count"`
				Latency percentiles `json:"latency_us"`
			} `json:"decisions"`
			Open *struct {
				RateMissed bool        `json:"rate_missed"`
				FromSend   percentiles `json:"uncorrected_latency_us"`
			} `json:"open"`
		} `json:"summary"`
		Changes *struct {
			Applied int `json:"applied"`
			Answers struct {
				Fresh              int64 `json:"fresh"`
				Stale              int64 `json:"stale"`
				StaleBeyondPromise int64 `json:"stale_beyond_promise"`
				Wrong              int64 `json:"wrong"`
			} `json:"answers"`
		} `json:"changes"`
	} `json:"runs"`
}

type percentiles struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

var roundName = regexp.MustCompile(`^(.*)-r([0-9]+)\.json$`)

func main() {
	tuples := flag.Bool("tuples", false, "the tuple-scaling table (load rate, allowed and denied apart) instead of the matrix's")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: rebac-table [-tuples] RESULT.json...")
		os.Exit(2)
	}
	type cell struct {
		name   string
		rounds map[int][]string
	}
	var cells []*cell
	byName := map[string]*cell{}
	for _, path := range flag.Args() {
		m := roundName.FindStringSubmatch(filepath.Base(path))
		if m == nil {
			fmt.Fprintf(os.Stderr, "%s: not NAME-rROUND.json\n", path)
			os.Exit(2)
		}
		round, _ := strconv.Atoi(m[2])
		raw, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var d doc
		if err := json.Unmarshal(raw, &d); err != nil || len(d.Runs) != 1 {
			fmt.Fprintf(os.Stderr, "%s: want a result of one run (%v)\n", path, err)
			os.Exit(1)
		}
		c := byName[m[1]]
		if c == nil {
			c = &cell{name: m[1], rounds: map[int][]string{}}
			byName[m[1]] = c
			cells = append(cells, c)
		}
		if *tuples {
			c.rounds[round] = tupleColumns(d)
		} else {
			c.rounds[round] = matrixColumns(d)
		}
	}
	if *tuples {
		fmt.Println("| cell | tuples | P50 | P99 | P50 allow / deny | P99 allow / deny | load, tuples/s | load, s | errors, wrong |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|")
	} else {
		fmt.Println("| cell | P50 / P99 | P50 / P99 from the send | P50 allow / deny | hit ratio | stale (of checks) | beyond promise, wrong, errors | writes | rate missed |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|")
	}
	for _, c := range cells {
		var rounds []int
		for r := range c.rounds {
			rounds = append(rounds, r)
		}
		slices.Sort(rounds)
		cols := len(c.rounds[rounds[0]])
		row := []string{c.name}
		for i := range cols {
			var vals []string
			for _, r := range rounds {
				vals = append(vals, c.rounds[r][i])
			}
			row = append(row, strings.Join(vals, ", "))
		}
		fmt.Println("| " + strings.Join(row, " | ") + " |")
	}
}

func matrixColumns(d doc) []string {
	r := d.Runs[0]
	s := r.Summary
	var hit []string
	for _, c := range r.SUT.Caches {
		switch {
		case c.On && c.Lookups > 0:
			hit = append(hit, fmt.Sprintf("%.0f %%", 100*float64(c.Hits)/float64(c.Lookups)))
		case c.On:
			// On, and never asked: OpenFGA's HIGHER_CONSISTENCY reads past its check caches.
			hit = append(hit, "0 lookups")
		}
	}
	hits := "-"
	if len(hit) > 0 {
		hits = strings.Join(hit, " / ")
	}
	stale, beyond, wrong, writes := "-", "-", "-", "-"
	if ch := r.Changes; ch != nil {
		a := ch.Answers
		judged := a.Fresh + a.Stale + a.StaleBeyondPromise + a.Wrong
		stale = fmt.Sprintf("%d of %d", a.Stale+a.StaleBeyondPromise, judged)
		beyond = strconv.FormatInt(a.StaleBeyondPromise, 10)
		wrong = strconv.FormatInt(a.Wrong, 10)
		writes = strconv.Itoa(ch.Applied)
	}
	missed, fromSend := "no", "-"
	if s.Open != nil {
		fromSend = dur(s.Open.FromSend.P50) + " / " + dur(s.Open.FromSend.P99)
		if s.Open.RateMissed {
			missed = "yes"
		}
	}
	return []string{
		dur(s.Latency.P50) + " / " + dur(s.Latency.P99), fromSend,
		dur(s.Decisions["allow"].Latency.P50) + " / " + dur(s.Decisions["deny"].Latency.P50),
		hits, stale,
		fmt.Sprintf("%s, %s, %d", beyond, wrong, s.Errors),
		writes, missed,
	}
}

func tupleColumns(d doc) []string {
	r := d.Runs[0]
	s := r.Summary
	ds := r.SUT.Datastore
	return []string{
		strconv.Itoa(ds.Tuples), dur(s.Latency.P50), dur(s.Latency.P99),
		dur(s.Decisions["allow"].Latency.P50) + " / " + dur(s.Decisions["deny"].Latency.P50),
		dur(s.Decisions["allow"].Latency.P99) + " / " + dur(s.Decisions["deny"].Latency.P99),
		fmt.Sprintf("%.0f", ds.TuplesPerSecond), fmt.Sprintf("%.1f", ds.LoadSeconds),
		fmt.Sprintf("%d, %d", s.Errors, s.WrongDecision),
	}
}

// dur writes microseconds as the reports do: µs below a millisecond, ms to three figures above.
func dur(us float64) string {
	switch {
	case us == 0:
		return "-"
	case us < 1000:
		return fmt.Sprintf("%.0f µs", us)
	case us < 10_000:
		return fmt.Sprintf("%.2f ms", us/1000)
	case us < 100_000:
		return fmt.Sprintf("%.1f ms", us/1000)
	default:
		return fmt.Sprintf("%.0f ms", us/1000)
	}
}
