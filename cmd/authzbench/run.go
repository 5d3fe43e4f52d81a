package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

type runFlags struct {
	history     string // the history database the result is added to (history.go)
	testbed     string // the machine's name, kept in the result (env.testbed)
	file        string
	targets     []string
	workloads   []string
	policies    []string
	data        []string
	inputs      string
	query       string
	cedarPols   []string
	entities    string
	schema      string
	cedarReqs   string
	name        string
	v0          bool
	undefinedAs string
	cedarLinks  string
	workers     []int
	rates       []float64
	loadPoints  []string
	stages      string
	rate        float64
	connections int
	duration    time.Duration
	warmup      time.Duration
	coalesce    time.Duration
	inputSkew   string
	requests    int64
	repeat      int
	timeout     time.Duration
	logLevel    string
	out         string
	format      string
	wide        bool
	html        string // --html: also write the HTML report here
	prometheus  string // --prometheus: also write the summary as OpenMetrics here
	allowErrors bool
	noProgress  bool
	cpuProfile  string
	force       bool
	checkOnly   bool // ab: check everything a turn would, and measure nothing
	floor       bool
	serverTimes int
	noReuse     bool
	pinSUT      string
	pinLoad     string
	pin         string
	procs       int
	order       string
	// options are the flags that set target options, as the kinds declare them.
	options  *optionFlags
	scaleOut scaleOutFlags
	// A decision log replayed (docs/replay.md).
	decisionLog, decisionField, expectChanges string
	speed                                     float64
	maxGap                                    time.Duration

	// changes change the world during the run (changes.go).
	changes changeFlags
	// operation is what each request asks (operation.go).
	operation string
}

func newRunCommand(stdout, stderr io.Writer) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:     "run",
		Short:   "Run a benchmark: the quickstart, a scenario file, or one described by flags",
		Example: runExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWith(cmd.Flags(), f, runIO{stdout: stdout, stderr: stderr, notify: notifyInterrupt})
		},
	}
	// The long help names the built-in workloads each engine has a version of, which it learns
	// by building every one: written when help is asked for, not by every run, whose start-up
	// an open loop's CPU per request counts.
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == cmd && c.Long == "" {
			c.Long = runLong()
		}
		c.Root().HelpFunc()(c, args)
	})
	addRunFlags(cmd.Flags(), &f)
	return cmd
}

// versionsOf lists the built-in workloads the engine called name has a version of; empty when
// it is not linked.
func versionsOf(name string) string {
	e := engine.For(name)
	if e == nil {
		return ""
	}
	return strings.Join(workload.NamesWhere(e.Written), ", ")
}

// runLong is run's long help: its first paragraph is what run --help says of it; the rest is
// the reference --help-all adds.
func runLong() string {
	return `run measures how fast authorization engines decide: it drives workloads through targets,
checks every response against the decision expected, and prints a table and a result file.

With no arguments it runs the embedded quickstart scenario: the nop, rbac, api and risk
workloads through opa/cli, opa/server, opa/inproc, cedar/server and cedar/inproc, and nop and
rbac through openfga/inproc and spicedb/inproc (the relationship engines cannot express api and
risk: those pairs are listed as skipped, with the reason): 24 runs of 0.5 s warm-up and 2 s
measured, about a minute. Its figures are medians for a first look; experiments/ holds the
longer runs.
With -f it runs a scenario file; with --target/--workload, --policy or --cedar-policies it runs
one described by flags. Load flags (--workers, --rate, --stages, --connections, --duration,
--requests, --warmup, --repeat, --timeout) override the scenario's values for every target.

Every built-in workload with a Cedar version (` + versionsOf("cedar") + `)
decides the same inputs in Rego and in Cedar, so running opa/... and cedar/... targets together
compares the engines; the table then adds a "× vs <first engine>" column per mode. Your own
Cedar: --cedar-policies, --entities, --schema and --cedar-requests (--requests counts requests).
OpenFGA (` + versionsOf("openfga") + ` have its version) takes your files in its own
forms: --policy store.fga.yaml (the store file fga model test reads: its check tests are the
inputs; list_objects and list_users tests are counted, not measured), or --policy model.fga
(or fga.mod) --data tuples.yaml (.json, .jsonl, .csv) --inputs checks.jsonl, one
{"user": ..., "relation": ..., "object": ..., "expect": true|false} per line.
` + filesHelp() + `
Targets: ` + strings.Join(kinds.Names(), ", ") + ` (http: any JSON authorization endpoint, with --url).
Workloads: ` + strings.Join(workload.Names(), ", ") + `; generated for scaling series (docs/scaling.md): ` +
		strings.Join(workload.FamilyNamePatterns(), ", ") + `.

Every response is verified. Throughput counts only ok responses; latency percentiles are over
ok responses only; any other response (wrong_decision, undefined, non_boolean, http_<code>,
exit_<code>, malformed_response, eval_error, transport, timeout, not_http2) is counted and shown with its
class's first message, and makes the exit status 1 unless
--allow-errors is given. Ctrl-C stops the load, stops the servers authzbench started and writes
the partial result marked "interrupted": true.

More examples:
` + runMoreExamples + outputRulesHelp + exitStatusHelp
}

const runExample = `  # The quickstart: 4 workloads through every engine's modes, about a minute
  authzbench run
  # Your own policy, data and inputs, in process and as a server
  authzbench run --target opa/inproc,opa/server --policy authz.rego --data data.json --inputs inputs.jsonl
  # An open-loop rate: sends at fixed times, latency from each one's intended send time
  authzbench run --target opa/server --workload rbac --rate 2000 --duration 20s
  # The engines side by side, 3 interleaved repetitions each
  authzbench run --target opa/server,cedar/server --workload rbac --repeat 3`

// runMoreExamples are the examples --help-all adds.
const runMoreExamples = `  authzbench run -f experiments/cli-vs-server.yaml --repeat 5
  authzbench run --target opa/server --workload rbac --workers 8 --duration 10s
  authzbench run --target opa/server,opa/inproc --workload rbac --repeat 3 --html report.html --prometheus run.prom
  authzbench run --target opa/server --workload nop,rbac --rates 100,1000,2000,5000
  authzbench run --target opa/server --workload rbac --load-points 100x8,500x32,1000x64
  authzbench run --target opa/server --workload rbac,api,risk --workers 1,2,4,8,16
  authzbench run --target opa/server --url http://127.0.0.1:8181 --workload rbac
  authzbench run --target opa/inproc,cedar/inproc,opa/server,cedar/server --workload rbac,risk
  authzbench run --target opa/server --decision-log decisions.jsonl --policy new.rego --speed 1
  authzbench run --target cedar/server --cedar-policies app.cedar --entities entities.json \
    --schema app.cedarschema --cedar-requests requests.jsonl
  authzbench run --target opa/server --opa-bin /usr/local/bin/opa --sut-arg=--h2c
  authzbench run --target http --url http://127.0.0.1:8080/v1/authorize --header 'Authorization: Bearer t' \
    --body '{"subject": {{input.user}}, "action": {{input.action}}}' --decision-path /decision \
    --inputs inputs.jsonl`

// runIO is what run is given besides its flags: where it writes, and how Ctrl-C reaches it.
type runIO struct {
	stdout, stderr io.Writer
	// notify relays Ctrl-C and SIGTERM to a channel (notifyInterrupt in the process; a test
	// sends its own).
	notify func(chan<- os.Signal)
}

// runMain is authzbench run without cobra: args are run's flags (without "run"), and it returns
// the exit status, as the process would exit with. Tests call it with their own writers and
// interrupts; the cobra command is a shell over the same runWith.
func runMain(args []string, stdout, stderr io.Writer, notify func(chan<- os.Signal)) int {
	var f runFlags
	fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	addRunFlags(fl, &f)
	err := fl.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprint(stdout, fl.FlagUsages())
		return exitOK
	case err != nil:
		err = flagValueError(nil, err)
	case fl.NArg() > 0:
		err = usageError(fmt.Errorf("unknown command %q for \"authzbench run\"", fl.Arg(0)))
	default:
		if err = checkFlagCounts(fl); err == nil {
			err = runWith(fl, f, runIO{stdout: stdout, stderr: stderr, notify: notify})
		}
	}
	return exitStatus(err, stderr)
}

// runWith runs what the flags fl (parsed into f) describe.
func runWith(fl *pflag.FlagSet, f runFlags, out runIO) error {
	// A target option the user gave as a flag is named as that flag in any error, and so is a
	// setting of a workload the flags gave (not a scenario file).
	err := runBench(fl, f, out)
	if f.file == "" {
		err = flagNamed(err)
	}
	return optionsFlagNamed(err, f.options.named(f.file != ""))
}

// addRunFlags declares run's flags on fl, parsed into f.
func addRunFlags(fl *pflag.FlagSet, f *runFlags) {
	addScenarioFlags(fl, f, "scenario YAML file (workloads x targets x load x repetitions)", "measure")
	addUserFileFlags(fl, f)
	addReplayFlags(fl, f)
	fl.IntSliceVar(&f.workers, "workers", []int{scenario.DefaultWorkers}, "closed-loop workers (concurrent requests); several (1,2,4,8) run a sweep, one step each")
	fl.Float64SliceVar(&f.rates, "rates", nil, "open loop: a rate matrix, one step per rate (100,1000,2000,5000)")
	fl.StringSliceVar(&f.loadPoints, "load-points", nil, "open loop: RATExCONNECTIONS steps (100x8,500x32,1000x64)")
	fl.StringVar(&f.stages, "stages", "", "open loop, one continuous run whose rate follows stages, k6's ramping-arrival-rate: DURATION:RATE holds, DURATION:FROM-TO ramps linearly (30s:0-2000,1m:2000,30s:2000-0); the measured window is their total, a warm-up holds the first rate. (--rates stays a matrix of separate runs; for steps in one run, give holds: 30s:100,30s:1000)")
	fl.Float64Var(&f.rate, "rate", 0, "open loop: send this many requests per second at fixed times (at most 1e9), latency measured from the intended send time (0: closed loop; not with --workers)")
	fl.IntVar(&f.connections, "connections", scenario.DefaultConnections, "open loop: bound on requests in flight, one connection each")
	fl.DurationVar(&f.duration, "duration", scenario.DefaultDuration, "measured time per repetition")
	fl.DurationVar(&f.warmup, "warmup", scenario.DefaultWarmup, "load sent and discarded before measuring")
	fl.DurationVar(&f.coalesce, "coalesce", 0, "open loop, plain HTTP/1.1 targets (the event loop): send together the sends due within this of one another (0 to 1ms, e.g. 100us), at the last one's time: less generator CPU at high rates, each earlier send up to this late, which its latency counts (0: each send at its own time)")
	fl.StringVar(&f.inputSkew, "input-skew", "cycle", "how each request's input is picked: cycle (each in turn, in the file's order), uniform (drawn at random), zipf:S (the input of rank k drawn with weight 1/k^S; 0.99 as YCSB) or hot:K/H (K % of the requests on H % of the inputs, e.g. hot:90/10); drawn from a fixed seed, recorded: how often an input repeats sets an engine's cache hit ratio")
	fl.Int64Var(&f.requests, "requests", 0, "measured requests per repetition, instead of --duration (still bounded by 10m)")
	fl.IntVar(&f.repeat, "repeat", 1, "repetitions: throughput is reported as mean ± sd with a 95% CI, percentiles from all merged")
	fl.StringVar(&f.order, "order", "", "interleaved: with --repeat, the targets of a workload take turns, one repetition each, servers staying up (the default, for flags and scenario files); sequential: each target's repetitions back to back")
	fl.DurationVar(&f.timeout, "timeout", scenario.DefaultTimeout, "per-request timeout; slower answers count as timeout errors")
	fl.StringVar(&f.logLevel, "log-level", "error", "log level of the OPA and OpenFGA servers authzbench starts; info writes a line per request and can cost throughput")
	fl.StringVarP(&f.out, "out", "o", "", "result file (default results/authzbench-<time>.json)")
	fl.StringVar(&f.format, "format", "table", "output: "+report.NameList())
	fl.BoolVar(&f.wide, "wide", false, wideHelp)
	fl.StringVar(&f.html, "html", "", "also write the HTML report (one self-contained page with charts) to this file")
	fl.StringVar(&f.prometheus, "prometheus", "", "also write the result's summary to this file as OpenMetrics text (for a Pushgateway)")
	fl.IntVar(&f.serverTimes, "server-metrics", 0, strings.Join(kinds.KindsTaking("port"), ", ")+": ask the server for its own evaluation and handler timers on every Nth request (1: all; 0: none)")
	fl.StringVar(&f.pinSUT, "pin-sut", "", "pin the servers authzbench starts to these CPUs (0 or 1-3); Linux")
	fl.StringVar(&f.pinLoad, "pin-load", "", "pin authzbench itself, the generator, to these CPUs; Linux")
	fl.StringVar(&f.pin, "pin", "", "auto: on a machine of 2 to 4 CPUs, run the generator on CPU 0 and servers on the rest (the default for scenario files); none: leave them unpinned (the default for flags)")
	fl.BoolVar(&f.noReuse, "no-reuse", false, "open a new connection for every request, and show the connect time apart")
	fl.BoolVar(&f.floor, "floor", false, "also run the nop workload through each target, to show each policy's cost above it (on by default for scenario files)")
	fl.BoolVar(&f.allowErrors, "allow-errors", false, "exit 0 even when some responses were not served decisions (not when none was: a run that served nothing exits 1)")
	fl.BoolVar(&f.noProgress, "no-progress", false, "no progress on stderr (a live line on a terminal, else a line every 10s)")
	fl.IntVar(&f.procs, "generator-procs", 0, "GOMAXPROCS of the generator for targets in another process (default: half the cores, at least 1)")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of authzbench itself (the generator) to this file")
	addForceFlag(fl, &f.force)
	fl.StringVar(&f.history, "history", "", "after the result is written, add it to this history database (authzbench history --help): "+historyUsage)
	fl.StringVar(&f.testbed, "testbed", "", "name the machine this runs on, kept in the result (env.testbed), and the testbed a history files its series under: 1 to 64 letters, digits, '.', '_' or '-' (default: the scenario's testbed:, else a history names it after the CPU model, cores and pinning)")
	fl.BoolVar(&f.checkOnly, "check-only", false, "check the flags, the files and the outputs, build the workloads, and run nothing")
	fl.MarkHidden("check-only")
	addScaleOutFlags(fl, &f.scaleOut)
	addChangeFlags(fl, &f.changes)
	addOperationFlag(fl, &f.operation)
	f.options = addOptionFlags(fl)
	markCounts(fl, "workers", "connections", "requests", "repeat")
}

func runBench(fl *pflag.FlagSet, f runFlags, out runIO) (err error) {
	stdout, stderr := out.stdout, out.stderr
	format, err := lookupFormat(f.format, f.wide)
	if err != nil {
		return usageError(err)
	}
	if err := checkRunFlags(fl, f); err != nil {
		return usageError(err)
	}
	if cores := runtime.NumCPU(); f.procs > cores {
		// Taken as given and recorded so: a result that says 1000 should not read as 1000 cores.
		fmt.Fprintf(stderr, "authzbench: warning: --generator-procs %d: this machine has %d cores; more threads than cores only add scheduling, and the result records %d as given\n", f.procs, cores, f.procs)
	}
	shard, _, err := f.scaleOut.shardOf(time.Now())
	if err != nil {
		return usageError(err)
	}
	s, err := buildScenario(fl, f)
	if err != nil {
		return usageError(err)
	}
	if err := kinds.CheckGiven(targetSettings(s), f.options.given()); err != nil {
		return usageError(err)
	}
	if err := f.options.checkTaken(s); err != nil {
		return usageError(err)
	}
	if err := checkReplicas(s, fl.Changed("replicas")); err != nil {
		return usageError(err)
	}
	var pinSUT, pinLoad []int
	if f.pinSUT != "" {
		if pinSUT, err = sut.ParseCPUs(f.pinSUT); err != nil {
			return usageError(fmt.Errorf("--pin-sut: %w", err))
		}
	}
	if f.pinLoad != "" {
		if pinLoad, err = sut.ParseCPUs(f.pinLoad); err != nil {
			return usageError(fmt.Errorf("--pin-load: %w", err))
		}
		if err := sut.PinProcess(pinLoad); err != nil {
			return usageError(fmt.Errorf("--pin-load: %w", err))
		}
	}

	doc := newDocument(s.Source)
	doc.Shard = shard
	doc.Env.Testbed = s.Testbed
	if fl.Changed("testbed") {
		if err := result.CheckTestbed(f.testbed); err != nil {
			return usageError(fmt.Errorf("--testbed: %w", err))
		}
		doc.Env.Testbed = f.testbed
	}
	path := resultPath(f.out, "authzbench", doc)
	plan := outputs.Plan{Force: f.force}
	plan.Output("-o", path)
	plan.Output("--html", f.html)
	plan.Output("--prometheus", f.prometheus)
	plan.Output("--cpuprofile", f.cpuProfile)
	runInputs(&plan, f, s)
	planRunHistory(&plan, f.history)
	if err := checkOutputs(&plan); err != nil {
		return err
	}
	// Every failed write is named as it fails; the exit status says some failed.
	log := &writeLog{stderr: stderr}
	if f.cpuProfile != "" && !f.checkOnly {
		stop, perr := startCPUProfile(f.cpuProfile, f.force)
		if perr != nil {
			return usageError(perr)
		}
		defer func() {
			log.add("--cpuprofile", f.cpuProfile, stop())
			if werr := log.err(); werr != nil && err == nil {
				err = &exitError{exitFailed, werr}
			}
		}()
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stopSignals := onInterruptFrom(out.notify, cancel, stderr)
	defer stopSignals()

	if pinLoad != nil || pinSUT != nil {
		doc.Env.Pinning = pinningDescription(pinLoad, pinSUT)
	} // else the environment says whether the generator was pinned from outside
	pinMode := s.Pin
	if f.pin != "" {
		if f.pin != "auto" && f.pin != "none" {
			return usageError(fmt.Errorf("--pin %q: want auto or none", f.pin))
		}
		pinMode = f.pin
	}
	var autoPin *bench.Pinning
	if pinMode == "auto" && pinLoad == nil && pinSUT == nil {
		if autoPin = bench.AutoPinning(); autoPin != nil {
			doc.Env.Pinning = fmt.Sprintf("auto: generator on CPUs %s, servers authzbench starts on CPUs %s; other targets unpinned",
				sut.FormatCPUs(autoPin.Load), sut.FormatCPUs(autoPin.SUT))
		}
	}
	opts := bench.Options{GeneratorProcs: f.procs, CPUs: len(pinLoad), AutoPin: autoPin, StartAt: startAtOf(shard),
		Common: kinds.Common{LogLevel: f.logLevel, ServerMetricsEvery: f.serverTimes, NoReuse: f.noReuse, PinCPUs: pinSUT}}
	// The scenario resolved once, before any load: what only building the workloads finds (a
	// policy that does not compile, an input file that is missing) is found here, with
	// --check-only too, not at the first turn.
	resolved, err := bench.NewPlan(ctx, s, opts)
	if err != nil {
		return exitFor(ctx, err, nil, true)
	}
	if opts.Changes, err = readChanges(fl, f.changes, resolved, shard != nil); err != nil {
		return usageError(err)
	}
	if opts.Common.Operation, err = readOperation(f.operation, resolved, opts.Changes); err != nil {
		return usageError(err)
	}
	if err := checkBeforeLoad(ctx, resolved, opts, f); err != nil {
		return usageError(err)
	}
	// Impact first: what the policy does to the logged decisions, before any timing.
	if doc.Replays, err = replayImpacts(ctx, resolved, stdout, stderr); err != nil {
		return usageError(err)
	}
	// The history last of the checks before the load: opened (created if new) and found
	// writable only once everything else the user gave was found good, so a bad policy or
	// input leaves no new history behind.
	hist, err := openRunHistory(f.history, shard, stderr)
	if err != nil {
		return err
	}
	if hist != nil {
		defer hist.Close()
	}
	if f.checkOnly {
		return nil
	}
	progress := newProgressLine(stderr, f.noProgress)
	opts.Progress = progress.show
	opts.Warn = func(w string) { fmt.Fprintf(stderr, "authzbench: warning: %s\n", w) }
	opts.Note = func(n string) { fmt.Fprintf(stderr, "authzbench: %s\n", n) }
	fmt.Fprintf(stderr, "authzbench: scenario %s: %d workloads x %d targets, %d repetition(s)\n",
		s.Name, len(s.Workloads), len(s.Targets), s.Repeat)
	// What planning built and no longer needs (a big workload's data encoded, parsed and, where
	// only servers decide, compiled into the in-process check) goes back to the kernel before
	// the first server starts, rather than sit beside the server being measured: at
	// rbac-data-6800000, gigabytes.
	resolved.DropChecked()
	debug.FreeOSMemory()
	runErr := bench.Execute(ctx, resolved, opts, doc)
	progress.clear()

	if len(doc.Runs) > 0 {
		log.add("-o", path, saveResult(path, "authzbench", doc, f.force, stderr))
		if err := format.Render(stdout, doc); err != nil {
			return &exitError{exitFailed, err}
		}
		writeReports(f.html, f.prometheus, doc, f.force, stderr, log)
		log.add("--history", f.history, addRunToHistory(hist, path, doc, stderr))
	} else if ctx.Err() != nil {
		// The interrupt said it would write the partial result: there is none to write.
		fmt.Fprintln(stderr, "authzbench: nothing was measured before the run stopped: no result written")
	}

	if err := exitFor(ctx, runErr, log.err(), len(doc.Runs) == 0); err != nil {
		return err
	}
	if err := servedNothing(doc); err != nil {
		return err
	}
	if bad := errorCount(doc); bad > 0 && !f.allowErrors {
		return &exitError{exitFailed, fmt.Errorf("%d responses were not served decisions (see the table); --allow-errors to exit 0 anyway", bad)}
	}
	return nil
}

// pinningDescription says in the result where the generator and the servers ran.
func pinningDescription(load, servers []int) string {
	switch {
	case len(servers) == 0:
		return "generator on CPUs " + sut.FormatCPUs(load) + "; servers unpinned"
	case len(load) == 0:
		return "servers on CPUs " + sut.FormatCPUs(servers) + "; generator unpinned"
	}
	return "generator on CPUs " + sut.FormatCPUs(load) + ", servers on CPUs " + sut.FormatCPUs(servers)
}

// targetSettings are the settings of the scenario's targets, the flags' options set on them.
func targetSettings(s *scenario.Scenario) []kinds.Config {
	var out []kinds.Config
	for _, t := range s.Targets {
		out = append(out, t.Settings())
	}
	return out
}

func errorCount(doc *result.Document) uint64 {
	var n uint64
	for _, r := range doc.Runs {
		n += r.Summary.Errors
	}
	return n
}

// buildScenario picks the quickstart, a scenario file, or one from flags, and applies the load
// flags the user set.
func buildScenario(fl *pflag.FlagSet, f runFlags) (*scenario.Scenario, error) {
	var o scenario.Overrides
	if fl.Changed("workers") {
		if len(f.workers) == 1 {
			o.Workers = &f.workers[0]
		} else {
			o.Sweep.Workers = f.workers
		}
	}
	o.Sweep.Rates = f.rates
	for _, p := range f.loadPoints {
		lp, err := scenario.ParseLoadPoint(p)
		if err != nil {
			return nil, fmt.Errorf("--load-points: %w", err)
		}
		o.Sweep.LoadPoints = append(o.Sweep.LoadPoints, lp)
	}
	if (len(f.rates) > 0 || len(f.loadPoints) > 0) && (fl.Changed("rate") || (len(f.loadPoints) > 0 && fl.Changed("connections"))) {
		return nil, errors.New("--rates and --load-points set the rate (and --load-points the connections) of each step; drop --rate/--connections")
	}
	if fl.Changed("stages") {
		stages, err := load.ParseStages(f.stages)
		if err != nil {
			return nil, fmt.Errorf("--stages: %w", err)
		}
		o.Stages = stages
	}
	if err := checkReplayFlags(fl, f); err != nil {
		return nil, err
	}
	if fl.Changed("rate") {
		o.Rate = &f.rate
	}
	if fl.Changed("connections") {
		o.Connections = &f.connections
	}
	if fl.Changed("duration") {
		o.Duration = &f.duration
	}
	if fl.Changed("coalesce") {
		o.Coalesce = &f.coalesce
	}
	if fl.Changed("input-skew") {
		d, err := load.ParseDraw(f.inputSkew)
		if err != nil {
			return nil, fmt.Errorf("--input-skew %w", err)
		}
		o.InputSkew = &d
	}
	if fl.Changed("warmup") {
		o.Warmup = &f.warmup
	}
	if fl.Changed("requests") {
		o.Requests = &f.requests
	}
	if fl.Changed("timeout") {
		o.Timeout = &f.timeout
	}
	if _, seg, err := f.scaleOut.shardOf(time.Now()); err != nil {
		return nil, err
	} else if seg != nil {
		o.Segment = seg
	}
	if fl.Changed("repeat") {
		o.Repeat = &f.repeat
	}
	if f.order != "" {
		order, err := scenario.ParseOrder(f.order)
		if err != nil {
			return nil, fmt.Errorf("--%w", err)
		}
		o.Order = &order
	}
	user := f.userSpec()
	userFlags := user.HasRego() || user.HasCedar()
	if err := checkPolicyOptions(&f, userFlags); err != nil {
		return nil, err
	}
	adHoc := len(f.targets) > 0 || len(f.workloads) > 0 || userFlags
	if f.file != "" && adHoc {
		return nil, errors.New("-f runs a scenario file: give workloads and targets in the file, or drop -f to describe the run with flags")
	}
	var s *scenario.Scenario
	var err error
	options := f.options.given()
	switch {
	case f.file != "":
		s, err = scenario.Load(f.file)
	case adHoc:
		a := scenario.AdHoc{Targets: f.targets, Workloads: f.workloads, Options: options, Overrides: o}
		if userFlags {
			a.User = &user
		}
		s, err := scenario.FromFlags(a)
		if err == nil && f.floor {
			s.SetFloor(true)
		}
		return s, err
	default:
		s, err = scenario.Embedded("quickstart")
	}
	if err != nil {
		return nil, err
	}
	if fl.Changed("floor") {
		s.SetFloor(f.floor)
	}
	if err := s.SetOptions(options); err != nil {
		return nil, err
	}
	return s, s.Apply(o)
}

// wideHelp says what --wide adds to the default table.
const wideHelp = "print every column; by default the table keeps " + report.DefaultColumns + " (markdown, csv and json always hold every column; html folds the rest under the table)"

// lookupFormat finds the output format --format names among those registered, writing every
// column when wide.
func lookupFormat(name string, wide bool) (report.Format, error) {
	f, err := report.Lookup(name)
	if err != nil {
		return f, fmt.Errorf("--format %q: want %s", name, report.NameList())
	}
	if wide {
		f = f.Widened()
	}
	return f, nil
}

// notifyInterrupt relays Ctrl-C and SIGTERM to c. Tests replace it, to interrupt a command
// through the same path at a moment of their choosing without signalling the test process.
var notifyInterrupt = func(c chan<- os.Signal) { signal.Notify(c, os.Interrupt, syscall.SIGTERM) }

// onInterrupt cancels the run on the first Ctrl-C (or SIGTERM) so the partial result is written
// and the servers are stopped; a second one exits at once.
func onInterrupt(cancel context.CancelCauseFunc, stderr io.Writer) (stop func()) {
	return onInterruptFrom(notifyInterrupt, cancel, stderr)
}

// onInterruptFrom is onInterrupt with the signals relayed by notify.
func onInterruptFrom(notify func(chan<- os.Signal), cancel context.CancelCauseFunc, stderr io.Writer) (stop func()) {
	sig := make(chan os.Signal, 2)
	notify(sig)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			fmt.Fprintf(stderr, "\nauthzbench: %s: stopping the load, stopping servers, writing the partial result (again to quit at once)\n", s)
			cancel(fmt.Errorf("interrupted by %s", s))
		case <-done:
			return
		}
		select {
		case <-sig:
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return func() { signal.Stop(sig); close(done) }
}

// progressEvery is how often a progress line is printed where stderr is no terminal (a CI log):
// often enough to show the run is alive, seldom enough not to flood the log.
var progressEvery = 10 * time.Second

// progressLine shows the state of the run on stderr: one line rewritten in place on a terminal,
// a line every progressEvery elsewhere.
type progressLine struct {
	mu       sync.Mutex
	w        io.Writer
	off      bool
	terminal bool
	last     time.Time
}

func newProgressLine(w io.Writer, disabled bool) *progressLine {
	p := &progressLine{w: w, off: disabled, last: time.Now()}
	if f, ok := w.(*os.File); ok {
		p.terminal = term.IsTerminal(int(f.Fd()))
	}
	return p
}

func (p *progressLine) show(s bench.Status) {
	if p.off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.terminal {
		if time.Since(p.last) < progressEvery {
			return
		}
		p.last = time.Now()
	}
	line := fmt.Sprintf("[%d/%d] %s on %s, rep %d/%d, ", s.Step, s.Steps, s.Workload, s.Target, s.Repetition, s.Reps)
	elapsed := s.Load.Elapsed.Truncate(100 * time.Millisecond)
	if s.Load.Warmup {
		line += fmt.Sprintf("warm-up %s/%s (discarded)", elapsed, s.Planned)
	} else {
		line += fmt.Sprintf("measuring %s/%s: ok %d, errors %d", elapsed, s.Planned, s.Load.OK, s.Load.Errors)
	}
	if s.RequestsPerSecond > 0 {
		line += fmt.Sprintf(", %.0f req/s", s.RequestsPerSecond)
	}
	if !p.terminal {
		fmt.Fprintf(p.w, "authzbench: %s\n", line)
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
}

func (p *progressLine) clear() {
	if p.terminal && !p.off {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// startCPUProfile profiles the generator, to find what authzbench itself spends per request.
// The profile streams into a temporary file that stop puts in place whole, or reports.
func startCPUProfile(path string, replace bool) (stop func() error, err error) {
	f, err := outputs.Create(path, replace)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Abort()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Commit(); err != nil {
			return fmt.Errorf("write --cpuprofile %s: %w", path, err)
		}
		return nil
	}, nil
}

// newDocument starts a result document for this invocation.
func newDocument(scenario string) *result.Document {
	return &result.Document{
		Schema:   result.Schema,
		Created:  time.Now().UTC(),
		Command:  append([]string{"authzbench"}, kinds.RedactSecrets(os.Args[1:])...),
		Scenario: scenario,
		Env:      bench.CaptureEnv(),
	}
}

// resultPath is --out, or results/<prefix>-<time>.json, with -2, -3 … added when a result
// started in the same second is there: a name the command chose replaces nothing.
func resultPath(out, prefix string, doc *result.Document) string {
	if out != "" {
		return out
	}
	return outputs.FreeName(filepath.Join("results", defaultResultName(prefix, doc)))
}

// defaultResultName is <prefix>-<time>.json, the time the document was started.
func defaultResultName(prefix string, doc *result.Document) string {
	return prefix + "-" + doc.Created.Format("20060102-150405") + ".json"
}

// filesHelp is a paragraph per registered engine that says how users give their own files in
// its forms (engine.FilesHinted), so a new engine's files reach run --help from its own package.
func filesHelp() string {
	var b strings.Builder
	for _, e := range engine.All() {
		h, ok := e.(engine.FilesHinted)
		if !ok {
			continue
		}
		flags, _ := h.FilesHint()
		written := workload.NamesWhere(e.Written)
		line := fmt.Sprintf("%s (%s have a version in it) takes your files in their own forms: %s.",
			engine.Language(e), strings.Join(written, ", "), flags)
		width := 0
		for _, word := range strings.Fields(line) {
			if width > 0 && width+1+len(word) > 100 {
				b.WriteString("\n")
				width = 0
			} else if width > 0 {
				b.WriteString(" ")
				width++
			}
			b.WriteString(word)
			width += len(word)
		}
		b.WriteString("\n")
	}
	return b.String()
}
