package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
)

func newCalibrateCommand(stdout, stderr io.Writer) *cobra.Command {
	c := bench.Calibration{}
	var out string
	var withWrk, force bool
	var serve serveFlags
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Measure the generator's own ceiling against a trivial loopback server",
		Long: `calibrate starts a server that answers every request with a fixed allow and does nothing
else, in a process of its own, and drives it closed loop then open loop. What it reports is
authzbench's own ceiling on this machine, and its CPU per request: any figure near it measures
the generator, not the engine.

With --wrk it drives the same server with wrk in the same run,
with one connection per worker and a thread per CPU the generator had, and stores wrk's
figures in the result. With --grpc it drives the ext_authz server instead, with an engine that
allows every check without looking at it, over one HTTP/2 connection as Envoy keeps: the
ceiling of the opa/extauthz and cedar/extauthz client, and of gRPC itself.
The generator uses every core here: the point is its ceiling, not sparing a server.
` + serveHelp + outputRulesHelp + exitStatusHelp,
		Example: `  # authzbench's own ceiling on this machine, closed and open loop
  authzbench calibrate
  # ... and wrk's against the same server
  authzbench calibrate --rate 20000 --wrk
  # The ceiling of the ext_authz targets' client, and of gRPC
  authzbench calibrate --grpc --rate 10000

  # Judge any generator's pacing: serve, drive it (here oha at 2,000 req/s), then Ctrl-C the server
  authzbench calibrate --serve 127.0.0.1:9000 --pacing-rate 2000 --pacing-skip 1s --pacing-out pacing.json
  oha -z 11s -q 2000 -c 64 http://127.0.0.1:9000/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := serve.check(cmd.Flags()); err != nil {
				return usageError(err)
			}
			if serve.addr != "" {
				return serve.serve(stdout, stderr)
			}
			if c.Workers < 1 || c.Rate <= 0 || c.Connections < 1 || c.Duration <= 0 {
				return usageError(errors.New("--workers, --rate, --connections and --duration must be positive"))
			}
			if err := load.CheckRate(c.Rate); err != nil {
				return usageError(fmt.Errorf("--rate %w", err))
			}
			if withWrk && c.GRPC {
				return usageError(errors.New("--wrk and --grpc: wrk speaks HTTP/1.1, not gRPC (experiments/ghz-vs-extauthz.sh drives the trivial ext_authz server with ghz)"))
			}
			if withWrk {
				var err error
				if c.Wrk, err = exec.LookPath("wrk"); err != nil {
					return usageError(fmt.Errorf("--wrk: %w (Debian package wrk)", err))
				}
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			defer onInterrupt(cancel, stderr)()
			doc := newDocument("calibrate")
			out = resultPath(out, "calibrate", doc)
			plan := outputs.Plan{Force: force}
			plan.Output("-o", out)
			if err := checkOutputs(&plan); err != nil {
				return err
			}
			protocol := "HTTP/1.1"
			if c.GRPC {
				protocol = "ext_authz gRPC"
			}
			fmt.Fprintf(stderr, "authzbench: calibrating against a trivial %s server: %d workers closed loop, then %.0f req/s open loop\n", protocol, c.Workers, c.Rate)
			err := bench.Calibrate(ctx, c, bench.Options{GeneratorProcs: runtime.NumCPU()}, doc)
			var werr error
			if len(doc.Runs) > 0 {
				werr = saveResult(out, "calibrate", doc, force, stderr)
				report.Table(stdout, doc)
				printCalibration(stdout, doc)
			}
			if err := exitFor(ctx, err, werr, false); err != nil {
				return err
			}
			return servedNothing(doc)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&c.Workers, "workers", 8, "closed-loop workers (and wrk connections)")
	fl.Float64Var(&c.Rate, "rate", 20000, "open-loop rate to hold, requests per second")
	fl.IntVar(&c.Connections, "connections", 64, "open-loop bound on requests in flight")
	fl.DurationVar(&c.Duration, "duration", 5*time.Second, "measured time of each step")
	fl.BoolVar(&withWrk, "wrk", false, "also drive the same server with wrk, and compare")
	fl.BoolVar(&c.GRPC, "grpc", false, "drive a trivial ext_authz gRPC server (Envoy's Check) instead of a trivial HTTP one")
	fl.StringVarP(&out, "out", "o", "", "result file (default results/calibrate-<time>.json)")
	addForceFlag(fl, &force)
	serve.register(fl, &force)
	markCounts(fl, "workers", "connections")
	return cmd
}

func printCalibration(w io.Writer, doc *result.Document) {
	for _, r := range doc.Runs {
		s := r.Summary
		cpu := 0.0
		if r.Harness != nil {
			cpu = r.Harness.CPUPerRequestUS
		}
		if r.Partial {
			// A step cut short shows no ceiling and no verdict: only what it measured, as such.
			step := fmt.Sprintf("closed loop with %d workers", r.Load.Workers)
			if s.Open != nil {
				step = fmt.Sprintf("open loop at %.0f req/s", r.Load.Rate)
			}
			fmt.Fprintf(w, "%s: cut short (%s), no ceiling or verdict drawn: %.0f req/s before it stopped\n", step, r.Error, s.ThroughputRPS.Mean)
			continue
		}
		if o := s.Open; o != nil {
			late := 0.0
			if o.Intended > 0 {
				late = 100 * float64(o.LateSends) / float64(o.Intended)
			}
			verdict, generatorLate := bench.OpenVerdict(o)
			if s.ShortWindow != nil {
				verdict = "not measured (too few sends for a rate: see the notes)" // neither held nor missed
			}
			fmt.Fprintf(w, "open loop at %.0f req/s: %s, achieved %.0f req/s, %.2f %% of sends more than 1 ms late (%.2f %% the generator's own), %d unsent, generator CPU %.1f µs/request\n",
				r.Load.Rate, verdict, o.AchievedRPS.Mean, late, generatorLate, o.Unsent, cpu)
			continue
		}
		few := ""
		if s.ShortWindow != nil {
			few = " (too few responses for a rate: see the notes)"
		}
		fmt.Fprintf(w, "closed-loop ceiling with %d workers: %.0f req/s%s, generator CPU %.1f µs/request\n",
			r.Load.Workers, s.ThroughputRPS.Mean, few, cpu)
		if wrk := doc.Wrk; wrk != nil && wrk.ThroughputRPS > 0 {
			fmt.Fprintf(w, "wrk -t%d -c%d against the same server: %.0f req/s (authzbench at %.2f of it), wrk CPU %.1f µs/request",
				wrk.Threads, wrk.Connections, wrk.ThroughputRPS, s.ThroughputRPS.Mean/wrk.ThroughputRPS, wrk.CPUPerRequestUS)
			if wrk.CPUPerRequestUS > 0 && cpu > 0 {
				fmt.Fprintf(w, " (authzbench %s it)", report.RatioText(cpu/wrk.CPUPerRequestUS))
			}
			if l := wrk.LatencyUS; l != nil {
				fmt.Fprintf(w, ", wrk latency p50 %.0f µs p99 %.0f µs", l.P50, l.P99)
			}
			fmt.Fprintln(w)
		}
	}
}
