// Package bench carries out a scenario: for each workload and target it starts the system under
// test, drives the load for each repetition, and folds what was recorded into the result
// document. It stops what it started whatever happens, and keeps what was measured when a run is
// cut short (Ctrl-C, a server that died), marking it partial.
package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/target"
	"github.com/authzbench/authzbench/internal/workload"
)

// Options configure a run beyond its scenario.
type Options struct {
	Target target.Options
	// GeneratorProcs is the Go scheduler parallelism (GOMAXPROCS) while driving a target that
	// runs in another process; 0 picks GeneratorProcsDefault. In-process targets get every core.
	GeneratorProcs int
	// CPUs is how many CPUs the generator may use (after --pin-load); 0 for all of them.
	CPUs int
	// AutoPin, when set, pins the generator and the servers it starts apart for each run with a
	// server in another process, and gives an in-process engine every CPU.
	AutoPin *Pinning
	// Progress, when set, is told what is running and how far it got, several times a second.
	Progress func(Status)
}

// Status is what a progress line shows.
type Status struct {
	Step, Steps       int
	Workload, Target  string
	Repetition, Reps  int
	Load              load.Progress
	Planned           time.Duration // of the current phase
	RequestsPerSecond float64
}

// Run carries out the scenario. The document it returns holds every run measured, even when the
// error is not nil; the error says why the scenario did not finish.
func Run(ctx context.Context, s *scenario.Scenario, o Options, doc *result.Document) error {
	var tooMany []error
	for _, t := range s.Targets {
		if err := t.Load.CheckOpenFiles(); err != nil {
			tooMany = append(tooMany, fmt.Errorf("target %s: %w", t.Name, err))
		}
	}
	if err := errors.Join(tooMany...); err != nil {
		return err
	}
	workloads, err := Prepare(ctx, s)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(o.Target.TempDir, "authzbench-")
	if err != nil {
		return fmt.Errorf("create temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	steps := len(workloads) * len(s.Targets)
	step := 0
	for _, w := range workloads {
		for _, t := range s.Targets {
			step++
			run, err := runOne(ctx, s, o, tmp, w, t, step, steps)
			if run != nil {
				doc.Runs = append(doc.Runs, *run)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// Prepare builds every workload of the scenario and compiles its policy with the in-process
// OPA, so a bad policy or inputs file is reported before any load starts.
func Prepare(ctx context.Context, s *scenario.Scenario) ([]*workload.Workload, error) {
	tmp, err := os.MkdirTemp("", "authzbench-check-")
	if err != nil {
		return nil, fmt.Errorf("create temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	var out []*workload.Workload
	var errs []error
	for i, ref := range s.Workloads {
		var w *workload.Workload
		if ref.User != nil {
			w, err = workload.FromFiles(*ref.User)
		} else {
			w, err = workload.Builtin(ref.Name)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		dir, err := os.MkdirTemp(tmp, fmt.Sprintf("w%d-", i))
		if err != nil {
			return nil, err
		}
		policies, data, err := w.Files(dir)
		if err == nil && len(policies) > 0 {
			_, err = target.PrepareOPA(ctx, w.Query, policies, data)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("workload %s: %w", w.Name, err))
			continue
		}
		out = append(out, w)
	}
	return out, errors.Join(errs...)
}

func runOne(ctx context.Context, s *scenario.Scenario, o Options, tmp string, w *workload.Workload,
	t scenario.TargetRef, step, steps int) (*result.Run, error) {
	allow, deny, unverified := w.Counts()
	run := &result.Run{
		Target:   t.Name,
		Workload: w.Name,
		WorkloadDoc: result.WorkloadInfo{Description: w.Description, Query: w.Query, Inputs: len(w.Inputs),
			ExpectAllow: allow, ExpectDeny: deny, Unverified: unverified},
		Load: result.Load{Model: "closed", Workers: t.Load.Workers, DurationS: t.Load.Duration.Seconds(),
			WarmupS: t.Load.Warmup.Seconds(), Requests: t.Load.Requests, TimeoutS: t.Timeout.Seconds()},
	}
	if target.Engine(t.Name) == "cedar" && w.Cedar != nil {
		run.WorkloadDoc.CedarDifferences = w.Cedar.Differences
	}
	if t.Load.Rate > 0 {
		run.Load.Model, run.Load.Rate, run.Load.Connections, run.Load.Workers = "open", t.Load.Rate, t.Load.Connections, 0
	}
	cpus := runtime.NumCPU()
	if o.CPUs > 0 {
		cpus = o.CPUs
	}
	var autoSUT []int
	if o.AutoPin != nil {
		n, sutCPUs, desc, err := applyPinning(o.AutoPin, !target.StartsServer(t.Name, o.Target))
		if err != nil {
			return nil, fmt.Errorf("pin for %s: %w", t.Name, err)
		}
		cpus, autoSUT, run.Pinning = n, sutCPUs, desc
	}
	procs := o.GeneratorProcs
	if procs <= 0 {
		procs = max(1, min(GeneratorProcsDefault(), cpus))
	}
	if target.InProcess(t.Name) || (t.Load.Rate > 0 && o.GeneratorProcs <= 0) {
		// In-process engines need every core; so does an open-loop pacer, which must find a free
		// processor the moment a send is due (with one, 2.4 % of sends at 2,000/s started more
		// than 1 ms late; with two, 0.6 %).
		procs = cpus
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	run.Load.GeneratorProcs = procs
	topts := o.Target
	if autoSUT != nil {
		topts.PinSUT = autoSUT
	}
	topts.Workers = t.Load.Workers
	if t.Load.Rate > 0 {
		topts.Workers = t.Load.Connections
	}
	topts.Timeout = t.Timeout
	topts.TempDir = tmp
	tg, err := target.New(t.Name, topts)
	if err != nil {
		return nil, err
	}
	defer tg.Stop(context.Background())
	if err := tg.Start(ctx, w); err != nil {
		err = fmt.Errorf("start %s for workload %s: %w", t.Name, w.Name, err)
		run.Error = err.Error()
		run.Partial = true
		run.SUT = tg.Info()
		return run, err
	}
	run.SUT = tg.Info()

	merged := metrics.NewRecorder()
	var outcomes []load.Outcome // one per repetition: usage and resources count measured phases only
	defer func() { run.Harness = harness(outcomes, merged.Requests()) }()
	if run.SUT.PID != 0 {
		sampler := sut.StartSampler(run.SUT.PID, 250*time.Millisecond)
		defer func() { run.SUTResources = sutResources(sampler.Stop(), outcomes) }()
	}
	for rep := 1; rep <= s.Repeat; rep++ {
		progress := func(p load.Progress) {
			if o.Progress == nil {
				return
			}
			st := Status{Step: step, Steps: steps, Workload: w.Name, Target: t.Name, Repetition: rep,
				Reps: s.Repeat, Load: p, Planned: t.Load.Duration}
			if p.Warmup {
				st.Planned = t.Load.Warmup
			}
			if secs := p.Elapsed.Seconds(); secs > 0 && !p.Warmup {
				st.RequestsPerSecond = float64(p.OK) / secs
			}
			o.Progress(st)
		}
		spec := t.Load
		spec.Timeout = t.Timeout
		out := spec.Run(ctx, tg, w.Inputs, progress)
		partial := out.Stopped != nil
		r, err := result.NewRepetition(out.Recorder, out.Elapsed, partial)
		if err != nil {
			return run, err
		}
		if sc := out.Schedule; sc != nil {
			if err := r.SetSchedule(sc.Intended, sc.Sent, sc.Late, sc.GeneratorLate, sc.Missed(), out.Recorder, out.Elapsed); err != nil {
				return run, err
			}
		}
		run.Repetitions = append(run.Repetitions, r)
		merged.Merge(out.Recorder)
		outcomes = append(outcomes, out)
		if partial {
			run.Partial = true
			run.Error = out.Stopped.Error()
			run.Summary = result.Summarise(run.Repetitions, merged)
			return run, &StoppedError{Cause: out.Stopped}
		}
	}
	run.Summary = result.Summarise(run.Repetitions, merged)
	if c := run.Summary.Connections; c != nil {
		c.Reused = !o.Target.NoReuse
		c.Expected = int64(topts.Workers) * int64(s.Repeat) // a fresh pool per repetition, at most
		if o.Target.NoReuse {
			c.Expected = int64(run.Summary.Requests)
		}
	}
	return run, nil
}

// Pinning is a split of the machine's CPUs between the generator and the servers.
type Pinning struct{ Load, SUT []int }

// AutoPinning splits a small machine (2 to 4 CPUs): the generator on CPU 0, servers on the
// rest. Larger machines are left to the user (--pin-sut, --pin-load); nil when not applied.
func AutoPinning() *Pinning {
	n := sut.MachineCPUs()
	if n < 2 || n > 4 {
		return nil
	}
	p := &Pinning{Load: []int{0}}
	for c := 1; c < n; c++ {
		p.SUT = append(p.SUT, c)
	}
	return p
}

// applyPinning pins this process for one run and says what it did. Only a server authzbench
// starts is pinned apart; otherwise (an in-process engine, per-decision processes that are the
// generator's children, a server run by someone else) every CPU stays available.
func applyPinning(p *Pinning, unpinned bool) (generatorCPUs int, sutCPUs []int, description string, err error) {
	if unpinned {
		all := sut.AllCPUs()
		return len(all), nil, "none: no server process of its own to pin apart", sut.PinProcess(all)
	}
	return len(p.Load), p.SUT, "generator on CPUs " + sut.FormatCPUs(p.Load) + ", server on CPUs " + sut.FormatCPUs(p.SUT),
		sut.PinProcess(p.Load)
}

// GeneratorProcsDefault is half the cores, at least one. A generator waiting on a server's
// answers needs little CPU, but a Go scheduler with idle processors spins looking for work, and
// on a small machine that spinning takes cores from the server being measured: with 8 keep-alive
// connections to OPA on 2 cores, one processor instead of two raised authzbench from about 0.78
// to about 0.86 of wrk's req/s (docs/benchmarks.md).
func GeneratorProcsDefault() int {
	if n := runtime.NumCPU() / 2; n > 1 {
		return n
	}
	return 1
}

// StoppedError says the load was stopped before a run finished: Ctrl-C, or a server that exited.
type StoppedError struct{ Cause error }

func (e *StoppedError) Error() string { return "run stopped: " + e.Cause.Error() }
func (e *StoppedError) Unwrap() error { return e.Cause }

// sutResources summarises the server's samples over the measured phases: CPU averaged over
// the repetitions, peaks over all of them.
func sutResources(samples []sut.Sample, outs []load.Outcome) *sut.Resources {
	var total sut.Resources
	n := 0
	for _, o := range outs {
		r, ok := sut.Summarise(samples, o.MeasuredFrom, o.MeasuredFrom.Add(o.Elapsed))
		if !ok {
			continue
		}
		n++
		total.CPUCoresMean += r.CPUCoresMean
		total.CPUCoresMax = max(total.CPUCoresMax, r.CPUCoresMax)
		total.RSSMaxMB = max(total.RSSMaxMB, r.RSSMaxMB)
		total.Samples += r.Samples
	}
	if n == 0 {
		return nil
	}
	total.CPUCoresMean /= float64(n)
	return &total
}

// harness sums the process's CPU over the measured phases and takes memory at the first start
// and the last end.
func harness(outs []load.Outcome, requests uint64) *result.Harness {
	if len(outs) == 0 {
		return nil
	}
	first, last := outs[0].UsageStart, outs[len(outs)-1].UsageEnd
	var cpu time.Duration
	for _, o := range outs {
		cpu += o.UsageEnd.CPU - o.UsageStart.CPU
	}
	first.CPU, last.CPU = 0, cpu
	return result.NewHarness(first, last, requests)
}
