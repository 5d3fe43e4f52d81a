package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
)

func newCapacityCommand(stdout, stderr io.Writer) *cobra.Command {
	c := bench.CapacitySearch{}
	var f runFlags
	var sloText string
	var plan replicaPlanFlags
	cmd := &cobra.Command{
		Use:   "capacity",
		Short: "Find the highest request rate that meets a latency and error SLO",
		Long: `capacity finds, for each target (and workload), the highest open-loop rate that meets an SLO:
one search each, one table. Your own files are given as run takes them.

It drives the target at rising rates (doubling from --start), then bisects between the last
rate that met the SLO and the first that did not, and prints the knee with both rates'
percentiles. Latency is measured from each request's intended send time, so a server that
falls behind fails the SLO instead of slowing the load down. A rate the generator itself could not
keep to (over 1 % of the sends late through the generator's own fault) says nothing about the
server: it is measured once more, and if it fails so again the knee is named as the generator's,
not the server's. Each search is bounded by --max-steps probes of --step each, repeats included.
Several targets (--target opa/server,cedar/server) or workloads are searched one after another,
each pair once; -f takes a scenario file's workloads and targets with their options (its load
and repetitions are a run's: each probe's load is the search's). Every file, target and setting
is checked before the first probe. Ctrl-C stops the search: the result is marked interrupted,
and the rates met and missed before the interruption are named as such, with no knee drawn
from them.
` + rampHelp + outputRulesHelp + exitStatusHelp,
		Example: `  # Can OPA's and Cedar's servers hold our policies at p99 under 5 ms, and up to what rate?
  authzbench capacity --target opa/server,cedar/server --policy authz.rego --data data.json --inputs inputs.jsonl \
    --cedar-policies authz.cedar --entities entities.json --cedar-requests requests.jsonl --slo p99=5ms
  # A running server, on a built-in workload
  authzbench capacity --target opa/server --url http://127.0.0.1:8181 --workload rbac --slo p99.9=20ms
  # A quicker estimate: one ramp, then one constant-rate probe to confirm it
  authzbench capacity --target opa/server --workload rbac --start 500 --max 8000 --ramp 60s
  # How many replicas reach 20,000 req/s, by the fit of a replica sweep (run -f experiments/replicas.yaml)
  authzbench capacity --target opa/server --workload rbac --usl-from sweep.json --need 20000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := runCapacity(cmd.Flags(), c, f, sloText, plan, stdout, stderr)
			// A setting of the user's workload, or a target option, is named as the flag that
			// gave it; a scenario file's keep their keys.
			if f.file == "" {
				err = flagNamed(err)
			}
			return optionsFlagNamed(err, f.options.named(f.file != ""))
		},
	}
	fl := cmd.Flags()
	addScenarioFlags(fl, &f, "scenario YAML file: each of its workloads searched on each of its targets, with their options", "search, one search each")
	addUserFileFlags(fl, &f)
	fl.StringVar(&sloText, "slo", "p99=5ms,errors=0.1%", "what each rate must meet: pNN=DURATION[,errors=N%]")
	fl.Float64Var(&c.Start, "start", 100, "first rate, requests per second")
	fl.Float64Var(&c.Max, "max", 100000, "highest rate to try")
	fl.IntVar(&c.Connections, "connections", 64, "bound on requests in flight")
	fl.DurationVar(&c.Step, "step", 5*time.Second, "measured time of each probe")
	fl.DurationVar(&c.Warmup, "warmup", time.Second, "warm-up of each probe")
	fl.IntVar(&c.MaxSteps, "max-steps", 12, "most probes to run, per search")
	fl.Float64Var(&c.Resolution, "resolution", 0.05, "stop bisecting when the failing rate is within this fraction of the passing one")
	fl.StringVarP(&f.out, "out", "o", "", "result file (default results/capacity-<time>.json)")
	fl.BoolVar(&f.noProgress, "no-progress", false, "no progress on stderr (a live line on a terminal, else a line every 10s)")
	addForceFlag(fl, &f.force)
	addReplicaPlanFlags(fl, &plan)
	addRampFlags(fl, &c)
	f.options = addOptionFlags(fl)
	markCounts(fl, "connections", "max-steps", "max-replicas")
	return cmd
}

// runCapacity checks everything the flags name (the SLO and the search's bounds, the scenario
// they describe with the user's files, the outputs, a replica model), builds every workload
// once, and only then searches each workload on each target in turn, into one document.
func runCapacity(fl *pflag.FlagSet, c bench.CapacitySearch, f runFlags, sloText string, plan replicaPlanFlags, stdout, stderr io.Writer) error {
	slo, err := bench.ParseSLO(sloText)
	if err != nil {
		return usageError(err)
	}
	c.SLO = slo
	errs := []error{checkCapacity(c), checkRampFlags(fl, c)}
	errs = append(errs, f.options.check()...)
	if err := errors.Join(errs...); err != nil {
		return usageError(err)
	}
	s, err := buildScenario(fl, f)
	if err != nil {
		return usageError(err)
	}
	s.SetFloor(false) // a run's reference, not a search's
	if err := kinds.CheckGiven(targetSettings(s), f.options.given()); err != nil {
		return usageError(err)
	}
	if err := f.options.checkTaken(s); err != nil {
		return usageError(err)
	}
	if err := checkReplicas(s, fl.Changed("replicas")); err != nil {
		return usageError(err)
	}
	if err := checkSearchable(s); err != nil {
		return usageError(err)
	}
	doc := newDocument("capacity")
	out := resultPath(f.out, "capacity", doc)
	outs := outputs.Plan{Force: f.force}
	outs.Output("-o", out)
	outs.Input("--usl-from", plan.from)
	runInputs(&outs, f, s)
	if err := checkOutputs(&outs); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	defer onInterrupt(cancel, stderr)()
	// Every workload built and its policy compiled once, before the first probe: a mistake in
	// a file is found here, and every search of every target takes the same build.
	opts := bench.Options{Common: kinds.Common{Prepared: engine.NewPrepared()}}
	resolved, err := bench.NewPlan(ctx, s, opts)
	if err != nil {
		return exitFor(ctx, err, nil, true)
	}
	if err := checkBeforeLoad(ctx, resolved, opts, f); err != nil {
		return usageError(err)
	}
	var searches []capacitySearch
	for i, w := range s.Workloads {
		built := resolved.Workloads[i]
		for _, t := range s.Targets {
			if why := s.Skipped(w.Name, t.Name); why != "" {
				if !doc.HasSkip(w.Name, t.Name) {
					doc.Skipped = append(doc.Skipped, result.Skip{Workload: w.Name, Target: t.Name, Reason: why})
				}
				continue
			}
			one := c
			one.Target, one.Workload, one.User, one.Built = t.Name, built.Name, w.User, built
			one.Config, one.Timeout = t.Settings(), t.Timeout
			model, err := plan.load(one.Workload, one.Target)
			if err != nil {
				return usageError(err)
			}
			searches = append(searches, capacitySearch{CapacitySearch: one, model: model})
		}
	}
	if f.file != "" {
		fmt.Fprintf(stderr, "authzbench: capacity takes the workloads and targets of %s; each probe's load is the search's (--start, --step, --warmup, --connections), not the file's\n", f.file)
	}
	progress := newProgressLine(stderr, f.noProgress)
	o := opts
	o.Progress = progress.show
	var runErrs []error
	for i := range searches {
		if ctx.Err() != nil {
			break
		}
		sc := &searches[i]
		fmt.Fprintf(stderr, "authzbench: capacity of %s on %s against %s\n", sc.Target, sc.Workload, slo)
		var err error
		if c.Ramp > 0 {
			sc.ramp, err = bench.CapacityRamp(ctx, sc.CapacitySearch, o, doc)
			doc.Capacity = append(doc.Capacity, sc.ramp.Record(sc.CapacitySearch, doc, err))
		} else {
			sc.knee, err = bench.Capacity(ctx, sc.CapacitySearch, o, doc)
			doc.Capacity = append(doc.Capacity, sc.knee.Record(sc.CapacitySearch, doc, err))
		}
		sc.ran = true
		// A target that could not be searched does not keep the others from theirs.
		if err != nil && ctx.Err() == nil {
			err = fmt.Errorf("%s on %s: %w", sc.Workload, sc.Target, err)
		}
		runErrs = append(runErrs, err)
	}
	progress.clear()
	var werr error
	if len(doc.Runs) > 0 {
		werr = saveResult(out, "capacity", doc, f.force, stderr)
		report.Table(stdout, doc)
		for _, sc := range searches {
			if sc.ran {
				sc.print(stdout, plan, len(searches) > 1)
			}
		}
	}
	if err := exitFor(ctx, errors.Join(runErrs...), werr, false); err != nil {
		return err
	}
	var unmeasured []error
	for _, sc := range searches {
		if c.Ramp > 0 {
			unmeasured = append(unmeasured, unmeasuredRamp(sc.ramp))
		} else {
			unmeasured = append(unmeasured, unmeasuredProbes(sc.knee))
		}
	}
	return errors.Join(unmeasured...)
}

// capacitySearch is one workload searched on one target, and what it found.
type capacitySearch struct {
	bench.CapacitySearch
	model *bench.ReplicaModel // --usl-from's, for this workload and target; nil without
	ran   bool
	knee  bench.Knee
	ramp  bench.RampEstimate
}

// print writes the search's trace and what it concludes, under its own heading when the
// command searched several.
func (sc capacitySearch) print(w io.Writer, plan replicaPlanFlags, headed bool) {
	if headed {
		fmt.Fprintf(w, "\n== %s on %s ==\n", sc.Workload, sc.Target)
	}
	if sc.Ramp > 0 {
		printRamp(w, sc.ramp, sc.CapacitySearch)
		if sc.model != nil && !sc.ramp.Interrupted {
			printReplicaPlan(w, rampKnee(sc.ramp), *sc.model, plan)
		}
		return
	}
	fmt.Fprintln(w, "\nsearch:")
	for _, p := range sc.knee.Probes {
		fmt.Fprintln(w, bench.FormatProbe(p))
	}
	printKnee(w, sc.knee, sc.SLO)
	if sc.model != nil && !sc.knee.Interrupted {
		printReplicaPlan(w, sc.knee, *sc.model, plan)
	}
}

// checkSearchable refuses a workload a search cannot drive at its own rates: a decision log
// replayed at its recorded pace brings its own schedule.
func checkSearchable(s *scenario.Scenario) error {
	var errs []error
	for _, w := range s.Workloads {
		if w.User != nil && w.User.Speed > 0 {
			errs = append(errs, fmt.Errorf("workload %s replays its decision log at its recorded pace (speed %g); a capacity search sends at rates of its own: drop speed", w.Name, w.User.Speed))
		}
	}
	return errors.Join(errs...)
}

// checkCapacity finds search settings that cannot work, before any probe: bench.Capacity would
// find them too, but only after the command had started, and call them a failed run.
func checkCapacity(c bench.CapacitySearch) error {
	var errs []error
	if c.Start <= 0 {
		errs = append(errs, fmt.Errorf("--start %g: want a rate above 0 requests per second", c.Start))
	} else if err := load.CheckRate(c.Start); err != nil {
		errs = append(errs, fmt.Errorf("--start %w", err))
	}
	if c.Max < c.Start {
		errs = append(errs, fmt.Errorf("--max %g: want at least --start (%g)", c.Max, c.Start))
	} else if err := load.CheckRate(c.Max); err != nil {
		// The search doubles up to --max: a probe above the ceiling would run slower than it says.
		errs = append(errs, fmt.Errorf("--max %w", err))
	}
	if c.MaxSteps < 1 {
		errs = append(errs, fmt.Errorf("--max-steps %d: want 1 or more", c.MaxSteps))
	}
	if c.Connections < 1 {
		errs = append(errs, fmt.Errorf("--connections %d: want 1 or more", c.Connections))
	}
	if c.Step <= 0 {
		errs = append(errs, fmt.Errorf("--step %s: want a positive duration", c.Step))
	}
	if c.Warmup < 0 {
		errs = append(errs, fmt.Errorf("--warmup %s: want 0 or more", c.Warmup))
	}
	if c.Resolution <= 0 || c.Resolution >= 1 {
		errs = append(errs, fmt.Errorf("--resolution %g: want a fraction between 0 and 1", c.Resolution))
	}
	return errors.Join(errs...)
}

// unmeasuredProbes is servedNothing for a capacity search: a probe that served no decision, or
// too few for its rate, measured no rate, and a search that tried one did not find the knee it
// prints: exit 1, naming the probes.
func unmeasuredProbes(k bench.Knee) error {
	var why []string
	for _, p := range k.Probes {
		if p.Unmeasured {
			why = append(why, fmt.Sprintf("the probe at %s req/s: %s", report.Thousands(p.Rate), p.Why))
		}
	}
	// A probe whose every answer was an error failed its rate, as an overloaded server fails
	// above the knee; but a search that served no decision at any rate measured nothing.
	if k.Pass == nil && k.Fail != nil && !k.Fail.Unmeasured && k.Fail.Run.Summary.OK == 0 {
		why = append(why, fmt.Sprintf("no probe served a decision; the probe at %s req/s: %s", report.Thousands(k.Fail.Rate), k.Fail.Why))
	}
	if len(why) == 0 {
		return nil
	}
	return &exitError{exitFailed, fmt.Errorf("measured nothing: %s", strings.Join(why, "; "))}
}

func printKnee(w io.Writer, k bench.Knee, slo bench.SLO) {
	describe := func(p *bench.Probe) string {
		l := p.Run.Summary.LatencyUS
		return fmt.Sprintf("%.0f req/s (p50 %s, p99 %s, p99.9 %s, errors %d)", p.Rate,
			report.Duration(l.P50), report.Duration(l.P99), report.Duration(l.P999), p.Run.Summary.Errors)
	}
	switch {
	case k.Interrupted:
		// What was measured is shown for what it is; nothing is concluded from a search that
		// did not end.
		fmt.Fprintf(w, "\nsearch interrupted before it ended: no conclusion for %s\n", slo)
		if k.Pass != nil {
			fmt.Fprintf(w, "  met before the interruption: %s\n", describe(k.Pass))
		}
		if k.Fail != nil {
			fmt.Fprintf(w, "  missed before the interruption: %s: %s\n", describe(k.Fail), k.Fail.Why)
		}
	case k.Fail != nil && k.Fail.Unmeasured:
		fmt.Fprintf(w, "\nno knee: the probe at %.0f req/s measured no rate: %s\n", k.Fail.Rate, k.Fail.Why)
	case k.Pass == nil && k.Fail != nil:
		fmt.Fprintf(w, "\nno rate met %s: even %s failed (%s); try a lower --start\n", slo, describe(k.Fail), k.Fail.Why)
	case k.Pass != nil && k.Fail == nil:
		fmt.Fprintf(w, "\nevery rate tried met %s, up to %s; raise --max or --max-steps to find the knee\n", slo, describe(k.Pass))
	case k.Pass != nil:
		fmt.Fprintf(w, "\nknee for %s:\n  last passing: %s\n  first failing: %s: %s\n", slo, describe(k.Pass), describe(k.Fail), k.Fail.Why)
	}
}
