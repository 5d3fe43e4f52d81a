package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/workload"
)

func newCapacityCommand(stdout, stderr io.Writer) *cobra.Command {
	c := bench.CapacitySearch{}
	var sloText, out, url, opaBin string
	var noProgress, force bool
	var plan replicaPlanFlags
	cmd := &cobra.Command{
		Use:   "capacity",
		Short: "Find the highest request rate that meets a latency and error SLO",
		Long: `capacity drives one target open loop at rising rates (doubling from --start), then bisects
between the last rate that met the SLO and the first that did not, and prints the knee with both
rates' percentiles. Latency is measured from each request's intended send time, so a server that
falls behind fails the SLO instead of slowing the load down. A rate the generator itself could not
keep to (over 1 % of the sends late through the generator's own fault) says nothing about the
server: it is measured once more, and if it fails so again the knee is named as the generator's,
not the server's. The search is bounded by --max-steps probes of --step each, repeats included.
Ctrl-C stops the search: the result is marked interrupted, and the rates met and missed before
the interruption are named as such, with no knee drawn from them.
` + rampHelp + outputRulesHelp + exitStatusHelp,
		Example: `  authzbench capacity --target opa/server --workload risk --slo p99=5ms,errors=0.1%
  authzbench capacity --target opa/server --url http://127.0.0.1:8181 --workload rbac --slo p99.9=20ms
  authzbench capacity --target opa/server --workload rbac --start 500 --max 8000 --ramp 60s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			// Every target option here is a flag: errors about one name it so.
			defer func() { err = optionsFlagNamed(err, map[string]string{"url": "--url", "opa_bin": "--opa-bin"}) }()
			slo, err := bench.ParseSLO(sloText)
			if err != nil {
				return usageError(err)
			}
			c.SLO = slo
			if err := checkCapacity(c); err != nil {
				return usageError(err)
			}
			if err := checkRampFlags(cmd.Flags(), c); err != nil {
				return usageError(err)
			}
			if url != "" {
				if err := kinds.CheckOption("url", "--url", url); err != nil {
					return usageError(err)
				}
			}
			if _, err := kinds.Lookup(c.Target); err != nil {
				return usageError(err)
			}
			if _, err := workload.Builtin(c.Workload); err != nil {
				return usageError(err)
			}
			if opaBin != "" {
				if err := kinds.CheckOption("opa_bin", "--opa-bin", opaBin); err != nil {
					return usageError(err)
				}
			}
			doc := newDocument("capacity")
			out = resultPath(out, "capacity", doc)
			outs := outputs.Plan{Force: force}
			outs.Output("-o", out)
			outs.Input("--usl-from", plan.from)
			outs.Input("--opa-bin", opaBin)
			if err := checkOutputs(&outs); err != nil {
				return err
			}
			model, err := plan.load(c.Workload, c.Target)
			if err != nil {
				return usageError(err)
			}
			c.Options = map[string]any{}
			if url != "" {
				c.Options["url"] = url
			}
			if opaBin != "" {
				c.Options["opa_bin"] = opaBin
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			defer onInterrupt(cancel, stderr)()
			fmt.Fprintf(stderr, "authzbench: capacity of %s on %s against %s\n", c.Target, c.Workload, slo)
			o := bench.Options{}
			progress := newProgressLine(stderr, noProgress)
			o.Progress = progress.show
			if c.Ramp > 0 {
				est, err := bench.CapacityRamp(ctx, c, o, doc)
				progress.clear()
				var werr error
				if len(doc.Runs) > 0 {
					werr = saveResult(out, "capacity", doc, force, stderr)
					report.Table(stdout, doc)
					printRamp(stdout, est, c)
					if model != nil && !est.Interrupted {
						printReplicaPlan(stdout, rampKnee(est), *model, plan)
					}
				}
				if err := exitFor(ctx, err, werr, false); err != nil {
					return err
				}
				return unmeasuredRamp(est)
			}
			knee, err := bench.Capacity(ctx, c, o, doc)
			progress.clear()
			var werr error
			if len(doc.Runs) > 0 {
				werr = saveResult(out, "capacity", doc, force, stderr)
				report.Table(stdout, doc)
				fmt.Fprintln(stdout, "\nsearch:")
				for _, p := range knee.Probes {
					fmt.Fprintln(stdout, bench.FormatProbe(p))
				}
				printKnee(stdout, knee, slo)
				if model != nil && !knee.Interrupted {
					printReplicaPlan(stdout, knee, *model, plan)
				}
			}
			if err := exitFor(ctx, err, werr, false); err != nil {
				return err
			}
			return unmeasuredProbes(knee)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&c.Target, "target", "opa/server", "target to measure")
	fl.StringVar(&c.Workload, "workload", "rbac", "built-in workload")
	fl.StringVar(&sloText, "slo", "p99=5ms,errors=0.1%", "what each rate must meet: pNN=DURATION[,errors=N%]")
	fl.Float64Var(&c.Start, "start", 100, "first rate, requests per second")
	fl.Float64Var(&c.Max, "max", 100000, "highest rate to try")
	fl.IntVar(&c.Connections, "connections", 64, "bound on requests in flight")
	fl.DurationVar(&c.Step, "step", 5*time.Second, "measured time of each probe")
	fl.DurationVar(&c.Warmup, "warmup", time.Second, "warm-up of each probe")
	fl.IntVar(&c.MaxSteps, "max-steps", 12, "most probes to run")
	fl.Float64Var(&c.Resolution, "resolution", 0.05, "stop bisecting when the failing rate is within this fraction of the passing one")
	fl.StringVar(&url, "url", "", optionUsage("url"))
	fl.StringVar(&opaBin, "opa-bin", "", "run this opa binary instead of the OPA linked in")
	fl.StringVarP(&out, "out", "o", "", "result file (default results/capacity-<time>.json)")
	fl.BoolVar(&noProgress, "no-progress", false, "no progress on stderr (a live line on a terminal, else a line every 10s)")
	addForceFlag(fl, &force)
	addReplicaPlanFlags(fl, &plan)
	addRampFlags(fl, &c)
	markCounts(fl, "connections", "max-steps", "max-replicas")
	return cmd
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
