// Package workload defines what authzbench asks an engine to decide: a policy, the data it
// reads, and a list of inputs, each carrying the decision it must produce.
//
// Built-in workloads are embedded and generated from a fixed seed, so every run and every
// machine sends the same inputs. Their expected decisions come from a small Go reference model
// per workload, written independently of any engine's version of it. The model is handed over
// (Workload.Model, Input.Model) to the engines, whose versions of the built-ins live in their
// own packages, which add them as each is built (RegisterBuiltinVersion) and test them against
// the model.
// User-supplied workloads bring their own files and expectations.
//
// This package does not run engines or time anything.
package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Expect is the decision an input must produce.
type Expect uint8

const (
	// Unverified inputs count as ok whatever the engine answers (a user's inputs without
	// "expect"); the result says how many there were.
	Unverified Expect = iota
	ExpectAllow
	ExpectDeny
)

func (e Expect) String() string {
	switch e {
	case ExpectAllow:
		return "allow"
	case ExpectDeny:
		return "deny"
	}
	return "unverified"
}

// Input is one decision request.
type Input struct {
	// JSON is the input as one JSON document, exactly as the engines that take one (OPA's
	// "input", the generic HTTP targets' bodies) are given it: the family's own form of the
	// request for a built-in, the user's for a user's input.
	JSON []byte
	// Expect is the decision the input must produce.
	Expect Expect
	// Reason names, for built-in workloads, the rule of the reference model that decided
	// (for example "deny: not owner"); it lets tests check that denies come from many rules.
	Reason string
	// Source is the file and line a user-supplied input came from, for error messages.
	Source string
	// Model is the input as a built-in's reference model reads it, in its family's exported
	// type (RBACInput for rbac): what an engine's package writes its request from when it adds
	// its version of the built-in (RegisterBuiltinVersion). Nil for a user's input.
	Model any
	// Requests holds, by engine name, the input as an engine is asked it whose version of the
	// workload is in Workload.Versions (see there); nil when no such engine has one.
	Requests map[string]EngineRequest
	// DecisionID is the id of the decision-log event a replayed input came from, and Offset
	// its time after the log's first event of the same path.
	DecisionID string
	Offset     time.Duration
}

// File is a policy or data file of a built-in workload.
type File struct {
	Name    string
	Content []byte
}

// Workload is a policy, its data and its inputs.
type Workload struct {
	Name        string
	Description string
	// Query is the full reference of the decision, such as data.authzbench.rbac.allow.
	Query string

	// Built-in workloads carry their files in memory ...
	Policies []File
	Data     []byte // one JSON object loaded at the root of data; nil for none

	// ... user-supplied ones point at files on disk, loaded exactly as OPA loads them.
	PolicyPaths []string
	DataPaths   []string

	Inputs []Input

	// UndefinedAs is the decision an undefined result stands for, for a policy without a
	// default; Unverified (the zero value) keeps undefined an error.
	UndefinedAs Expect

	// IgnoresInput says the policy decides without reading its input (nop): any request shape
	// stands for its inputs, so the ext_authz targets may send an Envoy CheckRequest made from
	// them instead of the input document itself.
	IgnoresInput bool

	// Relationships is a relationship family's world as relationships, with a check per input,
	// from which each relationship engine writes its version of the built-in; nil for a workload
	// that is no relationship family.
	Relationships *RelationshipWorld

	// Versions holds, by engine name (as the engine registers it), the workload's version for an
	// engine whose files this package does not read: what the user's files were, as the engine's
	// own package (its UserFiles reader) names them, or what its package wrote of a built-in
	// (RegisterBuiltinVersion), and what a run says of them. Each input's request for such an
	// engine is in Input.Requests under the same name.
	//
	// It is the seam through which an engine's own version enters without this package
	// knowing the engine.
	Versions map[string]*Version

	// Model is what a built-in's reference model decides over, in its family's exported type
	// (*RBACData for rbac and rbac-data-N): what an engine's package writes its version from
	// when it adds it (RegisterBuiltinVersion). Nil for a user's workload.
	Model any

	// Inexpressible says, by language ("OpenFGA"), why the workload has no version in it: what
	// its rules do that the language cannot (verify a JWT, add up a list), so a run that leaves
	// it out, or refuses it, says why.
	Inexpressible map[string]string
	// Replay is where a workload replayed from a decision log came from; nil for others.
	Replay *Replay

	// Scale is the point of a scaling series a generated workload is (rules-path-1000); nil
	// for any other workload.
	Scale *Scale
}

// Version is a workload's version for an engine this package does not read (see
// Workload.Versions).
type Version struct {
	// Files are the user's files, by the part each plays as the engine names it
	// ("validation"; "schema", "relationships", "checks").
	Files map[string]string
	// NotMeasured counts, per kind ("list_objects"), what the user's files ask that
	// authzbench does not measure, so a run says so.
	NotMeasured map[string]int
	// Differences says what the engine's version is handed ready-made that the others
	// compute (a JWT's verdict, a division), so a comparison says what it compares: the ‡ rows
	// of reports. Empty when it does the same work.
	Differences string
	// Warnings say what in the user's files was read in a way they may not have meant (a
	// template without links, a JSON value the engine's own tools would read otherwise).
	Warnings []string
	// Own is what the engine's package keeps of its version in its own type (files in memory,
	// paths it reads itself); only that package reads it.
	Own any
}

// EngineRequest is an input as one engine is asked it (see Input.Requests).
type EngineRequest struct {
	// Body is the request in the engine's own form, as its package writes and reads it.
	Body []byte
	// Source is the file and line it came from, for messages; empty for a built-in workload.
	Source string
}

// VersionFor is the workload's version for the engine called name (see Versions); nil when it
// has none there.
func (w *Workload) VersionFor(name string) *Version { return w.Versions[name] }

// NotMeasured counts, by kind, the queries of the user's files that authzbench does not
// measure; nil when there are none.
func (w *Workload) NotMeasured() map[string]int {
	var out map[string]int
	add := func(counts map[string]int) {
		for k, n := range counts {
			if n <= 0 {
				continue
			}
			if out == nil {
				out = map[string]int{}
			}
			out[k] += n
		}
	}
	for _, v := range w.Versions {
		add(v.NotMeasured)
	}
	return out
}

// CountsString writes counts by kind as "2 list_objects, 1 list_users", kinds sorted.
func CountsString(counts map[string]int) string {
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return strings.Join(parts, ", ")
}

// Warnings says, engine by engine in name order, what in the user's files was read in a way
// they may not have meant (Version.Warnings).
func (w *Workload) Warnings() []string {
	names := make([]string, 0, len(w.Versions))
	for name := range w.Versions {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		out = append(out, w.Versions[name].Warnings...)
	}
	return out
}

// HasRego reports whether the workload has a Rego policy for the OPA targets.
func (w *Workload) HasRego() bool { return len(w.Policies) > 0 || len(w.PolicyPaths) > 0 }

// DefaultInputs is how many inputs a built-in workload generates: enough that caches keyed on
// the input do not flatter the engine, few enough to prepare in well under a second.
const DefaultInputs = 1000

// DefaultSeed makes the built-in input sets identical on every run and machine.
const DefaultSeed = 20251114

// Spec describes a built-in workload.
type Spec struct {
	Name        string
	Description string
	// Build generates the workload: n inputs from the seed, each with its expected decision
	// computed by the workload's Go reference model.
	Build func(seed int64, n int) (*Workload, error)
}

var builtins = map[string]Spec{}

// register adds a built-in; called from init functions of the builtin_*.go files.
func register(s Spec) {
	if _, dup := builtins[s.Name]; dup {
		panic("workload: duplicate built-in " + s.Name)
	}
	builtins[s.Name] = s
}

// Names lists the built-in workloads in order of complexity where known, then by name.
func Names() []string {
	order := map[string]int{"nop": 0, "rbac": 1, "api": 2, "risk": 3,
		"docshare-5": 4, "docshare-10": 5, "docshare-20": 6, "docshare-50": 7}
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		oi, iok := order[names[i]]
		oj, jok := order[names[j]]
		switch {
		case iok && jok:
			return oi < oj
		case iok != jok:
			return iok
		}
		return names[i] < names[j]
	})
	return names
}

// Builtin returns the built-in workload called name with DefaultInputs inputs, every registered
// engine's version added.
func Builtin(name string) (*Workload, error) { return builtin(name, nil) }

// BuiltinFor is Builtin with only the versions of the engines named (as each registers itself:
// "opa", "cedar"), for a run, which builds what its targets decide with and nothing more. At
// rbac-data-1700000 the versions of engines an OPA run never asks (Cedar's entities,
// OpenFGA's tuples) were nearly half of what authzbench allocated before the first server started.
func BuiltinFor(name string, engines []string) (*Workload, error) {
	if engines == nil {
		engines = []string{} // none named is no version, not every one
	}
	return builtin(name, engines)
}

// builtin builds the built-in called name with the versions of engines; nil engines is every
// registered one.
func builtin(name string, engines []string) (*Workload, error) {
	s, ok := builtins[name]
	if !ok {
		f := familyOf(name)
		if f == nil {
			return nil, fmt.Errorf("unknown workload %q; known: %s", name, strings.Join(Names(), ", "))
		}
		w, err := f.Build(name, DefaultSeed, DefaultInputs)
		if err != nil {
			return nil, err
		}
		return w, addVersions(w, engines)
	}
	w, err := s.Build(DefaultSeed, DefaultInputs)
	if err != nil {
		return nil, fmt.Errorf("build workload %s: %w", name, err)
	}
	return w, addVersions(w, engines)
}

// Register adds a built-in workload that is one engine's alone (OPA's -opt rewrites, Rego
// only); called from the init function of the engine's package. Its Build returns the workload
// with the engine's version in it, as no family's model describes it. A second built-in of the
// same name is a programming error: it panics.
func Register(s Spec) { register(s) }

// Reference is the built-in workload called name built from seed with n inputs and no engine's
// version: its reference model and inputs alone, for an engine's built-in derived from another
// (Register).
func Reference(name string, seed int64, n int) (*Workload, error) {
	s, ok := builtins[name]
	if !ok {
		return nil, fmt.Errorf("unknown workload %q; known: %s", name, strings.Join(Names(), ", "))
	}
	return s.Build(seed, n)
}

// BuiltinWith returns the built-in workload called name built from seed with n inputs, every
// registered engine's version added: the same world and inputs as Builtin's for the default
// seed, other ones for another, for tests that want more than one draw.
func BuiltinWith(name string, seed int64, n int) (*Workload, error) {
	var w *Workload
	var err error
	if s, ok := builtins[name]; ok {
		w, err = s.Build(seed, n)
	} else if f := familyOf(name); f != nil {
		w, err = f.Build(name, seed, n)
	} else {
		return nil, fmt.Errorf("unknown workload %q; known: %s", name, strings.Join(Names(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("build workload %s: %w", name, err)
	}
	return w, addVersions(w, nil)
}

// BuiltinVersion is an engine's version of the built-in workloads, which its own package writes
// and registers (RegisterBuiltinVersion): this package builds a built-in's reference model and
// inputs, then asks every registered engine to add its version, so that a new engine's
// translations live in its package and nowhere else.
type BuiltinVersion struct {
	Engine string // the engine's name, as it registers it
	// Add adds the engine's version of w where it has one for w's family: w.Versions[Engine],
	// and each input's request in Input.Requests[Engine]. It leaves w alone where it has none;
	// an error is a fault of its own (a translation that fails), named with the workload.
	Add func(w *Workload) error
}

var builtinVersions []BuiltinVersion

// RegisterBuiltinVersion adds an engine's version of the built-ins; called from the init
// function of the engine's package. One without Engine or Add, or a second for the same
// engine, is a programming error: it panics.
func RegisterBuiltinVersion(v BuiltinVersion) {
	if v.Engine == "" || v.Add == nil {
		panic("workload: RegisterBuiltinVersion without an engine or Add")
	}
	for _, o := range builtinVersions {
		if o.Engine == v.Engine {
			panic("workload: built-in versions of " + v.Engine + " registered twice")
		}
	}
	builtinVersions = append(builtinVersions, v)
}

// addVersions asks each registered engine of engines (every one when nil) for its version of
// the built-in w.
func addVersions(w *Workload, engines []string) error {
	for _, v := range builtinVersions {
		if engines != nil && !slices.Contains(engines, v.Engine) {
			continue
		}
		if err := v.Add(w); err != nil {
			return fmt.Errorf("build %s's version of workload %s: %w", v.Engine, w.Name, err)
		}
	}
	return nil
}

// Files returns the policy and data paths OPA should load, writing in-memory files under dir
// first. Every mode (in-process, CLI, server) loads these same paths, so they all see the same
// policy and data.
func (w *Workload) Files(dir string) (policies, data []string, err error) {
	policies = append(policies, w.PolicyPaths...)
	data = append(data, w.DataPaths...)
	for _, f := range w.Policies {
		p := filepath.Join(dir, f.Name)
		if err := os.WriteFile(p, f.Content, 0o644); err != nil {
			return nil, nil, fmt.Errorf("write policy of workload %s: %w", w.Name, err)
		}
		policies = append(policies, p)
	}
	if len(w.Data) > 0 {
		p := filepath.Join(dir, "data.json")
		if err := os.WriteFile(p, w.Data, 0o644); err != nil {
			return nil, nil, fmt.Errorf("write data of workload %s: %w", w.Name, err)
		}
		data = append(data, p)
	}
	return policies, data, nil
}

// Counts returns how many inputs expect allow, deny, or nothing.
func (w *Workload) Counts() (allow, deny, unverified int) {
	for _, in := range w.Inputs {
		switch in.Expect {
		case ExpectAllow:
			allow++
		case ExpectDeny:
			deny++
		default:
			unverified++
		}
	}
	return
}

// mustJSON encodes a value built by a generator; failure is a programming error.
func mustJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// expectOf turns a reference model's answer into an Expect.
func expectOf(allow bool) Expect {
	if allow {
		return ExpectAllow
	}
	return ExpectDeny
}

// NamesWhere lists the built-in workloads, in Names' order, of which written says true (an
// engine's Written: those with a version in its language), each built with one input to ask.
func NamesWhere(written func(*Workload) bool) []string {
	var names []string
	for _, p := range probes() {
		if written(p.w) {
			names = append(names, p.name)
		}
	}
	return names
}

type probe struct {
	name string
	w    *Workload
}

// probes is every built-in that builds, in Names' order, built once with one input. The command
// asks NamesWhere once per engine while it writes its help, before any load: building every
// built-in each time took about a third of a run's start-up CPU, which an open-loop run's
// CPU per request counts. The workloads are shared, so the questions asked of them only read.
var probes = sync.OnceValue(func() []probe {
	var ps []probe
	for _, n := range Names() {
		if w, err := builtins[n].Build(DefaultSeed, 1); err == nil && addVersions(w, nil) == nil {
			ps = append(ps, probe{n, w})
		}
	}
	return ps
})
