package scenario

import (
	"errors"
	"fmt"
	"maps"
	neturl "net/url"
	"time"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/workload"
)

// Overrides are load settings given on the command line; nil fields keep the scenario's value.
type Overrides struct {
	Workers     *int
	Rate        *float64
	Connections *int
	Duration    *time.Duration
	Warmup      *time.Duration
	Coalesce    *time.Duration
	InputSkew   *load.Draw // --input-skew: how each request's input is picked
	Requests    *int64
	Stages      []load.Stage // --stages: the open-loop schedule, over their total unless Duration says
	Timeout     *time.Duration
	Repeat      *int
	// Order replaces the scenario's order (--order).
	Order *Order
	// Sweep replaces every target's load by its steps.
	Sweep Sweep
	// Segment makes every target's load this generator's share (--shard i/N).
	Segment *load.Segment
}

// AdHoc is a scenario described by flags alone.
type AdHoc struct {
	Targets   []string
	Workloads []string
	User      *workload.UserSpec // --policy/--data/--inputs/--query
	// Options are the target options the flags set, by key (url, port, opa_bin ...), on every
	// target whose kind takes them. With url, the served targets measure that running server,
	// which has its own policy.
	Options   map[string]any
	Overrides Overrides
}

// FromFlags builds and validates a scenario from flags. Defaults: targets opa/server,
// workload rbac (or the user's files), repetitions interleaved as in scenario files.
func FromFlags(a AdHoc) (*Scenario, error) {
	s := &Scenario{Name: "ad-hoc", Source: "flags", Repeat: 1, Pin: "none"}
	var errs []error
	targets := a.Targets
	if len(targets) == 0 {
		targets = []string{"opa/server"}
	}
	for _, t := range targets {
		k, err := kinds.Lookup(t)
		if err != nil {
			errs = append(errs, fmt.Errorf("--target: %w", err))
			continue
		}
		ref := DefaultLoad()
		ref.Name = t
		if len(a.Options) > 0 {
			// Checked now, as a scenario's options are, before anything starts; the command
			// line names its flags in the errors.
			if ref.Config, err = k.Configure(a.Options); err == nil {
				err = ref.Config.Check()
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("--target %s: %w", t, err))
				continue
			}
		}
		s.Targets = append(s.Targets, ref)
	}
	// Every workload is loaded first: a pair whose workload has no version for the target's
	// engine is skipped when the others give both something to run, and refused otherwise.
	var loaded []*workload.Workload
	var flagOf []string // how each loaded workload was given, for its errors
	given := map[string]bool{}
	for _, w := range a.Workloads {
		given[w] = true
		wl, err := workload.BuiltinFor(w, enginesOf(targets))
		if err != nil {
			errs = append(errs, fmt.Errorf("--workload: %w", err))
			continue
		}
		loaded, flagOf = append(loaded, wl), append(flagOf, "--workload "+w)
		s.Workloads = append(s.Workloads, WorkloadRef{Name: w, Built: wl})
	}
	var users []*workload.UserSpec
	var built []*workload.Workload
	if a.User != nil {
		// An --inputs file that is a decision log is replayed as one: a workload per path.
		detected, err := a.User.DetectDecisionLog()
		switch {
		case err != nil:
			errs = append(errs, err)
		case detected.DecisionLog != "":
			refs, err := replayWorkloads(detected)
			if err != nil {
				errs = append(errs, err)
			}
			for _, r := range refs {
				users, built = append(users, r.User), append(built, r.Built)
			}
		default:
			wl, err := workload.FromFiles(detected)
			if err != nil {
				errs = append(errs, err)
			} else {
				users, built = append(users, a.User), append(built, wl)
			}
		}
	}
	for i, wl := range built {
		if given[wl.Name] {
			errs = append(errs, fmt.Errorf("your workload is named %s, as a --workload given too: its two runs would read as one in every table, comparison and history; name yours apart with --name", wl.Name))
			continue
		}
		given[wl.Name] = true
		u := *users[i]
		u.Name = wl.Name // the user's --name, or else named after the files
		user := &u
		if err := checkQuery(wl, s.Targets); err != nil {
			errs = append(errs, err)
		}
		built := wl
		if len(engineGaps(wl, s.Targets)) == 0 && onlyRunningServersAsked(s.Targets) && len(user.Policies) > 0 && user.DecisionLog == "" {
			// Nothing loads the policy into a running server: it only named the query. The
			// workload is built again from what is left, when the run starts.
			u.Query, u.Policies, u.Data = wl.Query, nil, nil
			built = nil
		}
		loaded, flagOf = append(loaded, wl), append(flagOf, "")
		s.Workloads = append(s.Workloads, WorkloadRef{Name: wl.Name, User: user, Built: built})
	}
	skips, unrunnable := pairGaps(loaded, s.Targets)
	s.Skips = skips
	for i := range loaded {
		for _, g := range unrunnable[i] {
			if g.refused != "" {
				errs = append(errs, fmt.Errorf("--target %s cannot run workload %s: %s", g.target, loaded[i].Name, g.refused))
			} else if flagOf[i] == "" {
				errs = append(errs, fmt.Errorf("--target %s: your workload has no %s version; give %s", g.target, g.language, g.howToGive(true)))
			} else {
				errs = append(errs, fmt.Errorf("--target %s: %s has no %s version%s", g.target, flagOf[i], g.language, g.because()))
			}
		}
	}
	if len(a.Workloads) == 0 && a.User == nil {
		s.Workloads = []WorkloadRef{{Name: "rbac"}}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, s.Apply(a.Overrides)
}

// runningServer reports whether the target measures a running server its url names with an
// engine's API: a kind that loads its policy into an engine, pointed at one someone else runs.
// That server has its policy; the workload brings only the requests.
func runningServer(t TargetRef) bool {
	k := t.Kind()
	return k != nil && k.LoadsPolicy && t.Placement() == kinds.External
}

// remoteURL is the running server a target's settings name, if any.
func remoteURL(t TargetRef) string {
	if r, ok := t.Settings().(kinds.Remote); ok {
		return r.RemoteURL()
	}
	return ""
}

// askedByQuery reports whether the target's engine asks its server for a decision of its
// policy by name (OPA's data API: see engine.Queried).
func askedByQuery(t TargetRef) bool {
	k := t.Kind()
	if k == nil {
		return false
	}
	_, ok := engine.For(k.Engine).(engine.Queried)
	return ok
}

// onlyRunningServersAsked reports whether every target whose engine is asked by query measures
// a running server, and there is one.
func onlyRunningServersAsked(targets []TargetRef) bool {
	some := false
	for _, t := range targets {
		if !askedByQuery(t) {
			continue
		}
		if !runningServer(t) {
			return false
		}
		some = true
	}
	return some
}

// checkQuery asks for the decision a running OPA (an engine asked by query) is to be asked for: --query, a --policy to
// derive it from, or a --url naming the endpoint itself. Without one the request would ask for
// all of data, and every answer would be counted an error.
func checkQuery(w *workload.Workload, targets []TargetRef) error {
	if w.Query != "" {
		return nil
	}
	for _, t := range targets {
		if !askedByQuery(t) || !runningServer(t) {
			continue
		}
		url := remoteURL(t)
		if u, err := neturl.Parse(url); err == nil && u.Path != "" && u.Path != "/" {
			continue
		}
		return fmt.Errorf("--target %s --url %s: give --query, the decision to ask the running server for (data.authz.allow), "+
			"or --policy to derive it from, or a --url with the decision's path", t.Name, url)
	}
	return nil
}

// Apply sets command-line load settings on every target of the scenario and validates them.
func (s *Scenario) Apply(o Overrides) error {
	if o.Repeat != nil {
		if *o.Repeat < 1 {
			return fmt.Errorf("--repeat must be at least 1, got %d", *o.Repeat)
		}
		s.Repeat = *o.Repeat
	}
	if o.Order != nil {
		s.Order = *o.Order
	}
	var errs []error
	if o.Sweep.kinds() > 1 {
		return errors.New("one sweep at a time: --workers with several values, --rates or --load-points")
	}
	if err := o.Sweep.check(); err != nil {
		return fmt.Errorf("--%w", err) // in the flags' words: --rates, --workers
	}
	for i := range s.Targets {
		t := &s.Targets[i]
		t.Load = OneModel(t.Load, o.Workers != nil || len(o.Sweep.Workers) > 0, o.Rate != nil || len(o.Sweep.Rates) > 0 || len(o.Sweep.LoadPoints) > 0, o.Stages != nil)
		if o.Stages != nil {
			t.Load.Stages, t.Load.Duration, t.Load.Requests = o.Stages, load.Total(o.Stages), 0
		}
		if o.Workers != nil {
			t.Load.Workers = *o.Workers
		}
		if o.Rate != nil {
			t.Load.Rate = *o.Rate
		}
		if o.Connections != nil {
			t.Load.Connections = *o.Connections
		}
		if o.Duration != nil {
			t.Load.Duration = *o.Duration
			t.Load.Requests = 0
		}
		if o.Requests != nil {
			t.Load.Requests = *o.Requests
		}
		if o.Warmup != nil {
			t.Load.Warmup = *o.Warmup
		}
		if o.Coalesce != nil {
			t.Load.Coalesce = *o.Coalesce
		}
		if o.InputSkew != nil {
			t.Load.Draw = *o.InputSkew
		}
		if o.Timeout != nil {
			t.Timeout = *o.Timeout
		}
		if o.Segment != nil {
			t.Load.Segment = *o.Segment
		}
	}
	if o.Sweep.kinds() == 1 {
		var steps []TargetRef
		for _, t := range s.Targets {
			steps = append(steps, o.Sweep.expand(t)...)
		}
		s.Targets = steps
	}
	// A sweep's steps set the rate or the workers: a problem with them names the sweep's flag.
	flags := maps.Clone(flagsOf)
	switch {
	case len(o.Sweep.Rates) > 0:
		flags["rate"] = "--rates"
	case len(o.Sweep.LoadPoints) > 0:
		flags["rate"], flags["connections"] = "--load-points", "--load-points"
	}
	said := map[string]bool{}
	for i := range s.Targets {
		t := &s.Targets[i]
		for _, p := range t.Load.Problems() {
			msg := fmt.Sprintf("target %s: %s", t.Name, flagWords(p, flags))
			if !said[msg] { // once, not once for each step of a sweep
				said[msg] = true
				errs = append(errs, errors.New(msg))
			}
		}
		if t.Timeout <= 0 {
			errs = append(errs, fmt.Errorf("target %s: --timeout must be positive, got %s", t.Name, t.Timeout))
		}
	}
	return errors.Join(errs...)
}

// flagsOf are the command-line flags that set each load setting load.Problem names.
var flagsOf = map[string]string{"workers": "--workers", "rate": "--rate", "connections": "--connections",
	"duration": "--duration", "warmup": "--warmup", "requests": "--requests", "segment": "--shard", "stages": "--stages", "coalesce": "--coalesce", "input_skew": "--input-skew"}

// flagWords says a load problem in the command line's words, by the flags that set each setting.
func flagWords(p load.Problem, flags map[string]string) string {
	flag := func(setting string) string {
		if f, ok := flags[setting]; ok {
			return f
		}
		return setting
	}
	if p.With != "" {
		return flag(p.Setting) + " and " + flag(p.With) + " " + p.Msg
	}
	return flag(p.Setting) + " " + p.Msg
}
