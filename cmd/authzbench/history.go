package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/compare"
	"github.com/authzbench/authzbench/internal/history"
	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
)

// historyWait is how long a writer waits for another's lock on a SQLite history before it
// gives up (history.Options.BusyTimeout); tests shorten it.
var historyWait = 10 * time.Second

// historyUsage is the help of every --history flag.
const historyUsage = "the history database: a SQLite file (created if missing), or postgres://user@host/db for a shared server"

const historyExitHelp = `

Exit status: 0 done; 1 a document could not be added, each named on its own line, or the
database could not be opened, because another writer kept it locked through every wait (about
40 s) or the server went away; 2 bad input, nothing added: a flag, a result file that is not a
whole result document (or a shard's, or one holding two workloads of one name), a database
that cannot be opened or written (not a database, another program's database, an empty file
where a history must be, written by a newer authzbench, a server that does not answer);
130 interrupted (add says which files were added).`

func newHistoryCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Keep every result in a database and find where a series changed along commits",
		Long: `history keeps result documents in a database, so that every run of a project can be looked at
again and a change found where it happened rather than against one baseline.

By default the database is a SQLite file at $XDG_DATA_HOME/authzbench/history.db
(~/.local/share/authzbench/history.db); --history names another file, or a Postgres server
(postgres://user:password@host:5432/db) that a team shares. Only 'history add' and
'run --history' create a history, and say so; every command refuses a file that is another
program's database and leaves it as it was. Each document is kept as written, with its
commit, branch, time, testbed and the machine's whole environment (CPU, cores, kernel,
pinning, CPU frequency policy, Go, engine versions), and per repetition its figures and
histograms. A repetition is stored once: adding a file again, or a merge of files already
added, adds nothing it holds.

A series is one workload through one target under one load on one testbed; its points are
its commits along a branch, in the order they were measured. A testbed is a name: the one
given with --testbed (to run, history add or history gate, or a scenario's testbed:), else
one made of the machine's CPU model, cores and pinning ("amd-epyc-2c"), so a new kernel build
or Go version does not start a series over: it is marked where it changed instead.
'history changes' looks for the commits where a series' throughput, p50, p99 or error rate
moved, and says when the machine or the build changed there too.` + historyExitHelp,
		Example: `  # CI: measure, then add the result
  authzbench run --history results.db
  # Add results kept as files
  authzbench history add results/*.json
  # What the database holds, and where each series changed
  authzbench history series
  authzbench history changes
  # A pull request against main's last commits
  authzbench history gate --fail-on 'p99>+10%' pr.json`,
		SilenceUsage: true,
	}
	cmd.AddCommand(newHistoryAddCommand(stdout, stderr), newHistorySeriesCommand(stdout), newHistoryChangesCommand(stdout),
		newHistoryGateCommand(stdout))
	return cmd
}

func newHistoryAddCommand(stdout, stderr io.Writer) *cobra.Command {
	var where, branch, testbed string
	cmd := &cobra.Command{
		Use:   "add [--history DB] [--branch B] [--testbed NAME] RESULT.json...",
		Short: "Add result files to the history",
		Long: `add stores result files (as authzbench run, merge or ab wrote them; gzip-compressed ones too)
in the history, creating it if it does not exist (it says so). Every file is read and checked
first: if one is not a whole result document, nothing is added. A file whose repetitions are
all stored already adds nothing, and says so.

Refused, with nothing added: a shard's result (run --shard i/N), which measured only its part
of the load; merge the shards (authzbench merge) and add the merge, the whole run. And a
result holding two runs of one series (a scenario that named two workloads alike), whose
repetitions would be mixed into one point.

Documents are filed under --branch, or $GITHUB_REF_NAME in GitHub Actions, or the branch of
the checkout the command runs in; their commit is the one the result recorded (env.commit);
their testbed is --testbed, else the one the result recorded (run --testbed), else one named
after the machine's CPU model, cores and pinning.

Ctrl-C or SIGTERM stops it after the file being added: it says which files were added and
exits 130.` + historyExitHelp,
		Example: `  # Into the default database
  authzbench history add results/authzbench-20261126-120000.json
  # Into a team's shared one, filed under main
  authzbench history add --history postgres://bench@db.internal/bench --branch main results/*.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			plan := outputs.Plan{}
			plan.Input("RESULT.json", files...)
			plan.Store("--history", storeFile(where))
			if err := checkOutputs(&plan); err != nil {
				return err
			}
			if !cmd.Flags().Changed("branch") {
				branch = history.Branch()
			} else if strings.TrimSpace(branch) == "" {
				return usageError(errors.New("--branch: empty; name the branch the results were measured on"))
			}
			if err := checkTestbedFlag(cmd, testbed); err != nil {
				return err
			}
			var ins []*history.Input
			var bad []error
			for _, f := range files {
				in, err := history.ReadInput(f, branch)
				if err != nil {
					bad = append(bad, err)
					continue
				}
				if testbed != "" {
					in.Testbed = testbed
				}
				ins = append(ins, in)
			}
			if len(bad) > 0 {
				return usageError(fmt.Errorf("nothing added: %w", errors.Join(bad...)))
			}
			ctx := context.Background()
			st, err := history.Open(ctx, where, history.Options{BusyTimeout: historyWait})
			if err != nil {
				return openFailed(err)
			}
			defer st.Close()
			if err := st.Writable(ctx); err != nil {
				return usageError(fmt.Errorf("nothing added: %w", err))
			}
			if st.Created() {
				fmt.Fprintf(stdout, "created history %s\n", st.Where())
			}
			return addAll(st, ins, stdout, stderr)
		},
	}
	addHistoryFlag(cmd.Flags(), &where)
	cmd.Flags().StringVar(&branch, "branch", "", "file the documents under this branch (default $GITHUB_REF_NAME, else the checkout's branch)")
	addTestbedFlag(cmd, &testbed, "file the documents' series under this testbed")
	return cmd
}

// addAll adds the documents one after the other. Ctrl-C or SIGTERM stops it between two: the
// add under way is finished (or, at a second signal, abandoned whole), so what it says was
// added is what the history holds.
func addAll(st history.Store, ins []*history.Input, stdout, stderr io.Writer) error {
	sig := make(chan os.Signal, 2)
	notifyInterrupt(sig)
	defer signal.Stop(sig)
	var stopped atomic.Value // the signal, once one came
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case s := <-sig:
			stopped.Store(s)
			fmt.Fprintf(stderr, "\nauthzbench: %s: stopping after the file being added (again to quit at once, that file not added)\n", s)
		case <-done:
			return
		}
		select {
		case <-sig:
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	log := &writeLog{stderr: stderr}
	documents := 0
	for i, in := range ins {
		if s := stopped.Load(); s != nil {
			last := ""
			if i > 0 {
				last = ", the last " + ins[i-1].Name
			}
			return &exitError{exitInterrupted, fmt.Errorf("interrupted by %s: %d of %d files added or found stored (%d new documents)%s; not added: %s and the %d after it",
				s, i, len(ins), documents, last, in.Name, len(ins)-i-1)}
		}
		added, err := st.Add(context.Background(), in)
		log.add("add", in.Name, err)
		if err == nil {
			fmt.Fprintln(stdout, addedLine(in.Name, added))
			if !added.Nothing() {
				documents++
			}
		}
	}
	if err := log.err(); err != nil {
		return &exitError{exitFailed, err}
	}
	return nil
}

// addTestbedFlag is the --testbed of run, history add and history gate.
func addTestbedFlag(cmd *cobra.Command, testbed *string, what string) {
	cmd.Flags().StringVar(testbed, "testbed", "", what+": 1 to 64 letters, digits, '.', '_' or '-' (default: the one the result recorded, else one named after the machine's CPU model, cores and pinning, such as amd-epyc-2c)")
}

// checkTestbedFlag refuses a --testbed given that cannot name one, empty included.
func checkTestbedFlag(cmd *cobra.Command, testbed string) error {
	if !cmd.Flags().Changed("testbed") {
		return nil
	}
	if err := result.CheckTestbed(testbed); err != nil {
		return usageError(fmt.Errorf("--testbed: %w", err))
	}
	return nil
}

// addedLine says what adding one file did.
func addedLine(name string, a history.Added) string {
	if a.Nothing() {
		return fmt.Sprintf("%s: already in the history (%d repetitions), nothing added", name, a.Known)
	}
	line := fmt.Sprintf("%s: added as document %d, %d repetitions", name, a.Document, a.Repetitions)
	if a.Known > 0 {
		line += fmt.Sprintf(" (%d stored already, not added again)", a.Known)
	}
	return line
}

func addHistoryFlag(fl *pflag.FlagSet, where *string) {
	fl.StringVar(where, "history", "", historyUsage+" (default $XDG_DATA_HOME/authzbench/history.db)")
}

// storeFile is the file a history is, for the output rules: none for a Postgres server.
func storeFile(where string) string {
	if history.IsPostgres(where) {
		return ""
	}
	if where == "" {
		where, _ = history.DefaultPath()
	}
	return where
}

func newHistorySeriesCommand(stdout io.Writer) *cobra.Command {
	var where, format string
	cmd := &cobra.Command{
		Use:   "series [--history DB] [--format table|json]",
		Short: "List the series the history holds",
		Long: `series lists every workload × target × load × testbed the history holds, with its branches,
how many commits it was measured at, and when last. The testbed is the name the results were
filed under (--testbed), else one made of the machine's CPU model, cores and pinning
("amd-epyc-2c"); the kernel of the latest document is shown beside it. A kernel build, a Go
version or an engine version that changed along a series leaves it one series: the series page
(authzbench serve) and 'history changes' mark where it changed.` + historyExitHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkListFormat(format); err != nil {
				return usageError(err)
			}
			ctx := context.Background()
			st, err := history.Open(ctx, where, history.Options{MustExist: true})
			if err != nil {
				return openFailed(err)
			}
			defer st.Close()
			series, err := st.Series(ctx)
			if err != nil {
				return &exitError{exitFailed, err}
			}
			if format == "json" {
				return writeJSON(stdout, struct {
					History string           `json:"history"`
					Series  []history.Series `json:"series"`
				}{st.Where(), orEmpty(series)})
			}
			if len(series) == 0 {
				fmt.Fprintf(stdout, "%s holds no series yet: add results with authzbench history add\n", st.Where())
				return nil
			}
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tWorkload\tTarget\tLoad\tTestbed\tBranches\tCommits\tLast")
			for _, s := range series {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", s.ID, s.Workload, s.Target, s.Load, testbedLabel(s.Testbed),
					strings.Join(s.Branches, ","), s.Commits, s.Last.UTC().Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		},
	}
	addHistoryFlag(cmd.Flags(), &where)
	cmd.Flags().StringVar(&format, "format", "table", "output: table or json")
	return cmd
}

func testbedLabel(t history.Testbed) string {
	return fmt.Sprintf("%s (%s, %d cores, kernel %s)", t.Name, t.CPUModel, t.Cores, t.Kernel)
}

func newHistoryChangesCommand(stdout io.Writer) *cobra.Command {
	var where, format string
	var o history.ChangeOptions
	cmd := &cobra.Command{
		Use:   "changes [--history DB] [--series FILTER] [--branch B] [--format table|json]",
		Short: "Find the commits where a series' throughput, latency or error rate changed",
		Long: `changes looks along each series, branch by branch, for the commits where its throughput, p50,
p99 or error rate changed, with E-divisive means (Matteson & James 2014, as MongoDB's CI and
Hunter use it).

Over every repetition's value, commit after commit, it finds the split that
most separates the values before from those after, keeps it if a permutation test says the
split is unlikely to be noise (p < --alpha), and searches again on each side. A change is
reported when its size reaches --min-effect and its 95 % interval excludes no change; each says the commit where the new level begins,
the means before and after, the change with its 95 % bootstrap interval, and whether it is a
regression (less throughput, more latency, more errors) or an improvement.

A change needs --min-commits commits on each side to be seen; the permutation test is seeded
(--seed), so the same history gives the same answer. Repetitions cut short count for the error
rate only. When the machine or the build changed at the same commit (a kernel, Go, the engine's
version, the CPU frequency policy), the change says so: it may be theirs, not the code's.

A --series or --branch that matches no series is bad input (exit 2), not "no change": a typo
in a CI job's filter must not pass every regression.` + historyExitHelp,
		Example: `  # Every series, every branch
  authzbench history changes
  # One series on main, as JSON
  authzbench history changes --series 'rbac opa/server' --branch main --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkListFormat(format); err != nil {
				return usageError(err)
			}
			switch {
			case !(o.Alpha > 0 && o.Alpha < 1):
				return usageError(fmt.Errorf("--alpha %g: want a level between 0 and 1, such as 0.05", o.Alpha))
			case o.MinEffect < 0:
				return usageError(fmt.Errorf("--min-effect %g: want a fraction, such as 0.05 for 5 %%", o.MinEffect))
			case o.MinPoints < 1:
				return usageError(fmt.Errorf("--min-commits %d: want at least 1", o.MinPoints))
			case o.Permutations < 19:
				return usageError(fmt.Errorf("--permutations %d: want at least 19 (p can go no lower than 1/(permutations+1))", o.Permutations))
			}
			ctx := context.Background()
			st, err := history.Open(ctx, where, history.Options{MustExist: true})
			if err != nil {
				return openFailed(err)
			}
			defer st.Close()
			changes, err := st.Changes(ctx, o)
			var none *history.NoSeriesError
			if errors.As(err, &none) {
				return usageError(err)
			}
			if err != nil {
				return &exitError{exitFailed, err}
			}
			if format == "json" {
				return writeJSON(stdout, struct {
					History string           `json:"history"`
					Method  string           `json:"method"`
					Alpha   float64          `json:"alpha"`
					Changes []history.Change `json:"changes"`
				}{st.Where(), history.Method, o.Alpha, orEmpty(changes)})
			}
			return writeChanges(stdout, st.Where(), changes)
		},
	}
	addHistoryFlag(cmd.Flags(), &where)
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "table", "output: table or json")
	fl.StringVar(&o.Series, "series", "", "only the series whose label holds all these words (\"rbac opa/server 8 workers\"), any case")
	fl.StringVar(&o.Branch, "branch", "", "only this branch (default: every branch, each on its own)")
	fl.Float64Var(&o.Alpha, "alpha", history.DefaultAlpha, "significance level of the permutation test")
	fl.Float64Var(&o.MinEffect, "min-effect", history.DefaultMinEffect, "smallest change reported, as a fraction of the mean before it (0.05: 5 %)")
	fl.IntVar(&o.MinPoints, "min-commits", history.DefaultMinPoints, "fewest commits on each side of a change")
	fl.IntVar(&o.Permutations, "permutations", 199, "permutations of the significance test (p can go no lower than 1/(permutations+1))")
	fl.Uint64Var(&o.Seed, "seed", 1, "seed of the permutations and the bootstrap")
	return cmd
}

func newHistoryGateCommand(stdout io.Writer) *cobra.Command {
	var f compareFlags
	var where, branch, testbed string
	var window int
	cmd := &cobra.Command{
		Use:   "gate [--history DB] [--branch main] [--window 10] --fail-on EXPR NEW.json",
		Short: "Compare a result with the last commits of its series in the history; gate CI with --fail-on",
		Long: `gate compares a new result, run for run, with the same series in the history (workload, target,
load and testbed alike) over the last --window commits measured on --branch, rather than with
one file: a base of many repetitions, so one noisy main-branch run does not decide.

The base's latency percentiles are those of the window's histograms merged, exactly; its throughput is
the mean over the window's repetitions. Each figure is tested as compare tests it (Mann-Whitney
U over one figure per repetition), and --fail-on judges it as compare's gate does: exit 1 on a
significant change beyond a threshold, and whenever it cannot judge, including a run the
history has no series for. The new result's own repetitions never count in its base, so it
may have been added already (run --history). Its testbed is --testbed, else the one it
recorded, else the one named after its machine, as history add files it.

Refused as compare refuses them (exit 2): a result that holds one repetition twice, which
would count twice; a shard's result (gate the merge of the shards); one holding two runs of
one series; and a history that is not one.` + compareExitHelp,
		Example: `  # A pull request's result against main's last 10 commits
  authzbench history gate --history bench.db --fail-on 'p99>+10%,throughput<-5%' results/pr.json
  # Against the last 20, written as a pull request comment
  authzbench history gate --history postgres://bench@db/bench --branch main --window 20 --format markdown --fail-on 'p50>+5%' pr.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, gate, err := f.parsed(cmd)
			if err != nil {
				return usageError(err)
			}
			if window < 1 {
				return usageError(fmt.Errorf("--window %d: want at least 1 commit", window))
			}
			if err := checkTestbedFlag(cmd, testbed); err != nil {
				return err
			}
			// Read as add reads it: a repetition held twice would count twice in the test, a
			// shard would read as a whole run at its share of the throughput.
			in, err := history.ReadInput(args[0], branch)
			if err != nil {
				return usageError(err)
			}
			doc := in.Doc
			ctx := context.Background()
			st, err := history.Open(ctx, where, history.Options{MustExist: true})
			if err != nil {
				return openFailed(err)
			}
			defer st.Close()
			base, err := history.Window(ctx, st, doc, branch, window, testbed)
			if err != nil {
				return &exitError{exitFailed, err}
			}
			name := fmt.Sprintf("history %s, last %d commits", branch, window)
			res := compare.Compare(name, base, args[0], doc, compare.Options{Alpha: f.alpha})
			return writeComparison(stdout, res, format, gate)
		},
	}
	f.add(cmd)
	addHistoryFlag(cmd.Flags(), &where)
	cmd.Flags().StringVar(&branch, "branch", "main", "the branch whose commits are the base")
	cmd.Flags().IntVar(&window, "window", 10, "how many of the branch's last commits make the base")
	addTestbedFlag(cmd, &testbed, "the testbed whose series are the base")
	return cmd
}

func writeChanges(w io.Writer, where string, changes []history.Change) error {
	if len(changes) == 0 {
		_, err := fmt.Fprintf(w, "no change found in %s\n", where)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Series\tBranch\tFigure\tAt commit\tBefore\tAfter\tChange [95% CI]\tp\t\tAlso changed there")
	for _, c := range changes {
		size := "from 0"
		if c.Relative != nil {
			size = fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", *c.Relative*100, c.CI95[0]*100, c.CI95[1]*100)
		}
		kind := "improvement"
		if c.Regression {
			kind = "REGRESSION"
		}
		also := history.DescribeChanges(c.Environment)
		if also == "" {
			also = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%s\t%s\n", c.Label, c.Branch, c.Figure, shortCommit(c.Commit),
			figureValue(c.Figure, c.Before), figureValue(c.Figure, c.After), size, c.P, kind, also)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nMethod: %s.\n", history.Method)
	return err
}

func figureValue(f history.Figure, v float64) string {
	switch f {
	case history.Throughput:
		return report.Thousands(v) + "/s"
	case history.ErrorRate:
		return fmt.Sprintf("%.2f%%", v*100)
	}
	return report.Duration(v)
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	if c == "" {
		return "(none recorded)"
	}
	return c
}

func checkListFormat(format string) error {
	if format != "table" && format != "json" {
		return fmt.Errorf("--format %q: want table or json", format)
	}
	return nil
}

func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// openFailed is how a history that could not be opened ends a command: bad input (exit 2) when
// it is not a database this authzbench can use or cannot be reached, but exit 1 when another
// writer kept it locked through every wait: nothing is wrong with what the user gave.
func openFailed(err error) error {
	var locked *history.LockedError
	if errors.As(err, &locked) {
		return &exitError{exitFailed, err}
	}
	return usageError(err)
}

// planRunHistory adds run's --history, when given, to its plan.
func planRunHistory(p *outputs.Plan, where string) {
	if where != "" {
		p.Store("--history", storeFile(where))
	}
}

// openRunHistory opens run's --history before any load, and checks that it can be written,
// so a database that cannot be opened or written is bad input found before anything is
// measured, as an -o that cannot be written is; nil when no --history was given. A shard's
// result cannot be added (history.CheckAddable): --shard with --history is refused at once.
func openRunHistory(where string, shard *result.Shard, stderr io.Writer) (history.Store, error) {
	if where == "" {
		return nil, nil
	}
	if shard != nil {
		return nil, usageError(fmt.Errorf("--history with --shard %s: a shard measures its part of the load only, and the history takes whole runs; merge the shards (authzbench merge) and add the merge with authzbench history add", shard))
	}
	ctx := context.Background()
	st, err := history.Open(ctx, where, history.Options{BusyTimeout: historyWait})
	if err != nil {
		return nil, openFailed(fmt.Errorf("--history: %w", err))
	}
	if err := st.Writable(ctx); err != nil {
		st.Close()
		return nil, usageError(fmt.Errorf("--history: %w", err))
	}
	if st.Created() {
		fmt.Fprintf(stderr, "authzbench: created history %s\n", st.Where())
	}
	return st, nil
}

// addRunToHistory adds the run's document, as its result file holds it, to the history; nil
// when there is none.
func addRunToHistory(st history.Store, name string, doc *result.Document, w io.Writer) error {
	if st == nil {
		return nil
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	in, err := history.ParseInput(name, append(b, '\n'), history.Branch())
	if err != nil {
		return fmt.Errorf("--history %s: %w", st.Where(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	added, err := st.Add(ctx, in)
	if err != nil {
		return fmt.Errorf("--history: %w (the result file is kept)", err)
	}
	fmt.Fprintf(w, "authzbench: history %s: %s\n", st.Where(), addedLine(name, added))
	return nil
}
