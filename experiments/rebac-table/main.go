// Command rebac-table reads the result files of experiments/rebac-matrix.sh (or
// experiments/rebac-tuples.sh) and prints one Markdown row per cell, its rounds' values side by
// side in round order (a value the same in every round once): a file NAME-rROUND.json is round
// ROUND of cell NAME, and cells come in the order of their first file on the command line
// (`ls -tr`: the order they ran). Only what the results hold is printed, nothing computed beyond
// a ratio.
//
//	go run ./experiments/rebac-table $(ls -tr docs/results/rebac-matrix-uniform-2026-11-29/*.json)
//	go run ./experiments/rebac-table -tuples $(ls -tr docs/results/rebac-tuples-2026-11-29/*.json)
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
			Visible int `json:"visible"`
			Unseen  int `json:"unseen"`
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

// shortCache names a cache as the tables do.
var shortCache = strings.NewReplacer("dispatch_cache", "dispatch", "check_query_cache", "query",
	"check_iterator_cache", "iterator", "cache_controller", "controller")

var roundName = regexp.MustCompile(`^(.*)-r([0-9]+)\.json$`)

func main() {
	tuples := flag.Bool("tuples", false, "the tuple-scaling table (load rate, allowed and denied apart) instead of the matrix's")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: rebac-table [-tuples] RESULT.json...")
		os.Exit(2)
	}
	type cell struct {
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
			c = &cell{rounds: map[int][]string{}}
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
		fmt.Println("| target | datastore | tuples | P50 | P99 | P50 allow / deny | P99 allow / deny | load, tuples/s | load, s | errors, wrong |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	} else {
		fmt.Println("| target | datastore | consistency | caches | inputs | P50 | P99 | P50 from the send | hit ratio | stale / judged | flips seen / made | beyond the promise, wrong, errors | rate missed |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	}
	for _, c := range cells {
		var rounds []int
		for r := range c.rounds {
			rounds = append(rounds, r)
		}
		slices.Sort(rounds)
		cols := len(c.rounds[rounds[0]])
		var row []string
		for i := range cols {
			var vals []string
			for _, r := range rounds {
				vals = append(vals, c.rounds[r][i])
			}
			// A column the same in every round (the cell's settings, a count that did not move)
			// is written once.
			if len(slices.Compact(slices.Clone(vals))) == 1 {
				vals = vals[:1]
			}
			row = append(row, strings.Join(vals, ", "))
		}
		fmt.Println("| " + strings.Join(row, " | ") + " |")
	}
}

func matrixColumns(d doc) []string {
	r := d.Runs[0]
	s := r.Summary
	// Each cache on: its hit ratio, or "-" when it was never asked (OpenFGA's HIGHER_CONSISTENCY
	// reads past its check caches); "off" when every cache was off.
	var hit []string
	asked := false
	for _, c := range r.SUT.Caches {
		switch {
		case c.On && c.Lookups > 0:
			hit = append(hit, fmt.Sprintf("%.0f", 100*float64(c.Hits)/float64(c.Lookups)))
			asked = true
		case c.On:
			hit = append(hit, "-")
		}
	}
	hits := "off"
	switch {
	case asked:
		hits = strings.Join(hit, "/") + " %"
	case len(hit) > 0:
		hits = "0 lookups"
	}
	stale, seen, problems := "-", "-", fmt.Sprintf("%d", s.WrongDecision+s.Errors)
	if ch := r.Changes; ch != nil {
		a := ch.Answers
		judged := a.Fresh + a.Stale + a.StaleBeyondPromise + a.Wrong
		stale = fmt.Sprintf("%d/%d", a.Stale+a.StaleBeyondPromise, judged)
		// A change can be seen stale only once an input it flips is asked again after it.
		seen = fmt.Sprintf("%d/%d", ch.Visible, ch.Visible+ch.Unseen)
		problems = fmt.Sprintf("%d", a.StaleBeyondPromise+a.Wrong+s.WrongDecision+s.Errors)
	}
	missed, fromSend := "no", "-"
	if s.Open != nil {
		fromSend = dur(s.Open.FromSend.P50)
		if s.Open.RateMissed {
			missed = "yes"
		}
	}
	var on []string
	for _, c := range r.SUT.Caches {
		if c.On {
			on = append(on, shortCache.Replace(c.Name))
		}
	}
	caches := "none"
	if len(on) > 0 {
		caches = strings.Join(on, " + ")
	}
	return []string{r.Target, r.SUT.Datastore.Engine, r.SUT.Consistency.Name, caches, r.Load.InputSkew,
		dur(s.Latency.P50), dur(s.Latency.P99), fromSend, hits, stale, seen, problems, missed}
}

func tupleColumns(d doc) []string {
	r := d.Runs[0]
	s := r.Summary
	ds := r.SUT.Datastore
	return []string{r.Target, ds.Engine,
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
