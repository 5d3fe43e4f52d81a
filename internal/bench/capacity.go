package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/workload"
)

// SLO is what a rate must meet: a latency percentile (measured from the intended send time) at
// or under a bound, and an error ratio at or under a bound.
type SLO struct {
	Percentile float64 // e.g. 99
	Latency    time.Duration
	ErrorRatio float64 // e.g. 0.001 for 0.1 %
}

func (s SLO) String() string {
	return fmt.Sprintf("p%g<=%s, errors<=%g%%", s.Percentile, s.Latency, 100*s.ErrorRatio)
}

// ParseSLO reads "p99=5ms,errors=0.1%".
func ParseSLO(text string) (SLO, error) {
	slo := SLO{}
	seenLatency := false
	for _, part := range strings.Split(text, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return slo, fmt.Errorf("--slo %q: want pNN=DURATION[,errors=N%%]", text)
		}
		switch {
		case strings.HasPrefix(k, "p"):
			p, err := strconv.ParseFloat(k[1:], 64)
			if err != nil || p <= 0 || p >= 100 {
				return slo, fmt.Errorf("--slo %q: percentile %q, want p50 to p99.99", text, k)
			}
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return slo, fmt.Errorf("--slo %q: latency %q, want a duration such as 5ms", text, v)
			}
			slo.Percentile, slo.Latency, seenLatency = p, d, true
		case k == "errors":
			pct, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
			if err != nil || pct < 0 || pct > 100 || !strings.HasSuffix(v, "%") {
				return slo, fmt.Errorf("--slo %q: errors %q, want a percentage such as 0.1%%", text, v)
			}
			slo.ErrorRatio = pct / 100
		default:
			return slo, fmt.Errorf("--slo %q: unknown term %q (pNN=DURATION, errors=N%%)", text, k)
		}
	}
	if !seenLatency {
		return slo, fmt.Errorf("--slo %q: give a latency percentile, such as p99=5ms", text)
	}
	return slo, nil
}

// Probe is one rate tried.
type Probe struct {
	Rate float64
	Pass bool
	Why  string // why it failed
	// Unmeasured: the probe measured no rate at all, serving no decision or too few for its
	// rate (a --step shorter than a few sends): it fails, and the search rests on nothing.
	Unmeasured bool
	// GeneratorBound: the probe failed because the generator itself fell behind the schedule,
	// which says nothing about the server (and inflates latency measured from intended times).
	GeneratorBound bool
	Latency        time.Duration
	Run            result.Run
	// Index is the probe's run's place in the document's runs.
	Index int
}

// CapacitySearch finds the highest open-loop rate that meets an SLO: doubling from Start until
// a rate fails, then bisecting between the last pass and the first failure until they are
// within Resolution of each other, within MaxSteps probes.
type CapacitySearch struct {
	Target, Workload string
	SLO              SLO
	Start, Max       float64
	Connections      int
	Step, Warmup     time.Duration
	MaxSteps         int
	Resolution       float64 // relative, e.g. 0.05
	// Options are the target's own settings by key, as flags give them (url, opa_bin ...);
	// Config, when set, is the target's settings already made (a scenario's, with the flags'
	// options), and Options is not read.
	Options map[string]any
	Config  kinds.Config
	// User is the user's own workload, named Workload, as run takes it (nil: the built-in
	// Workload); Built is the workload already built, and its engines prepared in the search's
	// Options.Common.Prepared, so that every search of a command builds it once.
	User  *workload.UserSpec
	Built *workload.Workload
	// Timeout is the per-request timeout (0: scenario.DefaultTimeout).
	Timeout time.Duration
	// Ramp, when set, replaces the probes with one linear ramp from Start to Max over Ramp,
	// read in intervals of RampInterval (0: RampIntervalFor's choice); its estimate is then
	// probed at a constant rate unless NoConfirm (ramp.go).
	Ramp, RampInterval time.Duration
	NoConfirm          bool
}

// Knee is the answer: the last rate that passed and the first that failed.
type Knee struct {
	Pass, Fail *Probe
	Probes     []Probe
	// Interrupted: Ctrl-C stopped the search before it ended, so Pass and Fail are only what
	// was met and missed before the interruption, and no knee, and no limit of --max, follows.
	Interrupted bool
}

// Capacity runs the search; every probe's run goes into doc.
func Capacity(ctx context.Context, c CapacitySearch, o Options, doc *result.Document) (Knee, error) {
	if c.Start <= 0 || c.Max < c.Start || c.MaxSteps < 1 {
		return Knee{}, errors.New("capacity: start must be positive, max at least start, and steps at least 1")
	}
	m, err := c.measurer(o, doc)
	if err != nil {
		return Knee{}, err
	}
	knee, err := c.search(func(rate float64) (Probe, error) { return m.probe(ctx, rate) })
	if ctx.Err() != nil {
		// A search cut short has no answer, whatever its probes so far say.
		knee.Interrupted = true
		if err == nil {
			err = &StoppedError{Cause: context.Cause(ctx)}
		}
		MarkStopped(ctx, doc, err)
	}
	return knee, err
}

// measurer runs one load of a search against its target, each into doc: a probe, or a ramp.
type measurer struct {
	c   CapacitySearch
	cfg kinds.Config
	ref scenario.WorkloadRef
	o   Options
	doc *result.Document
}

func (c CapacitySearch) measurer(o Options, doc *result.Document) (*measurer, error) {
	kind, err := kinds.Lookup(c.Target)
	if err != nil {
		return nil, err
	}
	cfg := c.Config
	if cfg == nil {
		cfg, err = kind.Configure(c.Options)
	}
	if err == nil {
		err = cfg.Check()
	}
	if err != nil {
		return nil, err
	}
	// One workload for every load: built, and its policy compiled, once for the search.
	if o.Common.Prepared == nil {
		o.Common.Prepared = engine.NewPrepared()
	}
	return &measurer{c: c, cfg: cfg, ref: scenario.WorkloadRef{Name: c.Workload, User: c.User, Built: c.Built}, o: o, doc: doc}, nil
}

// run measures one load and returns its run.
func (m *measurer) run(ctx context.Context, what string, spec load.Spec) (result.Run, error) {
	if ctx.Err() != nil {
		// No target is started after Ctrl-C.
		return result.Run{}, &StoppedError{Cause: context.Cause(ctx)}
	}
	timeout := m.c.Timeout
	if timeout <= 0 {
		timeout = scenario.DefaultTimeout
	}
	s := &scenario.Scenario{Name: "capacity", Source: "capacity", Repeat: 1,
		Workloads: []scenario.WorkloadRef{m.ref},
		Targets:   []scenario.TargetRef{{Name: m.c.Target, Timeout: timeout, Config: m.cfg, Load: spec}}}
	p, err := NewPlan(ctx, s, m.o)
	if err != nil {
		return result.Run{}, err
	}
	m.ref.Built = p.Workloads[0] // the next load's scenario takes the workload as built
	before := len(m.doc.Runs)
	if err := Execute(ctx, p, m.o, m.doc); err != nil {
		return result.Run{}, err
	}
	if len(m.doc.Runs) != before+1 {
		return result.Run{}, fmt.Errorf("capacity: %s produced no run", what)
	}
	return m.doc.Runs[len(m.doc.Runs)-1], nil
}

// probe measures one constant rate and judges it.
func (m *measurer) probe(ctx context.Context, rate float64) (Probe, error) {
	r, err := m.run(ctx, fmt.Sprintf("probe at %.0f req/s", rate),
		load.Spec{Rate: rate, Connections: m.c.Connections, Duration: m.c.Step, Warmup: m.c.Warmup})
	if err != nil {
		return Probe{}, err
	}
	p, err := judge(m.c.SLO, rate, r)
	p.Index = len(m.doc.Runs) - 1
	return p, err
}

// search chooses the rates, measure measures and judges one; apart, so the search can be tested
// against a model of a server.
func (c CapacitySearch) search(measure func(rate float64) (Probe, error)) (Knee, error) {
	var knee Knee
	probe := func(rate float64) (*Probe, error) {
		p, err := measure(rate)
		if err != nil {
			return nil, err
		}
		knee.Probes = append(knee.Probes, p)
		return &knee.Probes[len(knee.Probes)-1], nil
	}
	// A probe the generator fell behind on is measured once more: on a shared machine that is
	// often a passing stall, and the search should not end on it. Twice in a row is the
	// generator's ceiling, and the failure says so.
	retried := func(rate float64) (*Probe, error) {
		p, err := probe(rate)
		if err == nil && p.GeneratorBound && len(knee.Probes) < c.MaxSteps {
			p, err = probe(rate)
		}
		return p, err
	}
	rate := c.Start
	for len(knee.Probes) < c.MaxSteps {
		p, err := retried(rate)
		if err != nil {
			return knee, err
		}
		if !p.Pass {
			knee.Fail = p
			break
		}
		knee.Pass = p
		if rate >= c.Max {
			return knee, nil
		}
		rate = math.Min(rate*2, c.Max)
	}
	for knee.Pass != nil && knee.Fail != nil && len(knee.Probes) < c.MaxSteps &&
		(knee.Fail.Rate-knee.Pass.Rate)/knee.Pass.Rate > c.Resolution {
		p, err := retried(math.Round((knee.Pass.Rate + knee.Fail.Rate) / 2))
		if err != nil {
			return knee, err
		}
		if p.Pass {
			knee.Pass = p
		} else {
			knee.Fail = p
		}
	}
	return knee, nil
}

// judge decides whether one run met the SLO. A run whose generator missed the rate fails: the
// server was not shown to hold a load it never received. A latency histogram that cannot be
// read, or that does not hold every ok response, is an error: read as zero, it
// would pass any latency bound.
func judge(slo SLO, rate float64, r result.Run) (Probe, error) {
	p := Probe{Rate: rate, Run: r}
	s := r.Summary
	if s.OK > 0 {
		if len(r.Repetitions) == 0 {
			return p, fmt.Errorf("capacity: probe at %.0f req/s: %d ok responses but no repetition holding their latencies", rate, s.OK)
		}
		h, err := result.DecodeHistogram(r.Repetitions[0].HDR)
		if err != nil {
			return p, fmt.Errorf("capacity: probe at %.0f req/s: latency histogram: %w", rate, err)
		}
		if got, want := h.TotalCount(), int64(r.Repetitions[0].OK); got != want {
			return p, fmt.Errorf("capacity: probe at %.0f req/s: latency histogram holds %d responses, the run counted %d ok", rate, got, want)
		}
		p.Latency = time.Duration(h.ValueAtQuantile(slo.Percentile))
	}
	// A probe that got no answer at all measured nothing, however low its latency. One whose
	// every answer was an error did measure: the server failed the rate, and the error SLO
	// below says so, as it does for a server that fails above the knee.
	why := r.NothingServed()
	if s.Requests == 0 {
		if why == "" {
			why = "no answer"
		}
		p.Why, p.Unmeasured = why, true
		return p, nil
	}
	if why != "" || s.OK == 0 {
		if why == "" {
			why = "no served decision"
		}
		p.Why = why
		return p, nil
	}
	if w := s.ShortWindow; w != nil {
		sends := fmt.Sprintf("%d sends were", w.Fewest)
		if w.Fewest == 1 {
			sends = "1 send was"
		}
		p.Why = fmt.Sprintf("only %s due in its %s window, fewer than the %d a rate is read from: give a longer --step", sends,
			time.Duration(w.WindowS*float64(time.Second)).Round(time.Microsecond), w.Needed)
		p.Unmeasured = true
		return p, nil
	}
	var sched *load.Schedule
	if o := s.Open; o != nil {
		sched = &load.Schedule{Intended: o.Intended, Sent: o.Sent, Unsent: o.Unsent, GeneratorLate: o.GeneratorLate}
	}
	p.Pass, p.GeneratorBound, p.Why = slo.verdict(int64(s.Requests), int64(s.Errors), sched, s.Open != nil && s.Open.RateMissed, p.Latency)
	return p, nil
}

// verdict is the SLO's rule for one load's figures, a probe's or a ramp interval's: requests
// due, errors among them (unsent sends included), how the schedule was kept (nil in closed
// loop), whether the rate was missed, and the latency at the SLO's percentile. The generator's
// own lateness is named before latency, which it inflates: such a failure is the generator's
// limit, not the server's.
func (slo SLO) verdict(requests, errs int64, sched *load.Schedule, rateMissed bool, latency time.Duration) (pass, generatorBound bool, why string) {
	errRatio := float64(errs) / float64(requests)
	switch {
	case errRatio > slo.ErrorRatio:
		return false, false, fmt.Sprintf("errors %.3g%% > %g%%", 100*errRatio, 100*slo.ErrorRatio)
	case sched != nil && sched.GeneratorBehind() && !sched.Undelivered():
		return false, true, fmt.Sprintf("the generator woke up late for %d of %d sends: its own limit on this machine, not the server's",
			sched.GeneratorLate, sched.Intended)
	case latency > slo.Latency:
		return false, false, fmt.Sprintf("p%g %s > %s", slo.Percentile, latency.Round(10*time.Microsecond), slo.Latency)
	case rateMissed:
		return false, false, "the rate was not delivered (see the run's notes)"
	}
	return true, false, ""
}

// generatorBehind reports a missed rate that was the generator's doing alone: the sends went out,
// but the pacer itself woke up late for too many of them (load.Schedule.Missed's second rule).
func generatorBehind(o *result.OpenSummary) bool {
	if o == nil {
		return false
	}
	s := load.Schedule{Intended: o.Intended, Sent: o.Sent, GeneratorLate: o.GeneratorLate}
	return s.GeneratorBehind() && !s.Undelivered()
}

// FormatProbe is one line of the search's trace.
func FormatProbe(p Probe) string {
	verdict := "pass"
	if !p.Pass {
		verdict = "FAIL: " + p.Why
	}
	return fmt.Sprintf("%8.0f req/s  p-latency %-10s %s", p.Rate, p.Latency.Round(10*time.Microsecond), verdict)
}
