package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// changeFlags change the world during a run: a writer applies the changes beside the load and
// every answer is judged against the versions it may reflect.
type changeFlags struct {
	file         string
	rate         string
	staleAllowed time.Duration
}

func addChangeFlags(fl *pflag.FlagSet, f *changeFlags) {
	fl.StringVar(&f.file, "changes", "", "change the world during the run: builtin (the built-in family's stream, from its reference model: rbac's grants and revokes; gdrive's, github's and tinytodo's shares, unshares, memberships and moves), builtin-policy (rbac's policy itself replaced: a role's grant withdrawn, then the whole policy put back, in each engine's language, for OPA, Cedar and Casbin), or a JSON-lines file, one change a line, applied in order from the measured phase on: "+
		`{"request": {"method": "POST", "path": "/revoke", "body": {...}}, "expect": {"3": "deny"}} (the http target's write, and the decisions it sets by input number), or {"write": ..., "expect": {...}} in the engine's own form (a JSON Patch of OPA's data, Cedar's entities, Casbin's role links, an OpenFGA Write body, a SpiceDB WriteRelationships request, or a policy replacement: {"policy": "v2.rego"} for OPA, {"policy": "v2.csv"} for Casbin, Cedar's "policies"; docs/changes.md); `+
		"every answer is judged fresh, stale or wrong against the versions it may reflect")
	fl.StringVar(&f.rate, "change-rate", "1/s", "with --changes: changes a second (10/s), one at a time")
	fl.DurationVar(&f.staleAllowed, "stale-allowed", 0, "with --changes: how old a stale answer may be within the consistency the target promises (5.5s); older ones are counted as stale beyond the promise (0: none may be stale; by default the promise of the consistency OpenFGA's and SpiceDB's targets ask)")
}

// parseChangeRate reads "10/s" or "10".
func parseChangeRate(s string) (float64, error) {
	n, err := change.ParseRate(s)
	if err != nil {
		return 0, fmt.Errorf("--change-rate %w", err)
	}
	return n, nil
}

// readChanges reads --changes against the workload it changes, before any load: a bad line,
// an input that is not there, a target that takes no writes, or a run that cannot carry a
// stream (repetitions, shards) is refused here, naming the file and line or the flag. A scenario
// file's changes, change_rate and stale_allowed keys stand where their flags are not given.
func readChanges(fl *pflag.FlagSet, f changeFlags, plan *bench.Plan, sharded bool) (*bench.Changes, error) {
	name := "--changes"
	if sc := plan.Scenario.Changes; !fl.Changed("changes") && sc.File != "" {
		f.file, name = sc.File, fmt.Sprintf("%s:%d: changes", plan.Scenario.Source, sc.Line)
	}
	if sc := plan.Scenario.Changes; sc.File != "" {
		if sc.Rate != "" && !fl.Changed("change-rate") {
			f.rate = sc.Rate
		}
		if sc.StaleAllowed != nil && !fl.Changed("stale-allowed") {
			f.staleAllowed = *sc.StaleAllowed
		}
	}
	if f.file == "" {
		for _, name := range []string{"change-rate", "stale-allowed"} {
			if fl.Changed(name) {
				return nil, fmt.Errorf("--%s applies to a run with --changes", name)
			}
		}
		var errs []error
		for _, t := range plan.Scenario.Targets {
			if c, ok := t.Settings().(kinds.ChangesOnly); ok {
				if err := c.WithoutChanges(); err != nil {
					errs = append(errs, fmt.Errorf("target %s: %w", t.Name, err))
				}
			}
		}
		return nil, errors.Join(errs...)
	}
	rate, err := parseChangeRate(f.rate)
	if err != nil {
		return nil, err
	}
	if f.staleAllowed < 0 {
		return nil, fmt.Errorf("--stale-allowed %s: want 0 or more", f.staleAllowed)
	}
	var changed []*workload.Workload
	for _, w := range plan.Workloads {
		if w.Name != "nop" {
			changed = append(changed, w)
		}
	}
	if len(changed) != 1 {
		return nil, fmt.Errorf("%s: its expectations name the inputs of one workload, and the run has %d: give one", name, len(changed))
	}
	if plan.Scenario.Repeat > 1 {
		rep := "repeat" // the scenario file's key
		if fl.Changed("repeat") {
			rep = "--repeat"
		}
		return nil, fmt.Errorf("%s with %s %d: a stream changes the world once; run one repetition", name, rep, plan.Scenario.Repeat)
	}
	if sharded {
		return nil, fmt.Errorf("%s with --shard: one writer applies the stream; run it on one machine", name)
	}
	for _, t := range plan.Scenario.Targets {
		// A file's lines are checked against each target's form once read (checkWrites).
		if writes, _ := kinds.TakesWrites(t.Name, t.Settings()); !writes {
			return nil, fmt.Errorf("%s: target %s takes no writes yet; those that do: %s", name, t.Name, strings.Join(writableKinds(), ", "))
		}
		if err := kinds.WritesRefused(t.Name, t.Settings()); err != nil {
			return nil, fmt.Errorf("%s: target %s: %w", name, t.Name, err)
		}
	}
	w := changed[0]
	expects := make([]workload.Expect, len(w.Inputs))
	for i, in := range w.Inputs {
		expects[i] = in.Expect
	}
	// Without --stale-allowed, each target's consistency says how stale an answer may be.
	out := &bench.Changes{Source: f.file, Workload: w.Name, Rate: rate, Allowed: f.staleAllowed, AllowedGiven: fl.Changed("stale-allowed")}
	if f.file == builtinChanges || f.file == builtinPolicyChanges {
		var longest time.Duration
		for _, t := range plan.Scenario.Targets {
			longest = max(longest, t.Load.Duration+t.Load.Warmup)
		}
		n := min(100000, int(rate*longest.Seconds())+1)
		makeStream, source := workload.BuiltinChanges, w.Name+"'s built-in stream"
		if f.file == builtinPolicyChanges {
			makeStream, source = workload.BuiltinPolicyChanges, w.Name+"'s built-in policy stream"
		}
		stream, err := makeStream(w, n)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", name, f.file, err)
		}
		out.Source = source
		out.ByEngine = map[string]*change.Stream{}
		for _, t := range plan.Scenario.Targets {
			engineName := t.Kind().Engine
			if out.ByEngine[engineName] != nil {
				continue
			}
			cs := make([]change.Change, len(stream))
			// A policy stream's changes make a few policies over and over: each is written once.
			written := map[any]json.RawMessage{}
			for k, c := range stream {
				form := written[c.Policy]
				if form == nil {
					var err error
					form, err = engine.WriteFor(engineName, w, c)
					if err == nil && len(form) == 0 {
						err = fmt.Errorf("engine %s cannot write change %d (%s) of workload %s", engineName, k+1, c.What, w.Name)
					}
					if err != nil {
						return nil, fmt.Errorf("%s %s: target %s: %w", name, f.file, t.Name, err)
					}
					if c.Policy != nil {
						written[c.Policy] = form
					}
				}
				cs[k] = change.Change{Source: c.What, Sets: c.Sets, Form: form}
			}
			if out.ByEngine[engineName], err = change.NewStream(expects, cs); err != nil {
				return nil, err
			}
		}
		// A target's settings may take only some of its engine's writes (OPA's delta bundles
		// carry no policy): refused now, as a changes file's line would be, not at the first
		// change under load.
		for _, t := range plan.Scenario.Targets {
			wc, ok := t.Settings().(kinds.WriteFormChecker)
			if !ok {
				continue
			}
			for k, c := range out.ByEngine[t.Kind().Engine].Changes {
				if err := wc.CheckWriteForm(c.Form); err != nil {
					return nil, fmt.Errorf("%s %s: target %s: change %d (%s): %w", name, f.file, t.Name, k+1, c.Source, err)
				}
			}
		}
		return out, nil
	}
	cs, err := change.ReadFile(f.file, len(w.Inputs))
	if err != nil {
		return nil, err
	}
	if err := checkWrites(plan, w, filepath.Dir(f.file), cs); err != nil {
		return nil, err
	}
	if out.Stream, err = change.NewStream(expects, cs); err != nil {
		return nil, err
	}
	return out, nil
}

// checkWrites checks every line of a changes file against every target: the http target sends
// each line's "request", an engine's target takes its "write", read by the engine; every line at
// fault is named at once. A write that names files (OPA's policy replacement) is first read by
// its engine, relative to dir (the changes file's), into the form its targets apply.
func checkWrites(plan *bench.Plan, w *workload.Workload, dir string, cs []change.Change) error {
	var errs []error
	resolved := map[string]bool{}
	for _, t := range plan.Scenario.Targets {
		if _, requests := kinds.TakesWrites(t.Name, t.Settings()); requests || resolved[t.Kind().Engine] {
			continue
		}
		resolved[t.Kind().Engine] = true
		for i, c := range cs {
			if c.Request != nil {
				continue
			}
			form, err := engine.ResolveWriteFor(t.Kind().Engine, w, c.Form, dir)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: target %s: %w", c.Source, t.Name, err))
				continue
			}
			cs[i].Form = form
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, t := range plan.Scenario.Targets {
		_, requests := kinds.TakesWrites(t.Name, t.Settings())
		name := t.Kind().Engine
		for _, c := range cs {
			switch {
			case requests && c.Request == nil:
				errs = append(errs, fmt.Errorf("%s: target %s sends each change's \"request\"; this line has none", c.Source, t.Name))
			case !requests && c.Form == nil:
				errs = append(errs, fmt.Errorf("%s: target %s takes its engine's own writes, not requests: give \"write\" in %s's own form, or --changes builtin", c.Source, t.Name, name))
			case !requests:
				err := engine.CheckWriteFor(name, c.Form)
				if wc, ok := t.Settings().(kinds.WriteFormChecker); ok && err == nil {
					err = wc.CheckWriteForm(c.Form)
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: \"write\" for target %s: %w", c.Source, t.Name, err))
				}
			}
			// Ten are enough to show what is wrong with a long file.
			if len(errs) >= 10 {
				return errors.Join(errs...)
			}
		}
	}
	return errors.Join(errs...)
}

// writableKinds are the kinds whose targets take writes, for a message.
func writableKinds() []string {
	var out []string
	for _, k := range kinds.Kinds() {
		if writes, _ := kinds.TakesWrites(k.Name, nil); writes {
			out = append(out, k.Name)
		}
	}
	return out
}

// builtinChanges is --changes's word for the workload's own stream, from its family's
// reference model.
const builtinChanges = "builtin"

// builtinPolicyChanges is --changes's word for the workload's own stream of policy replacements,
// from its family's reference model.
const builtinPolicyChanges = "builtin-policy"
