package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// addPolicyOptionFlags adds the flags that say how to read the user's own policy: its name, its
// Rego version, and what an undefined decision stands for. run and workloads verify share them,
// so a policy checked with one runs the same way with the other.
func addPolicyOptionFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.name, "name", "", "name of your workload in the result (default: your first policy's file name, authz.rego: authz)")
	fl.BoolVar(&f.v0, "v0-compatible", false, "your Rego is v0 syntax (OPA before 1.0: rules without if, sets without contains); every OPA target reads it so, and the servers and opa eval get --v0-compatible too")
	fl.StringVar(&f.undefinedAs, "undefined-as", "", "deny or allow: an undefined decision (your policy has no default and no rule matched) counts as this decision, recorded in the result; without it, undefined is an error")
}

// addUserFileFlags adds the flags naming the user's own files, in every engine's forms: run,
// capacity, workloads verify and profile share them, so a workload given to one is given the
// same way to the others.
func addUserFileFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringArrayVar(&f.policies, "policy", nil, "your Rego policy file or directory, repeatable; or one engine's own file: an OpenFGA store (*.fga.yaml) or model (*.fga, fga.mod), a SpiceDB validation file or schema (*.zed), a Casbin model (*.conf) and its policy (*.csv)")
	fl.StringArrayVar(&f.data, "data", nil, "your data file (JSON or YAML), repeatable")
	fl.StringVar(&f.inputs, "inputs", "", `your inputs, JSON Lines: {"input": {...}, "expect": true|false} per line`)
	fl.StringVar(&f.query, "query", "", "decision to ask for, e.g. data.authz.allow (default: <package>.allow when there is one package)")
	fl.StringArrayVar(&f.cedarPols, "cedar-policies", nil, "your Cedar policy file, repeatable (for the cedar targets)")
	fl.StringVar(&f.entities, "entities", "", "your Cedar entities, a JSON array of entities")
	fl.StringVar(&f.schema, "schema", "", "your Cedar schema (.cedarschema or .json); policies, entities and requests are validated against it")
	fl.StringVar(&f.cedarReqs, "cedar-requests", "", `your Cedar requests, JSON Lines: {"principal": {"type": "User", "id": "alice"}, "action": ..., "resource": ..., "context": {...}, "expect": true|false}; with --inputs too, line n of each is the same decision`)
	fl.StringVar(&f.cedarLinks, "template-links", "", `your Cedar template links, as the Cedar CLI's --template-linked: [{"template_id": ..., "link_id": ..., "args": {"?principal": "User::\"alice\""}}]`)
	addPolicyOptionFlags(fl, f)
}

// addScenarioFlags adds the flags that say what is measured: a scenario file, or targets and
// built-in workloads (beside the user's own files, addUserFileFlags). run and capacity share
// them; what says how a command uses them (run: "measure", capacity: "search").
func addScenarioFlags(fl *pflag.FlagSet, f *runFlags, file, what string) {
	fl.StringVarP(&f.file, "file", "f", "", file)
	fl.StringSliceVar(&f.targets, "target", nil, "target to "+what+", repeatable ("+strings.Join(kinds.Names(), ", ")+"); default opa/server")
	fl.StringSliceVar(&f.workloads, "workload", nil, "built-in workload, repeatable ("+strings.Join(workload.Names(), ", ")+"); default rbac")
}

// addReplayFlags adds the flags of a decision-log replay (docs/replay.md).
func addReplayFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.decisionLog, "decision-log", "", "replay an OPA decision log (console JSON lines or the log service's JSON arrays, gzip'd or not): each event's input asks data.<its path> of your --policy, its logged result is the expected decision; one workload per path")
	fl.StringVar(&f.decisionField, "decision-field", "", "with --decision-log: the member of object results compared, such as ext_authz's allowed (default allowed)")
	fl.Float64Var(&f.speed, "speed", 0, "with --decision-log: send each event at its recorded time after the first, divided by this (1: as recorded, 2: twice as fast), open loop, latency from the intended time; the measured window is the log's span, no warm-up")
	fl.DurationVar(&f.maxGap, "max-gap", 0, "with --speed: shorten every recorded pause longer than this to it (0: keep every gap as recorded)")
	fl.StringVar(&f.expectChanges, "expect-changes", "", "with --decision-log: the reviewed decision ids whose decisions your policy is meant to flip, one per line or a JSON array; they then expect the new decision")
}

// userSpec is the workload the user's file flags describe.
func (f *runFlags) userSpec() workload.UserSpec {
	return workload.UserSpec{Name: f.name, Policies: f.policies, Data: f.data, Inputs: f.inputs, Query: f.query,
		CedarPolicies: f.cedarPols, Entities: f.entities, Schema: f.schema, Requests: f.cedarReqs,
		TemplateLinks: f.cedarLinks, V0Compatible: f.v0, UndefinedAs: f.undefinedAs,
		DecisionLog: f.decisionLog, DecisionField: f.decisionField, ExpectChanges: f.expectChanges,
		Speed: f.speed, MaxGap: f.maxGap}
}

// checkPolicyOptions checks the settings of the user's workload, naming the flags that gave them,
// and refuses the policy options without a policy of the user's to apply them to: built-in
// workloads are v1 Rego with a default for every decision.
func checkPolicyOptions(f *runFlags, userFiles bool) error {
	if userFiles {
		return flagNamed(f.userSpec().Check())
	}
	for _, o := range []struct {
		set  bool
		flag string
	}{{f.name != "", "--name"}, {f.v0, "--v0-compatible"}, {f.undefinedAs != "", "--undefined-as"}} {
		if o.set {
			if f.file != "" {
				return fmt.Errorf("%s describes a workload given by flags; in a scenario file give name, v0_compatible or undefined_as in the workload's entry", o.flag)
			}
			return fmt.Errorf("%s applies to your own workload: give --policy and --inputs (or --cedar-policies and --cedar-requests) with it", o.flag)
		}
	}
	return nil
}

// settingFlags are the flags that give the settings of the user's workload, by the names the
// workload package (and a scenario file) gives them.
var settingFlags = map[string]string{
	"name": "--name", "policy": "--policy", "data": "--data", "inputs": "--inputs", "query": "--query",
	"v0_compatible": "--v0-compatible", "undefined_as": "--undefined-as",
	"cedar_policies": "--cedar-policies", "entities": "--entities", "schema": "--schema",
	"requests": "--cedar-requests", "template_links": "--template-links",
	"decision_log": "--decision-log", "decision_field": "--decision-field", "expect_changes": "--expect-changes",
	"speed": "--speed", "max_gap": "--max-gap",
}

// flagNamed rewrites, in err's message, each problem with a setting of the user's workload so
// that it names the flag that gave the setting rather than the scenario file's key.
func flagNamed(err error) error {
	return renamed(err, func(e error) (string, string, bool) {
		se, ok := e.(*workload.SettingError)
		if !ok {
			return "", "", false
		}
		return se.Error(), se.Named(func(setting string) string {
			if flag, ok := settingFlags[setting]; ok {
				return flag
			}
			return setting
		}), true
	})
}

// optionsFlagNamed rewrites, in err's message, each problem with a target option that a flag
// gave (given: the flags given, by the option's key) so that it names the flag; options from a
// scenario file keep their keys.
func optionsFlagNamed(err error, given map[string]string) error {
	return renamed(err, func(e error) (string, string, bool) {
		oe, ok := e.(*kinds.OptionError)
		if !ok {
			return "", "", false
		}
		return oe.Error(), oe.Named(func(key string) string {
			if flag, ok := given[key]; ok {
				return flag
			}
			return key
		}), true
	})
}

// renamed rewrites err's message wherever one of the errors it wraps has words of its own for
// the user (rename says which, and what they become), keeping the chain for errors.As.
func renamed(err error, rename func(error) (old, new string, ok bool)) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var walk func(error)
	walk = func(e error) {
		if old, new, ok := rename(e); ok {
			// A message renamed before (run's flags are named where the workload is built, and
			// again around the whole run) already says new, and old may lie inside it:
			// "query names" within "--query names" read "----query names".
			if !strings.Contains(msg, new) {
				msg = strings.Replace(msg, old, new, 1)
			}
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			if c := u.Unwrap(); c != nil {
				walk(c)
			}
		}
	}
	walk(err)
	if msg == err.Error() {
		return err
	}
	return &renamedError{msg: msg, err: err}
}

// renamedError is an error with its message rewritten; it still unwraps to the original.
type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }
