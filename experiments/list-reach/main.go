// Command list-reach measures a list query's latency against the number of objects its subject
// can reach: rbac's list queries (every resource a user may read, write, delete or share, 0 to
// 500 of them) binned by the size of their expected set, each asked of OpenFGA's ListObjects (in
// process, and served over gRPC) and SpiceDB's LookupResources (served), every answer judged
// whole as a run judges it. Rounds interleave the targets; each query's latency is the median of
// its asks, each bin's the median of its queries'.
//
//	go run ./experiments/list-reach -rounds 3 -asks 15 -per-bin 8 -out docs/results/list-reach-DATE.txt
//
// spicedb/server needs authzbench-spicedb beside the go run binary or on PATH (go build -o DIR
// ./cmd/authzbench-spicedb, DIR on PATH).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/engine"
	_ "github.com/authzbench/authzbench/internal/engine/all"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// bins are the reach ranges, by the number of objects expected: [lo, hi]. rbac's answers
// cluster (a user's roles grant whole kinds: 0, 1 to 7 owned, about 120, 200, 273, 300, 420, or
// all 500 resources), and each bin holds one cluster.
var bins = [][2]int{{0, 0}, {1, 10}, {100, 150}, {190, 210}, {250, 310}, {400, 430}, {500, 500}}

// Sample is one query's median latency in one round on one target.
type Sample struct {
	Target   string  `json:"target"`
	Round    int     `json:"round"`
	Query    string  `json:"query"`
	Reach    int     `json:"reach"`
	MedianUS float64 `json:"median_us"`
}

// Bin is a reach bin's median over its queries, per target and round.
type Bin struct {
	Target   string  `json:"target"`
	Round    int     `json:"round"`
	From     int     `json:"reach_from"`
	To       int     `json:"reach_to"`
	Queries  int     `json:"queries"`
	MedianUS float64 `json:"median_us"`
}

func main() {
	engine.DispatchIfAsked() // openfga/server runs this binary as OpenFGA's server, as authzbench
	rounds := flag.Int("rounds", 3, "rounds, each asking every target in turn")
	asks := flag.Int("asks", 15, "times each query is asked a round")
	perBin := flag.Int("per-bin", 8, "queries per reach bin, at most")
	out := flag.String("out", "", "the result file (text: the command, the machine, the bins and every query's median)")
	flag.Parse()
	if *out == "" || *rounds < 1 || *asks < 1 || *perBin < 1 {
		fmt.Fprintln(os.Stderr, "list-reach: give -out FILE, and -rounds, -asks, -per-bin of 1 or more")
		os.Exit(2)
	}
	if err := run(*rounds, *asks, *perBin, *out); err != nil {
		fmt.Fprintln(os.Stderr, "list-reach:", err)
		os.Exit(1)
	}
}

func run(rounds, asks, perBin int, out string) error {
	ctx := context.Background()
	w, err := workload.Builtin("rbac")
	if err != nil {
		return err
	}
	lists, err := workload.ListQueriesOf(w, workload.Objects)
	if err != nil {
		return err
	}
	// Up to perBin queries of each bin, each asked through the first input that asks it.
	var picked []int // input numbers
	for _, b := range bins {
		n := 0
		for q := range lists.Queries {
			if r := len(lists.Queries[q].Expected); r >= b[0] && r <= b[1] && n < perBin {
				picked = append(picked, slices.Index(lists.ByInput, q))
				n++
			}
		}
	}
	tmp, err := os.MkdirTemp("", "list-reach-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	common := kinds.Common{TempDir: tmp, Prepared: engine.NewPrepared(), Workers: 1, Operation: kinds.ListObjects, Timeout: 30 * time.Second}
	// Each target with the options it is started with: OpenFGA's server over gRPC, as the
	// engines' list queries are served there.
	targets := []struct {
		name, kind string
		options    map[string]any
	}{{"openfga/inproc", "openfga/inproc", nil}, {"openfga/server grpc", "openfga/server", map[string]any{"api": "grpc"}}, {"spicedb/server", "spicedb/server", nil}}
	deciders := make([]kinds.Decider, len(targets))
	for i, t := range targets {
		k, err := kinds.LookupAny(t.kind)
		if err != nil {
			return err
		}
		c := k.NewConfig()
		if t.options != nil {
			if _, err := kinds.SetOptions(c, t.options); err != nil {
				return err
			}
		}
		tg, err := kinds.New(t.kind, common, c)
		if err != nil {
			return err
		}
		if err := tg.Start(ctx, w); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		defer tg.Stop(ctx)
		deciders[i] = tg.Worker()
		defer kinds.CloseDecider(deciders[i])
	}
	var samples []Sample
	var binned []Bin
	took := make([]time.Duration, asks)
	for round := 1; round <= rounds; round++ {
		for ti, t := range targets {
			byBin := make([][]float64, len(bins))
			for _, in := range picked {
				q := lists.Query(in)
				for a := range asks {
					began := time.Now()
					o := deciders[ti].Decide(ctx, in)
					took[a] = time.Since(began)
					if o.Kind != verify.Listed {
						return fmt.Errorf("%s: %s: %v (kind %d): every answer must be the reference model's set", t.name, q, o.Err, o.Kind)
					}
				}
				med := float64(median(took).Nanoseconds()) / 1e3
				samples = append(samples, Sample{Target: t.name, Round: round, Query: q.String(), Reach: len(q.Expected), MedianUS: med})
				for bi, b := range bins {
					if len(q.Expected) >= b[0] && len(q.Expected) <= b[1] {
						byBin[bi] = append(byBin[bi], med)
					}
				}
			}
			for bi, b := range bins {
				if len(byBin[bi]) == 0 {
					continue
				}
				slices.Sort(byBin[bi])
				binned = append(binned, Bin{Target: t.name, Round: round, From: b[0], To: b[1], Queries: len(byBin[bi]), MedianUS: byBin[bi][len(byBin[bi])/2]})
				fmt.Printf("round %d  %-20s reach %3d-%3d  %2d queries  median %9.0f µs\n", round, t.name, b[0], b[1], len(byBin[bi]), byBin[bi][len(byBin[bi])/2])
			}
		}
	}
	// Not a result document: text, as docs/results keeps other tools' outputs, beginning with
	// the command, then the machine and build as a result's env records them, the bins (the
	// lines printed above) and every query's median.
	env := bench.CaptureEnv()
	var buf strings.Builder
	fmt.Fprintf(&buf, "# go run ./experiments/list-reach %s\n", strings.Join(os.Args[1:], " "))
	fmt.Fprintf(&buf, "# created %s; %s, %d cores, GOMAXPROCS %d, %s %s, %s; authzbench %s (commit %s, modified %v); openfga %s, spicedb %s\n",
		time.Now().UTC().Format(time.RFC3339), env.CPUModel, env.Cores, env.GOMAXPROCS, env.OS, env.Kernel, env.Go,
		env.Authzbench, env.Commit, env.Modified, env.EngineVersion("openfga"), env.EngineVersion("spicedb"))
	fmt.Fprintf(&buf, "# workload rbac; each query asked %d times a round; %d rounds\n\nround\ttarget\treach_from\treach_to\tqueries\tmedian_us\n", asks, rounds)
	for _, b := range binned {
		fmt.Fprintf(&buf, "%d\t%s\t%d\t%d\t%d\t%.0f\n", b.Round, b.Target, b.From, b.To, b.Queries, b.MedianUS)
	}
	buf.WriteString("\nround\ttarget\tquery\treach\tmedian_us\n")
	for _, s := range samples {
		fmt.Fprintf(&buf, "%d\t%s\t%s\t%d\t%.0f\n", s.Round, s.Target, s.Query, s.Reach, s.MedianUS)
	}
	return os.WriteFile(out, []byte(buf.String()), 0o644)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
