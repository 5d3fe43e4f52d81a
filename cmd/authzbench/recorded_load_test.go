package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// What is recorded is what was done (issue 23, class 4): the load a result records is the load
// that ran. A rate the pacer cannot keep is refused before any load, naming the ceiling; a
// load that names both the closed loop (workers) and the open loop (a rate) in one place is
// refused, from flags and from a file alike (one rule, load.Spec's); and a rate's window holds
// exactly rate × window sends, for one generator and for shards added up.
func TestRecordedLoadIsTheLoadThatRan(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const ceiling = "above the pacer's ceiling of 1e+09/s"
	const together = "given together: workers sets the closed loop, rate the open loop"
	fast := []string{"--target", "opa/inproc", "--workload", "nop", "--duration", "200ms", "--warmup", "0s", "--no-progress"}
	for _, tc := range []struct {
		name string
		args []string
		want []string // in stderr, in this order
	}{
		// The ceiling, wherever a rate is given.
		{"--rate above the ceiling", append([]string{"run", "--rate", "1e12"}, fast...), []string{"--rate 1e+12/s is " + ceiling}},
		{"--rate just above the ceiling", append([]string{"run", "--rate", "1000000001"}, fast...), []string{"--rate 1.000000001e+09/s is " + ceiling}},
		{"--rates with a step above the ceiling", append([]string{"run", "--rates", "100,2e9"}, fast...), []string{"--rates: 2e+09/s is " + ceiling}},
		{"--load-points above the ceiling", append([]string{"run", "--load-points", "2e9x4"}, fast...), []string{"--load-points 2e+09/s is " + ceiling}},
		{"scenario rate above the ceiling", []string{"run", "-f", write("rate.yaml", "load: {duration: 200ms, warmup: 0s}\nworkloads: [nop]\ntargets:\n  - target: opa/inproc\n    load: {rate: 1e12}\n")},
			[]string{"rate.yaml:5: rate 1e+12/s is " + ceiling}},
		{"scenario rates above the ceiling", []string{"run", "-f", write("rates.yaml", "load:\n  duration: 200ms\n  rates: [10, 5e9]\nworkloads: [nop]\ntargets: [opa/inproc]\n")},
			[]string{"rates.yaml:3: rates: 5e+09/s is " + ceiling}},
		{"capacity --max above the ceiling", []string{"capacity", "--target", "opa/inproc", "--workload", "nop", "--slo", "p99=5ms", "--max", "1e12"},
			[]string{"--max 1e+12/s is " + ceiling}},
		{"calibrate --rate above the ceiling", []string{"calibrate", "--rate", "1e10"}, []string{"--rate 1e+10/s is " + ceiling}},
		{"--rate NaN", append([]string{"run", "--rate", "NaN"}, fast...), []string{"--rate must be a finite number, got NaN"}},

		// Workers and a rate in one place: refused, from flags and from a file.
		{"--workers with --rate", append([]string{"run", "--workers", "1", "--rate", "100"}, fast...), []string{"--rate and --workers " + together}},
		{"--workers sweep with --rate", append([]string{"run", "--workers", "1,2", "--rate", "100"}, fast...), []string{"--rate and --workers " + together}},
		{"--workers with --rates", append([]string{"run", "--workers", "2", "--rates", "100,200"}, fast...), []string{"--rates and --workers " + together}},
		{"--workers with --load-points", append([]string{"run", "--workers", "2", "--load-points", "100x4"}, fast...), []string{"--load-points and --workers " + together}},
		{"scenario workers and rate in one load", []string{"run", "-f", write("both.yaml", "load: {workers: 1, rate: 100, duration: 200ms}\nworkloads: [nop]\ntargets: [opa/inproc]\n")},
			[]string{"both.yaml:1: rate and workers " + together}},
		{"scenario workers and rate on their own lines", []string{"run", "-f", write("lines.yaml", "workloads: [nop]\ntargets:\n  - target: opa/inproc\n    load:\n      workers: 4\n      duration: 200ms\n      rate: 100\n")},
			[]string{"lines.yaml:7: rate and workers (line 5) " + together}},
		{"scenario workers sweep and rate", []string{"run", "-f", write("sweep.yaml", "load: {workers_sweep: [1, 2], rate: 50, duration: 200ms}\nworkloads: [nop]\ntargets: [opa/inproc]\n")},
			[]string{"sweep.yaml:1: rate and workers " + together}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			code, _, stderr := run(t, append(tc.args, "-o", out)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (bad input, nothing ran)\n%s", code, exitUsage, stderr)
			}
			rest := stderr
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("stderr does not say %q:\n%s", w, stderr)
				}
				rest = rest[i+len(w):]
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused load left %s (%v)", out, err)
			}
		})
	}

	// A place that names one model replaces the other a less specific place gave: the scenario's
	// workers and a target's rate is an open-loop target, and --workers over a file's rate a
	// closed-loop run. What is recorded is what ran.
	t.Run("the most specific place picks the model", func(t *testing.T) {
		file := write("mixed.yaml", "load: {workers: 3, duration: 200ms, warmup: 0s}\nfloor: false\nworkloads: [nop]\ntargets:\n  - target: opa/inproc\n    load: {rate: 200, connections: 2}\n")
		doc, _ := runOK(t, filepath.Join(dir, "mixed.json"), "run", "-f", file, "--no-progress")
		if l := doc.Runs[0].Load; l.Model != result.OpenLoop || l.Rate != 200 || l.Workers != 0 || l.Connections != 2 {
			t.Errorf("target rate under scenario workers recorded %+v, want open loop at 200/s x2", l)
		}
		doc, _ = runOK(t, filepath.Join(dir, "flag-workers.json"), "run", "-f", file, "--workers", "2", "--no-progress")
		if l := doc.Runs[0].Load; l.Model != result.ClosedLoop || l.Workers != 2 || l.Rate != 0 || doc.Runs[0].Summary.Open != nil {
			t.Errorf("--workers over a file's rate recorded %+v, want closed loop with 2 workers", l)
		}
	})

	// 600/s for 500 ms is 300 sends exactly, though 1/600 s is no whole number of nanoseconds
	// (a rounded-down interval made it 301); three shards of 700/s × 500 ms add up to 350.
	t.Run("a window holds rate × window sends", func(t *testing.T) {
		open := func(name string, extra ...string) result.Run {
			doc, _ := runOK(t, filepath.Join(dir, name), append([]string{"run", "--target", "opa/inproc", "--workload", "nop",
				"--duration", "500ms", "--warmup", "0s", "--connections", "4", "--no-progress"}, extra...)...)
			r := doc.Runs[0]
			if r.Summary.Open == nil {
				t.Fatalf("%s: no open-loop summary: %+v", name, r.Load)
			}
			o := r.Summary.Open
			if o.Sent+o.Unsent != o.Intended || int64(r.Summary.Requests) != o.Intended {
				t.Errorf("%s: %d due, %d sent, %d unsent, %d requests: every due send is sent or unsent", name, o.Intended, o.Sent, o.Unsent, r.Summary.Requests)
			}
			return r
		}
		if o := open("600.json", "--rate", "600").Summary.Open; o.Intended != 300 {
			t.Errorf("600/s for 500 ms: %d sends due, want 300", o.Intended)
		}
		var files []string
		var sum int64
		for i, want := range []int64{117, 117, 116} {
			name := []string{"s1.json", "s2.json", "s3.json"}[i]
			got := open(name, "--rate", "700", "--shard", []string{"1/3", "2/3", "3/3"}[i]).Summary.Open.Intended
			if got != want {
				t.Errorf("shard %d/3 of 700/s × 500 ms: %d sends due, want %d", i+1, got, want)
			}
			sum += got
			files = append(files, filepath.Join(dir, name))
		}
		merged, _ := runOK(t, filepath.Join(dir, "merged.json"), append([]string{"merge"}, files...)...)
		if got := merged.Runs[0].Summary.Open.Intended; sum != 350 || got != 350 {
			t.Errorf("shards of 700/s × 500 ms: %d due in all, %d merged; want 350", sum, got)
		}
	})
}
