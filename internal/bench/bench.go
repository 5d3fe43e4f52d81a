// Package bench carries out a scenario: for each workload and target it starts the system under
// test, drives the load for each repetition, and folds what was recorded into the result
// document. It stops what it started whatever happens, and keeps what was measured when a run is
// cut short (Ctrl-C, a server that died), marking it partial.
package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/fit"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

// Options configure a run beyond its scenario.
type Options struct {
	// Changes, when set, changes the world during the runs of one workload (changes.go).
	Changes *Changes
	// Common are the settings every target reads; the run sets each target's workers, timeout
	// and temporary directory over them. A target's own settings are its scenario entry's.
	Common kinds.Common
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
	// Warn, when set, is told what in the user's files was read in a way they may not have
	// meant, before any load starts.
	Warn func(string)
	// Note, when set, is told what a run observed beside its figures that the user should see
	// at once: where the decisions an engine logged went.
	Note func(string)
	// StartAt, when set, holds the first turn's load until that instant (--start-at), so that
	// the shards of a scenario on several generators start together.
	StartAt time.Time
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
//
// Per workload, each target is started once. In the interleaved order (the default) the targets
// then take turns, one repetition each (A1 B1 A2 B2 …), their servers staying up between turns,
// so that drift on the machine lands on every target alike; in the sequential order each target
// runs all its repetitions, then stops, before the next one starts. Every repetition records its
// turn and start time, so the order that was used can be read back from the result.
func Run(ctx context.Context, s *scenario.Scenario, o Options, doc *result.Document) error {
	p, err := NewPlan(ctx, s, o)
	if err != nil {
		MarkStopped(ctx, doc, err)
		return err
	}
	return Execute(ctx, p, o, doc)
}

// Execute carries out a plan, as Run does a scenario; it changes neither the plan's scenario
// nor its workloads.
func Execute(ctx context.Context, p *Plan, o Options, doc *result.Document) (err error) {
	s, workloads := p.Scenario, p.Workloads
	doc.Order = s.Order.String()
	defer func() {
		MarkStopped(ctx, doc, err)
		doc.Ended = time.Now().UTC()
		doc.Comparisons = result.Compare(doc)
		fit.Refit(doc)
	}()
	o.Common.Prepared = p.Prepared
	if warn := o.Warn; warn != nil {
		// A target's warning holds for every workload and repetition it runs: said once.
		var mu sync.Mutex
		said := map[string]bool{}
		o.Warn = func(msg string) {
			mu.Lock()
			defer mu.Unlock()
			if !said[msg] {
				said[msg] = true
				warn(msg)
			}
		}
	}
	for _, w := range workloads {
		for _, warning := range w.Warnings() {
			if o.Warn != nil {
				o.Warn(fmt.Sprintf("workload %s: %s", w.Name, warning))
			}
		}
		if n := w.NotMeasured(); len(n) > 0 && o.Warn != nil {
			o.Warn(fmt.Sprintf("workload %s: not measured: %s (only checks are; the result counts them under not_measured)", w.Name, workload.CountsString(n)))
		}
	}
	tmp, err := os.MkdirTemp(o.Common.TempDir, "authzbench-")
	if err != nil {
		return fmt.Errorf("create temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	// A pair the scenario skips (the workload has no version for the target's engine) is noted
	// in the result and not run.
	steps := 0
	for _, w := range workloads {
		for _, t := range s.Targets {
			if reason := s.Skipped(w.Name, t.Name); reason != "" {
				if !doc.HasSkip(w.Name, t.Name) {
					doc.Skipped = append(doc.Skipped, result.Skip{Workload: w.Name, Target: t.Name, Reason: reason})
				}
				continue
			}
			steps++
		}
	}
	turns, step := 0, 0
	for _, w := range workloads {
		var slots []*slot
		for _, t := range s.Targets {
			if s.Skipped(w.Name, t.Name) != "" {
				continue
			}
			step++
			slots = append(slots, newSlot(s, o, tmp, w, t, step, steps))
		}
		if len(slots) == 0 {
			continue
		}
		err := runWorkload(ctx, s, slots, &turns)
		for _, sl := range slots {
			// A target that failed to start (or died before measuring) is recorded with its
			// error; one stopped before it measured anything is left out.
			if sl.attempted && (sl.turns > 0 || sl.run.Error != "") {
				doc.Runs = append(doc.Runs, *sl.run)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkOrder refuses what the interleaved order cannot do: two servers listening on one port.
func checkOrder(s *scenario.Scenario, o Options) error {
	if s.Order != scenario.Interleaved || s.Repeat < 2 {
		return nil
	}
	servers := map[int]int{} // by port
	for _, t := range s.Targets {
		if sv, ok := t.Settings().(kinds.Served); ok && t.Placement() == kinds.LaunchedServer && sv.Server().Port != 0 {
			servers[sv.Server().Port]++
		}
	}
	for port, n := range servers {
		if n > 1 {
			return kinds.NewOptionError("port", func(name func(string) string) string {
				return fmt.Sprintf("%s %d: interleaved repetitions keep the %d servers up at once, and only one can listen on that port; "+
					"run the repetitions in sequential order or drop %s", name("port"), port, n, name("port"))
			})
		}
	}
	return nil
}

// runWorkload runs every repetition of the workload's targets in the scenario's order, and
// leaves in each slot the run it measured. turns counts the repetitions of the whole scenario.
func runWorkload(ctx context.Context, s *scenario.Scenario, slots []*slot, turns *int) (err error) {
	defer func() {
		for _, sl := range slots {
			sl.finish(s.Repeat, err)
		}
	}()
	if s.Order == scenario.Sequential || s.Repeat == 1 || len(slots) == 1 {
		// With one repetition (or one target) both orders are the same turns; each server is up
		// only for its own.
		for _, sl := range slots {
			if err := sl.start(ctx); err != nil {
				return err
			}
			for rep := 1; rep <= s.Repeat; rep++ {
				*turns++
				if err := sl.turn(ctx, rep, s.Repeat, *turns); err != nil {
					return err
				}
			}
			sl.finish(s.Repeat, nil)
		}
		return nil
	}
	// Every target is started before any load, so one that cannot start fails the workload
	// before anything is measured.
	for _, sl := range slots {
		if err := sl.start(ctx); err != nil {
			return err
		}
	}
	for rep := 1; rep <= s.Repeat; rep++ {
		for _, sl := range slots {
			*turns++
			if err := sl.turn(ctx, rep, s.Repeat, *turns); err != nil {
				return err
			}
		}
	}
	return nil
}

// slot is one target of one workload across its turns: started once, measured one repetition
// per turn, stopped after its last.
type slot struct {
	ref         scenario.TargetRef
	kind        *kinds.Kind
	cfg         kinds.Config // the target's own settings
	w           *workload.Workload
	o           Options
	step, steps int
	run         *result.Run
	common      kinds.Common
	pin         *pinPlan // the generator's CPUs for this target's turns; nil when not pinning
	procs       int      // the generator's GOMAXPROCS for this target's turns
	tg          kinds.Target
	attempted   bool // Start was called
	turns       int  // turns that measured something
	// saidUncoalesced: the user was told their coalesce window went unused (said once).
	saidUncoalesced bool
	started         bool // Start succeeded
	stopped         bool // stopped, and the run summarised
	merged          *metrics.Recorder
	outcomes        []load.Outcome  // one per measured repetition: usage counts measured phases only
	resources       []sut.Resources // the server's, one per turn it was sampled over
	// replicaResources are each replica's, one per turn, for a replicated server.
	replicaResources [][]sut.Resources
}

func newSlot(s *scenario.Scenario, o Options, tmp string, w *workload.Workload, t scenario.TargetRef, step, steps int) *slot {
	t.Load = scenario.Paced(t.Load, w)
	allow, deny, unverified := w.Counts()
	run := &result.Run{
		Target:   t.Name,
		Workload: w.Name,
		WorkloadDoc: result.WorkloadInfo{Description: w.Description, Query: w.Query, Inputs: len(w.Inputs),
			ExpectAllow: allow, ExpectDeny: deny, Unverified: unverified, NotMeasured: w.NotMeasured()},
		Load: result.Load{TimeoutS: t.Timeout.Seconds()},
	}
	t.Load.Record(&run.Load, w.Inputs)
	if op := o.Common.Operation; op != kinds.Check {
		run.Operation = op.String()
	}
	kind := t.Kind()
	if series := seriesOf(kind.Engine, w); series != "" {
		run.Scale = &result.Scale{Series: series, Param: w.Scale.Param, N: w.Scale.N}
	}
	// What the engine is handed ready-made (‡), named with the engine.
	if what := engine.HandedTo(kind.Engine, w); what != "" {
		e := engine.For(kind.Engine)
		run.WorkloadDoc.Handed = &result.Handed{Engine: e.Name(), Language: engine.Language(e), What: what}
	}
	if w.UndefinedAs != workload.Unverified {
		run.WorkloadDoc.UndefinedAs = w.UndefinedAs.String()
	}
	// The version of the engine's language the workload is written in (Rego v0); the field
	// keeps its first engine's name.
	run.WorkloadDoc.RegoVersion = engine.DialectOf(kind.Engine, w)
	cfg := t.Settings()
	placement := kind.PlacementFor(cfg)
	sl := &slot{ref: t, kind: kind, cfg: cfg, w: w, o: o, step: step, steps: steps, run: run, merged: metrics.NewRecorder()}
	cpus := runtime.NumCPU()
	if o.CPUs > 0 {
		cpus = o.CPUs
	}
	common := o.Common
	if o.AutoPin != nil {
		sl.pin = planPinning(o.AutoPin, placement != kinds.LaunchedServer)
		cpus, run.Pinning = len(sl.pin.generator), sl.pin.description
		if sl.pin.sut != nil {
			common.PinCPUs = sl.pin.sut
		}
	}
	procs := o.GeneratorProcs
	if procs <= 0 {
		procs = max(1, min(GeneratorProcsDefault(), cpus))
	}
	if placement == kinds.InProcess || (t.Load.Open() && o.GeneratorProcs <= 0) {
		// In-process engines need every core; so does an open-loop pacer, which must find a free
		// processor the moment a send is due (with one, 2.4 % of sends at 2,000/s started more
		// than 1 ms late; with two, 0.6 %).
		procs = cpus
	}
	sl.procs = procs
	run.Load.GeneratorProcs = procs
	common.Workers = t.Load.Workers
	if !t.Load.Open() && !t.Load.Segment.Whole() {
		// A closed-loop shard runs its share of the workers, and its pool is that share.
		_, common.Workers = t.Load.Segment.Workers(t.Load.Workers)
		run.Load.ShardWorkers = common.Workers
	}
	if t.Load.Open() {
		common.Workers = t.Load.Connections
	}
	common.Timeout = t.Timeout
	common.TempDir = tmp
	sl.common = common
	// The longest latency a run can see: an open-loop send due at the start of the warm-up that
	// waits for a connection through the whole run, then waits out its timeout.
	sl.ref.Load.Ceiling = t.Timeout + t.Load.Warmup + t.Load.Duration
	sl.ref.Load.Timeout = t.Timeout // how long open-loop sends due in the window may wait after it
	return sl
}

// start starts the system under test; a target that cannot start is recorded with its error.
func (sl *slot) start(ctx context.Context) error {
	sl.attempted = true
	tg, err := kinds.New(sl.ref.Name, sl.common, sl.cfg)
	if err != nil {
		sl.run.Error = err.Error()
		return err
	}
	tg = kinds.WithUndefinedAs(tg, sl.w.UndefinedAs)
	sl.tg = tg
	if err := tg.Start(ctx, sl.w); err != nil {
		err = fmt.Errorf("start %s for workload %s: %w", sl.ref.Name, sl.w.Name, err)
		if ctx.Err() != nil {
			// Not a target that failed: the user stopped it starting (a replica, a server
			// waiting to answer), and the run says so in the user's words, not the context's.
			err = &StoppedError{Cause: fmt.Errorf("%w while starting %s for workload %s", context.Cause(ctx), sl.ref.Name, sl.w.Name)}
		}
		sl.run.Error = err.Error()
		sl.recordSUT()
		return err
	}
	sl.started = true
	sl.recordSUT()
	if err := sl.withChanges(); err != nil {
		sl.run.Error = err.Error()
		return err
	}
	if w, ok := sl.tg.(kinds.Warned); ok && sl.o.Warn != nil {
		for _, msg := range w.Warnings() {
			sl.o.Warn(fmt.Sprintf("target %s: %s", sl.run.Target, msg))
		}
	}
	if pid := sl.run.SUT.PID; pid != 0 {
		// What the kernel says the server may run on, whoever set it: our pinning, a taskset
		// around authzbench (which a server started unpinned inherits), a cgroup.
		if cpus, err := sut.Affinity(pid); err == nil {
			sl.affinity().SUT = sut.FormatCPUs(cpus)
		}
	}
	return nil
}

// recordSUT records how the system under test was run, with where it ran as its kind says.
func (sl *slot) recordSUT() {
	sl.run.SUT = sutInfo(sl.kind.PlacementFor(sl.cfg), sl.tg.Info())
}

func (sl *slot) affinity() *result.Affinity {
	if sl.run.Affinity == nil {
		sl.run.Affinity = &result.Affinity{}
	}
	return sl.run.Affinity
}

// turn measures one repetition. The generator's pinning and GOMAXPROCS are this target's for the
// turn (another target's turn may have changed them), and the server is sampled only while its
// own repetition runs.
func (sl *slot) turn(ctx context.Context, rep, reps, seq int) error {
	if sl.pin != nil {
		if err := sut.PinProcess(sl.pin.generator); err != nil {
			return fmt.Errorf("pin for %s: %w", sl.ref.Name, err)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(sl.procs))
	if sl.run.Affinity == nil || sl.run.Affinity.Generator == "" {
		if cpus, err := sut.Affinity(0); err == nil {
			sl.affinity().Generator = sut.FormatCPUs(cpus)
		}
	}
	progress := func(p load.Progress) {
		if sl.o.Progress == nil {
			return
		}
		st := Status{Step: sl.step, Steps: sl.steps, Workload: sl.w.Name, Target: sl.ref.Name, Repetition: rep,
			Reps: reps, Load: p, Planned: sl.ref.Load.Duration}
		if p.Warmup {
			st.Planned = sl.ref.Load.Warmup
		}
		if secs := p.Elapsed.Seconds(); secs > 0 && !p.Warmup {
			st.RequestsPerSecond = float64(p.OK) / secs
		}
		sl.o.Progress(st)
	}
	if seq == 1 && !sl.o.StartAt.IsZero() {
		if err := waitUntil(ctx, sl.o.StartAt, sl.o.Warn); err != nil {
			return &StoppedError{Cause: err}
		}
	}
	var sampler *sut.Sampler
	replicas := sl.startReplicaSampling()
	if pid := sl.run.SUT.PID; pid != 0 && replicas == nil {
		sampler = sut.StartSampler(pid, 250*time.Millisecond)
	}
	begun := time.Now()
	// The engine's cache counters around the measured phase: read as it begins (the warm-up
	// having filled the caches) and after it, outside the clock, they cost the load nothing.
	// One that cannot be read leaves its cache uncounted.
	var cachesBefore map[string]result.CacheCount
	spec := sl.ref.Load
	if len(sl.run.SUT.Caches) > 0 {
		spec.Measuring = func() { cachesBefore, _ = kinds.CacheCountsOf(context.WithoutCancel(ctx), sl.tg) }
	}
	out := spec.Run(ctx, sl.tg, sl.w.Inputs, progress)
	if cachesBefore != nil {
		if after, err := kinds.CacheCountsOf(context.WithoutCancel(ctx), sl.tg); err == nil {
			result.AddCounts(sl.run.SUT.Caches, cachesBefore, after)
		}
	}
	replicas.stop(sl, out)
	if sampler != nil {
		if res, ok := sut.Summarise(sampler.Stop(), out.MeasuredFrom, out.MeasuredFrom.Add(out.Elapsed)); ok && out.Elapsed > 0 {
			sl.resources = append(sl.resources, res)
		}
	}
	partial := out.Stopped != nil
	measured := out.Elapsed > 0 || out.Recorder.Requests() > 0
	if measured {
		r, err := newRepetition(out.Recorder, out.Elapsed, partial)
		if err != nil {
			return err
		}
		if sc := out.Schedule; sc != nil {
			if err := setSchedule(&r, *sc, out.Recorder, out.Elapsed); err != nil {
				return err
			}
			sl.sayUncoalesced(*sc)
		}
		// A run with changes reads its intervals as the changes' timeline, not as a ramp's.
		if len(out.Intervals) > 0 && out.Changes == nil {
			if r.Intervals, err = intervalsOf(sl.ref.Load, out.Intervals); err != nil {
				return err
			}
		}
		if out.Changes != nil {
			changes, writes, err := changesOf(sl.ref.Load.Changes, out.Changes, out.Intervals)
			if err != nil {
				return err
			}
			if p := sl.run.SUT.Consistency; p != nil {
				changes.Consistency = p.Name
			}
			sl.run.Changes, sl.run.Operations = changes, []result.Operation{writes}
		}
		r.Turn, r.Started = seq, begun.UTC()
		if !out.MeasuredFrom.IsZero() {
			r.MeasuredFrom = out.MeasuredFrom.UTC()
		}
		sl.run.Repetitions = append(sl.run.Repetitions, r)
		sl.merged.Merge(out.Recorder)
		sl.outcomes = append(sl.outcomes, out)
		sl.turns++
	}
	if !partial {
		return nil
	}
	// A turn stopped before it measured anything adds nothing, unless the server died: then
	// its run carries the reason.
	if measured || ctx.Err() == nil {
		sl.run.Partial = measured
		sl.run.Error = out.Stopped.Error()
	}
	return &StoppedError{Cause: out.Stopped}
}

// finish stops the target and summarises what was measured; err, when the scenario did not
// finish, marks a run that began its turns but did not complete them.
func (sl *slot) finish(reps int, err error) {
	if sl.stopped || !sl.attempted {
		return
	}
	sl.stopped = true
	sl.recordReplicas()
	if st := sl.run.SUT.Startup; st != nil && sl.started {
		// The server's memory at the end of its load, before it stops: its steady state, and
		// whether the load raised its peak above its start's.
		if mem, err := sut.ReadMemory(sl.run.SUT.PID); err == nil {
			st.EndPeakMB, st.EndRSSMB = float64(mem.Peak)/(1<<20), float64(mem.Resident)/(1<<20)
		}
	}
	if sl.tg != nil {
		sl.tg.Stop(context.Background())
		// What the run wrote into a server the user runs was removed by the stop, or not:
		// the result says which, and a removal that failed is said now.
		if w := sl.tg.Info().Written; w != nil {
			sl.run.SUT.Written = w
			if w.RemoveError != "" && sl.o.Warn != nil {
				sl.o.Warn(fmt.Sprintf("target %s: %s is left in the server at %s: removing it failed: %s", sl.ref.Name, w.What, sl.run.SUT.URL, w.RemoveError))
			}
		}
		// Where the decisions the engine logged went is known only once it stopped (it
		// flushes at its stop): the result records it, the terminal says it, and a decision
		// missing or received twice is a finding.
		if d := sl.tg.Info().DecisionLogs; d != nil {
			sl.run.SUT.DecisionLogs = d
			if d.Account != nil && sl.o.Note != nil {
				sl.o.Note(fmt.Sprintf("target %s, workload %s: %s", sl.ref.Name, sl.w.Name, d.Describe()))
			}
			if d.Account != nil && sl.o.Warn != nil {
				for _, f := range d.Account.Findings() {
					sl.o.Warn(fmt.Sprintf("target %s, workload %s: finding: %s", sl.ref.Name, sl.w.Name, f))
				}
			}
		}
	}
	run := sl.run
	if len(sl.outcomes) > 0 {
		run.Harness = harness(sl.outcomes, sl.merged.Requests())
	}
	run.SUTResources = resourcesOf(sutResources(sl.resources))
	if sl.started && len(run.Repetitions) > 0 && len(run.Repetitions) < reps && !run.Partial {
		// Stopped between its turns, or during another target's: it keeps what it measured.
		run.Partial = true
		if err != nil && run.Error == "" {
			run.Error = fmt.Sprintf("stopped after %d of %d repetitions: %v", len(run.Repetitions), reps, err)
		}
	}
	if !sl.started {
		return
	}
	run.Summary = summarise(run.Load, run.Repetitions, sl.merged)
	run.Summary.Mismatches = mismatches(sl.merged.Mismatches, sl.w, sl.kind.Engine)
	if c := run.Summary.Connections; c != nil {
		// Set whether or not the run finished, so a partial run's count is against what its
		// own repetitions could have opened.
		c.Reused = !sl.common.NoReuse
		c.Expected = int64(sl.common.Workers) * int64(len(run.Repetitions)) // a fresh pool per repetition, at most
		if sl.common.NoReuse {
			c.Expected = int64(run.Summary.Requests)
		}
	}
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

// pinPlan is where the generator runs for one target's turns. Only a server authzbench starts
// is pinned apart; otherwise (an in-process engine, per-decision processes that are the
// generator's children, a server run by someone else) every CPU stays available.
type pinPlan struct {
	generator, sut []int
	description    string
}

func planPinning(p *Pinning, unpinned bool) *pinPlan {
	if unpinned {
		return &pinPlan{generator: sut.AllCPUs(), description: "none: no server process of its own to pin apart"}
	}
	return &pinPlan{generator: p.Load, sut: p.SUT,
		description: "generator on CPUs " + sut.FormatCPUs(p.Load) + ", server on CPUs " + sut.FormatCPUs(p.SUT)}
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

// MarkStopped says in doc why the scenario ended early, if it did. The document is marked
// interrupted when a run was cut short (Ctrl-C, a server that died) and whenever Ctrl-C stopped
// the scenario before it finished, wherever it fell: while a target started, during a warm-up,
// between two steps of a sweep or two probes of a search. Then what the document holds is not
// all the scenario meant to measure, and no reader may take it for the whole. A target that
// failed to start by itself, with no Ctrl-C, measured nothing and says so in its run's error.
// runErr is what Run (or a search running it) returned; safe to call more than once.
func MarkStopped(ctx context.Context, doc *result.Document, runErr error) {
	switch {
	case ctx.Err() != nil && (runErr != nil || doc.Interrupted):
		doc.Interrupted = true
		doc.StopReason = context.Cause(ctx).Error()
	case runErr != nil && doc.StopReason == "":
		doc.StopReason = runErr.Error()
	}
	for _, r := range doc.Runs {
		doc.Interrupted = doc.Interrupted || r.Partial
	}
}

// StoppedError says the load was stopped before a run finished: Ctrl-C, or a server that exited.
type StoppedError struct{ Cause error }

func (e *StoppedError) Error() string { return "run stopped: " + e.Cause.Error() }
func (e *StoppedError) Unwrap() error { return e.Cause }

// sutResources summarises the server's turns: CPU averaged over them, peaks over all of them.
func sutResources(turns []sut.Resources) *sut.Resources {
	if len(turns) == 0 {
		return nil
	}
	var total sut.Resources
	for _, r := range turns {
		total.CPUCoresMean += r.CPUCoresMean
		total.CPUCoresMax = max(total.CPUCoresMax, r.CPUCoresMax)
		total.RSSMaxMB = max(total.RSSMaxMB, r.RSSMaxMB)
		total.Samples += r.Samples
	}
	total.CPUCoresMean /= float64(len(turns))
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
	return newHarness(first, last, requests)
}

// mismatches names the inputs given a wrong decision by their file and line, as the engine was
// given them.
func mismatches(ms []metrics.Mismatch, w *workload.Workload, engineName string) []result.Mismatch {
	var out []result.Mismatch
	for _, m := range ms {
		got := workload.ExpectDeny
		if m.Allow {
			got = workload.ExpectAllow
		}
		out = append(out, result.Mismatch{Input: m.Input + 1, Source: engine.SourceFor(engineName, w.Inputs[m.Input]),
			Expected: m.Expect.String(), Got: got.String()})
	}
	return out
}

// waitUntil holds the load until at (--start-at). Servers that took until after it to start
// make the load late: it starts at once, with a warning, and a merge of the shards takes its
// throughput over the window they really spanned.
func waitUntil(ctx context.Context, at time.Time, warn func(string)) error {
	wait := time.Until(at)
	if wait <= 0 {
		if warn != nil {
			warn(fmt.Sprintf("start-at %s had passed when the targets were ready (%s late): the load starts now", at.Format(time.RFC3339), (-wait).Round(time.Millisecond)))
		}
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for start-at %s: %w", at.Format(time.RFC3339), context.Cause(ctx))
	}
}

// seriesOf names the scaling series a run of w on the engine belongs to: the style the
// workload names for the engine, or for a registered engine whose version of the family the
// workload does not name (one its own package writes, from another engine's version) the
// engine's name, so its runs are fitted as the others' are. "" for a workload of no series, and
// for an engine with no version of it.
func seriesOf(engineName string, w *workload.Workload) string {
	if series := w.Scale.Series(engineName); series != "" || w.Scale == nil {
		return series
	}
	if e := engine.For(engineName); e != nil && e.Written(w) {
		return w.Scale.Family + "/" + engineName
	}
	return ""
}

// sayUncoalesced tells the user, once per target, that the coalesce window they asked for went
// unused: only the event loop sends sends together, and this target's went out through the
// goroutines; or the event loop sent none together, because no two of a loop's sends fell due
// within the window (at a constant rate a loop's sends are generator procs / rate apart: 200 µs
// at 5,000 req/s on one), and the wake-ups it was to save were all paid. The window stays in the
// result, beside the sender that ignored it.
func (sl *slot) sayUncoalesced(sc load.Schedule) {
	if sl.ref.Load.Coalesce <= 0 || sl.saidUncoalesced || sl.o.Warn == nil {
		return
	}
	switch {
	case sc.Sender == load.SenderGoroutines:
		sl.o.Warn(fmt.Sprintf("target %s: coalesce %s had no effect: its sends went out one at a time through the goroutine engine; only plain keep-alive HTTP/1.1 (no TLS, HTTP/2, gRPC or --no-reuse, not in process) has the event loop that sends them together",
			sl.run.Target, sl.ref.Load.Coalesce))
	case sc.Sender == load.SenderEventLoop && sc.Together == 0 && sc.Sent > 1:
		sl.o.Warn(fmt.Sprintf("target %s: coalesce %s had no effect: no two of an event loop's sends fell due within it, so each went out at its own wake-up; a window saves CPU only when it is at least the time between one loop's sends (at a constant rate, generator procs / rate: 100us at 10,000 req/s on one)",
			sl.run.Target, sl.ref.Load.Coalesce))
	default:
		return
	}
	sl.saidUncoalesced = true
}
