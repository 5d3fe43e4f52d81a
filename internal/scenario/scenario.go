// Package scenario reads what a run should do — workloads × targets × load settings ×
// repetitions — from YAML or from flags, and validates all of it before any load starts,
// reporting every problem at once with its file and line, like a compiler.
package scenario

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/userwords"
	"github.com/authzbench/authzbench/internal/workload"
)

// Scenario is a validated plan.
type Scenario struct {
	Name        string
	Description string
	Source      string // file the scenario came from, "embedded:<name>", or "flags"
	Repeat      int
	Workloads   []WorkloadRef
	// Floor runs the nop workload through every target too, so each row can show what its
	// policy costs above the transport and the harness. floorAdded says the floor put the nop
	// workload first, not the scenario: turned off, the floor takes it away again.
	Floor      bool
	floorAdded bool
	// Pin is "auto" (pin generator and servers apart on a small machine: the default for
	// scenario files) or "none".
	Pin string
	// Order says whether a workload's targets take turns, one repetition each, or run their
	// repetitions back to back: interleaved unless the scenario or --order says otherwise.
	Order   Order
	Targets []TargetRef
	// Skips are the workload and target pairs that do not apply, left out of the run with a
	// note: a scenario may mix workloads written for one engine with targets of both.
	Skips []Skip
	// Testbed names the machine the scenario runs on, kept in the result (result.Env.Testbed);
	// "" when the scenario names none.
	Testbed string
	// Changes change the world during the run; zero when the scenario names none.
	Changes Changes
}

// Skip is a workload and target pair left out: the workload has no version in the language the
// target's engine reads.
type Skip struct {
	Workload, Target string
	Reason           string // "no Cedar version"
}

// Skipped says why the pair is left out of the run, or "" when it runs.
func (s *Scenario) Skipped(workload, target string) string {
	for _, k := range s.Skips {
		if k.Workload == workload && k.Target == target {
			return k.Reason
		}
	}
	return ""
}

// pairGaps splits the engine gaps of a scenario's workloads (nil where a workload failed to
// load) into pairs to skip and errors: a workload that no target can run, or a target that can
// run none of the workloads, is a mistake; anything else is a mix, skipped pair by pair.
func pairGaps(loaded []*workload.Workload, targets []TargetRef) (skips []Skip, unrunnable map[int][]gap) {
	distinct := map[string]bool{}
	for _, t := range targets {
		distinct[t.Name] = true
	}
	gapsOf := make([][]gap, len(loaded))
	runsSome := map[string]bool{} // targets that run at least one workload
	for i, wl := range loaded {
		if wl == nil {
			continue
		}
		gapsOf[i] = engineGaps(wl, targets)
		missing := map[string]bool{}
		for _, g := range gapsOf[i] {
			missing[g.target] = true
		}
		for t := range distinct {
			if !missing[t] {
				runsSome[t] = true
			}
		}
	}
	unrunnable = map[int][]gap{}
	for i, wl := range loaded {
		if wl == nil {
			continue
		}
		if len(gapsOf[i]) == len(distinct) {
			unrunnable[i] = gapsOf[i]
			continue
		}
		for _, g := range gapsOf[i] {
			if !runsSome[g.target] {
				unrunnable[i] = append(unrunnable[i], g)
				continue
			}
			skips = append(skips, Skip{Workload: wl.Name, Target: g.target, Reason: g.reason()})
		}
	}
	return skips, unrunnable
}

// WorkloadRef is a built-in workload by name, or a user's files.
type WorkloadRef struct {
	Name string
	User *workload.UserSpec // nil for a built-in
	// Built is the workload as validation built it, for the run to use rather than build it
	// again (and to compile its policy once, for every target); nil when not built yet.
	Built *workload.Workload
}

// TargetRef is a target with its load settings.
type TargetRef struct {
	Name string
	Load load.Spec
	// Timeout is the per-request timeout.
	Timeout time.Duration
	// Config is the target's own settings, from the scenario's `options:` and the flags; nil
	// for its kind's defaults.
	Config kinds.Config
}

// enginesOf is the engines that the targets named decide with (a kind's Engine: "opa",
// "cedar"), each once; a name no kind has adds none (it is refused where it is read).
func enginesOf(targets []string) []string {
	engines := []string{}
	for _, name := range targets {
		if k, err := kinds.LookupAny(name); err == nil && !slices.Contains(engines, k.Engine) {
			engines = append(engines, k.Engine)
		}
	}
	return engines
}

// Engines is the engines the scenario's targets decide with, each once.
func (s *Scenario) Engines() []string {
	names := make([]string, len(s.Targets))
	for i, t := range s.Targets {
		names[i] = t.Name
	}
	return enginesOf(names)
}

// Kind is the target's kind; nil for a name no kind has (a validated scenario has none).
func (t TargetRef) Kind() *kinds.Kind {
	k, _ := kinds.LookupAny(t.Name)
	return k
}

// Settings is the target's own settings: Config, or its kind's defaults.
func (t TargetRef) Settings() kinds.Config {
	if t.Config != nil {
		return t.Config
	}
	if k := t.Kind(); k != nil {
		return k.NewConfig()
	}
	return &kinds.NoConfig{}
}

// Placement is where the target's system under test runs with its settings.
func (t TargetRef) Placement() kinds.Placement {
	if k := t.Kind(); k != nil {
		return k.PlacementFor(t.Settings())
	}
	return ""
}

// Defaults for anything a scenario or the flags leave out.
const (
	DefaultWorkers  = 4
	DefaultDuration = 10 * time.Second
	DefaultWarmup   = 2 * time.Second
	DefaultTimeout  = 5 * time.Second
	// DefaultConnections bounds the requests in flight of an open-loop run.
	DefaultConnections = 64
)

// file is the YAML shape. Fields that need a line number in errors are wrapped in at.
type file struct {
	Name        string         `yaml:"name"`
	Description string         `yaml:"description"`
	Repeat      at[int]        `yaml:"repeat"`
	Floor       *bool          `yaml:"floor"`
	Pin         at[string]     `yaml:"pin"`
	Order       at[string]     `yaml:"order"`
	Load        loadSpec       `yaml:"load"`
	Workloads   []workloadSpec `yaml:"workloads"`
	Targets     []targetSpec   `yaml:"targets"`
	Testbed     at[string]     `yaml:"testbed"`
	// The world changing during the run: the flags of the same names (readChanges).
	Changes      at[string]        `yaml:"changes"`
	ChangeRate   at[string]        `yaml:"change_rate"`
	StaleAllowed at[time.Duration] `yaml:"stale_allowed"`
}

type loadSpec struct {
	Workers     *at[int]           `yaml:"workers"`
	Rate        *at[float64]       `yaml:"rate"`
	Connections *at[int]           `yaml:"connections"`
	Duration    *at[time.Duration] `yaml:"duration"`
	Warmup      *at[time.Duration] `yaml:"warmup"`
	Requests    *at[int64]         `yaml:"requests"`
	Timeout     *at[time.Duration] `yaml:"timeout"`
	// Coalesce: open loop, the sends due within this of one another go out together
	// (load.Spec.Coalesce).
	Coalesce *at[time.Duration] `yaml:"coalesce"`
	// Stages is an open-loop schedule of stages, as --stages writes them: one string
	// ("30s:0-2000,1m:2000") or a list of stages.
	Stages *at[stagesKey] `yaml:"stages"`
	// InputSkew is how each request's input is drawn, as --input-skew writes it (load.Draw).
	InputSkew *at[drawKey] `yaml:"input_skew"`
	// Sweeps: one step per value, each a run of its own with its own warm-up.
	WorkerSweep *at[[]int]     `yaml:"workers_sweep"`
	Rates       *at[[]float64] `yaml:"rates"`
	LoadPoints  *at[[]string]  `yaml:"load_points"`
}

// stagesKey is a load's stages key: "30s:0-2000,1m:2000", or the same stages as a list.
type stagesKey []load.Stage

func (k *stagesKey) UnmarshalYAML(n *yaml.Node) error {
	text := n.Value
	if n.Kind == yaml.SequenceNode {
		var parts []string
		if err := n.Decode(&parts); err != nil {
			return fmt.Errorf("line %d: stages: want DURATION:RATE or DURATION:FROM-TO strings, such as 30s:0-2000", n.Line)
		}
		text = strings.Join(parts, ",")
	} else if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: stages: want \"30s:0-2000,1m:2000\" or a list of such stages", n.Line)
	}
	stages, err := load.ParseStages(text)
	if err != nil {
		return fmt.Errorf("line %d: stages: %v", n.Line, err)
	}
	*k = stages
	return nil
}

// drawKey is a load's input_skew key: cycle, uniform, zipf:S or hot:K/H.
type drawKey load.Draw

func (k *drawKey) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: input_skew: want cycle, uniform, zipf:S or hot:K/H", n.Line)
	}
	d, err := load.ParseDraw(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: input_skew %v", n.Line, err)
	}
	*k = drawKey(d)
	return nil
}

// workloadSpec is either a name or {name, policy, data, inputs, query} and/or the Cedar side
// {cedar_policies, entities, schema, requests}.
type workloadSpec struct {
	Line          int
	Name          string   `yaml:"name"`
	Policy        []string `yaml:"policy"`
	Data          []string `yaml:"data"`
	Inputs        string   `yaml:"inputs"`
	Query         string   `yaml:"query"`
	CedarPolicies []string `yaml:"cedar_policies"`
	Entities      string   `yaml:"entities"`
	Schema        string   `yaml:"schema"`
	Requests      string   `yaml:"requests"`
	// How to read the user's own policy (--v0-compatible, --undefined-as).
	V0Compatible  bool   `yaml:"v0_compatible"`
	UndefinedAs   string `yaml:"undefined_as"`
	TemplateLinks string `yaml:"template_links"`
	// An OPA decision log replayed (--decision-log and its flags): one workload per decision
	// path, each event's input asked of the policy, its logged result expected.
	DecisionLog   string             `yaml:"decision_log"`
	DecisionField string             `yaml:"decision_field"`
	ExpectChanges string             `yaml:"expect_changes"`
	Speed         *at[float64]       `yaml:"speed"`
	MaxGap        *at[time.Duration] `yaml:"max_gap"`
}

// replaySettings reports whether the entry gives any setting of a decision-log replay.
func (w workloadSpec) replaySettings() bool {
	return w.DecisionLog != "" || w.DecisionField != "" || w.ExpectChanges != "" || w.Speed != nil || w.MaxGap != nil
}

// paceLine is the line of the entry's speed (or max_gap), where a problem with its pace is
// blamed; the entry's own line when it gives neither.
func (w workloadSpec) paceLine() int {
	switch {
	case w.Speed != nil:
		return w.Speed.Line
	case w.MaxGap != nil:
		return w.MaxGap.Line
	}
	return w.Line
}

func (w *workloadSpec) UnmarshalYAML(n *yaml.Node) error {
	w.Line = n.Line
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&w.Name)
	}
	type plain workloadSpec
	var p plain
	if err := decodeStrict(n, &p); err != nil {
		return err
	}
	*w = workloadSpec(p)
	w.Line = n.Line
	return nil
}

// targetSpec is either a name or {target, load, options}.
type targetSpec struct {
	Line   int
	Target string   `yaml:"target"`
	Load   loadSpec `yaml:"load"`
	// Options are the target kind's own settings, decoded once the kind is known (options).
	Options yaml.Node `yaml:"options"`
}

func (t *targetSpec) UnmarshalYAML(n *yaml.Node) error {
	t.Line = n.Line
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&t.Target)
	}
	type plain targetSpec
	var p plain
	if err := decodeStrict(n, &p); err != nil {
		return err
	}
	*t = targetSpec(p)
	t.Line = n.Line
	return nil
}

// at is a value with the line it was written on.
type at[T any] struct {
	V    T
	Line int
	Set  bool
}

func (a *at[T]) UnmarshalYAML(n *yaml.Node) error {
	a.Line, a.Set = n.Line, true
	return n.Decode(&a.V)
}

// decodeStrict decodes a mapping node, rejecting unknown keys (a typo must not be ignored).
func decodeStrict(n *yaml.Node, v any) error {
	if n.Kind == yaml.MappingNode {
		known := knownKeys(v)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if !known[k.Value] {
				return fmt.Errorf("line %d: unknown field %q (known: %s)", k.Line, k.Value, strings.Join(sortedKeys(known), ", "))
			}
		}
	}
	return n.Decode(v)
}

//go:embed embedded/*.yaml
var embedded embed.FS

// Embedded returns a scenario shipped inside authzbench, such as "quickstart".
func Embedded(name string) (*Scenario, error) {
	b, err := embedded.ReadFile("embedded/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no embedded scenario %q", name)
	}
	return Parse("embedded:"+name, b, "")
}

// Load reads and validates a scenario file. Relative paths in it are taken from its directory.
func Load(path string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario %w", userwords.Unreadable(path, err))
	}
	return Parse(path, b, filepath.Dir(path))
}

// Parse validates a scenario's YAML; source names it in errors.
func Parse(source string, b []byte, baseDir string) (*Scenario, error) {
	var f file
	var root yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty scenario", source)
		}
		return nil, errors.New(sourceLine(source, strings.TrimPrefix(err.Error(), "yaml: ")))
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if err := decodeStrict(doc, &f); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return nil, yamlWords(source, &root, err)
		}
		return nil, errors.New(sourceLine(source, strings.TrimPrefix(err.Error(), "yaml: ")))
	}
	var errs []error
	said := map[string]bool{} // a load's problem is said once, not once for each of its steps
	bad := func(line int, format string, args ...any) {
		msg := fmt.Sprintf("%s:%d: %s", source, line, fmt.Sprintf(format, args...))
		if !said[msg] {
			said[msg] = true
			errs = append(errs, errors.New(msg))
		}
	}
	s := &Scenario{Name: f.Name, Description: f.Description, Source: source, Repeat: 1}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(source), filepath.Ext(source))
	}
	s.Pin = "auto"
	if f.Pin.Set {
		if f.Pin.V != "auto" && f.Pin.V != "none" {
			bad(f.Pin.Line, "pin %q: want auto or none", f.Pin.V)
		}
		s.Pin = f.Pin.V
	}
	if f.Order.Set {
		o, err := ParseOrder(f.Order.V)
		if err != nil {
			bad(f.Order.Line, "%v", err)
		}
		s.Order = o
	}
	if f.Repeat.Set {
		if f.Repeat.V < 1 {
			bad(f.Repeat.Line, "repeat must be at least 1, got %d", f.Repeat.V)
		}
		s.Repeat = f.Repeat.V
	}
	if f.Testbed.Set {
		if err := result.CheckTestbed(f.Testbed.V); err != nil {
			bad(f.Testbed.Line, "testbed: %v", err)
		}
		s.Testbed = f.Testbed.V
	}
	s.Changes = readChanges(&f, baseDir, bad)
	if len(f.Workloads) == 0 {
		errs = append(errs, fmt.Errorf("%s: no workloads: list at least one (known: %s)", source, strings.Join(workload.Names(), ", ")))
	}
	// Two workloads of one name read as one everywhere a run is named: in the table, in
	// compare (which pairs the first only) and in a history (one series, two policies mixed).
	// A built-in listed twice is one workload measured twice (the floor before and after a
	// sweep), and stays allowed.
	type named struct {
		line    int
		builtin bool
	}
	namedAt := map[string]named{}
	// The workloads built, for the engine check, and the entry each came from: a decision log
	// of several paths is a workload per path.
	var loaded []*workload.Workload
	var entryOf []workloadSpec
	// A built-in is built with the versions of the engines the targets decide with, and no
	// other's: a big one's other versions would cost memory and minutes for nothing.
	var targetNames []string
	for _, t := range f.Targets {
		targetNames = append(targetNames, t.Target)
	}
	engines := enginesOf(targetNames)
	for _, w := range f.Workloads {
		refs, err := workloadRefs(w, baseDir, engines)
		if err != nil {
			line := w.Line
			var se *workload.SettingError
			if errors.As(err, &se) && (se.Setting == "speed" || se.Setting == "max_gap") {
				line = w.paceLine()
			}
			bad(line, "%v", err)
			continue
		}
		for _, ref := range refs {
			if first, ok := namedAt[ref.Name]; ok && !(first.builtin && ref.User == nil) {
				bad(w.Line, "workload %q is named twice (line %d too), as two different workloads: every table, comparison and history would read the two as one; give each its own name", ref.Name, first.line)
				continue
			} else if !ok {
				namedAt[ref.Name] = named{w.Line, ref.User == nil}
			}
			loaded, entryOf = append(loaded, ref.Built), append(entryOf, w)
			s.Workloads = append(s.Workloads, ref)
		}
	}
	if len(f.Targets) == 0 {
		errs = append(errs, fmt.Errorf("%s: no targets: list at least one (known: %s)", source, strings.Join(kinds.Names(), ", ")))
	}
	base := resolveLoad(DefaultLoad(), f.Load)
	// requests: 0 would read as "no count given" and run for the duration instead; a count given
	// is one or more (a negative one is refused with the rest of the load's settings).
	zeroRequests := func(l loadSpec) {
		if l.Requests != nil && l.Requests.V == 0 {
			bad(l.Requests.Line, "%v", userwords.AtLeastOne("requests", 0))
		}
	}
	zeroRequests(f.Load)
	for _, t := range f.Targets {
		kind, err := kinds.Lookup(t.Target)
		if err != nil {
			bad(t.Line, "%v", err)
			continue
		}
		zeroRequests(t.Load)
		ref := resolveLoad(base, t.Load)
		ref.Name = t.Target
		if t.Options.Kind != 0 {
			cfg, err := decodeOptions(source, kind, &t.Options)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			ref.Config = cfg
		}
		sweep, line, err := sweepOf(t.Load, f.Load)
		if err != nil {
			bad(line, "%v", err)
			continue
		}
		if sweep.kinds() > 0 {
			for i, wl := range loaded {
				if wl.Replay != nil && wl.Replay.Speed != 0 {
					bad(entryOf[i].paceLine(), "workload %s replays its log at the recorded pace (speed), and target %s sweeps its load (line %d): a paced replay has one schedule, the log's; give the sweep to the targets of another scenario",
						wl.Name, t.Target, line)
				}
			}
		}
		for _, step := range sweep.expand(ref) {
			for _, e := range validateLoad(step, t.Load, f.Load) {
				bad(e.line, "%s", e.msg)
			}
			s.Targets = append(s.Targets, step)
		}
	}
	skips, unrunnable := pairGaps(loaded, s.Targets)
	s.Skips = skips
	for i, w := range entryOf {
		for _, g := range unrunnable[i] {
			if g.refused != "" {
				bad(w.Line, "target %s cannot run workload %s: %s", g.target, loaded[i].Name, g.refused)
				continue
			}
			bad(w.Line, "workload %s has no %s version%s, and target %s reads %s; add %s", loaded[i].Name, g.language, g.because(), g.target, g.language, g.howToGive(false))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s.SetFloor(f.Floor == nil || *f.Floor) // on unless the scenario turns it off
	return s, nil
}

// SetFloor turns the floor on or off: on, the nop workload runs first if it is not listed; off,
// a nop workload the floor added is taken away (one the scenario lists stays).
func (s *Scenario) SetFloor(on bool) {
	s.Floor = on
	if !on {
		if s.floorAdded {
			s.Workloads, s.floorAdded = s.Workloads[1:], false
		}
		return
	}
	for _, w := range s.Workloads {
		if w.User == nil && w.Name == "nop" {
			return
		}
	}
	s.Workloads = append([]WorkloadRef{{Name: "nop"}}, s.Workloads...)
	s.floorAdded = true
}

// workloadRefs resolves a workload entry, loading it to check it: one workload, or one per
// decision path of a decision log (in the entry, or in an inputs file that is one). Each ref
// carries the workload built.
func workloadRefs(w workloadSpec, baseDir string, engines []string) ([]WorkloadRef, error) {
	if len(w.Policy) == 0 && w.Inputs == "" && w.Query == "" && len(w.Data) == 0 && !w.replaySettings() &&
		len(w.CedarPolicies) == 0 && w.Entities == "" && w.Schema == "" && w.Requests == "" && w.TemplateLinks == "" {
		if w.Name == "" {
			return nil, errors.New("workload without a name")
		}
		if w.V0Compatible || w.UndefinedAs != "" {
			return nil, fmt.Errorf("workload %s: v0_compatible and undefined_as apply to your own policy (policy and inputs); the built-in workloads are v1 Rego with a default for every decision", w.Name)
		}
		wl, err := workload.BuiltinFor(w.Name, engines)
		if err != nil {
			return nil, err
		}
		return []WorkloadRef{{Name: w.Name, Built: wl}}, nil
	}
	rel := func(p string) string {
		if filepath.IsAbs(p) || baseDir == "" {
			return p
		}
		return filepath.Join(baseDir, p)
	}
	relOpt := func(p string) string {
		if p == "" {
			return ""
		}
		return rel(p)
	}
	u := &workload.UserSpec{Name: w.Name, Inputs: relOpt(w.Inputs), Query: w.Query,
		Entities: relOpt(w.Entities), Schema: relOpt(w.Schema), Requests: relOpt(w.Requests),
		V0Compatible: w.V0Compatible, UndefinedAs: w.UndefinedAs, TemplateLinks: relOpt(w.TemplateLinks),
		DecisionLog: relOpt(w.DecisionLog), DecisionField: w.DecisionField, ExpectChanges: relOpt(w.ExpectChanges)}
	if w.Speed != nil {
		u.Speed = w.Speed.V
		if u.Speed == 0 { // written as 0: not the same as no speed at all
			return nil, workload.NewSettingError("speed", func(n func(string) string) string {
				return n("speed") + " must be a positive number, got 0"
			})
		}
	}
	if w.MaxGap != nil {
		u.MaxGap = w.MaxGap.V
	}
	for _, p := range w.Policy {
		u.Policies = append(u.Policies, rel(p))
	}
	for _, p := range w.CedarPolicies {
		u.CedarPolicies = append(u.CedarPolicies, rel(p))
	}
	for _, p := range w.Data {
		u.Data = append(u.Data, rel(p))
	}
	detected, err := u.DetectDecisionLog()
	if err != nil {
		return nil, err
	}
	if detected.DecisionLog != "" {
		return replayWorkloads(detected)
	}
	wl, err := workload.FromFiles(detected) // read as inputs already: not read again for signs of a log
	if err != nil {
		return nil, err
	}
	// Named after its files when the entry gives no name, so the name the result shows is
	// fixed here and not derived again.
	u.Name = wl.Name
	return []WorkloadRef{{Name: u.Name, User: u, Built: wl}}, nil
}

// gap is a target that cannot run the workload: its engine reads a language the workload is
// not written in (language set), or its kind refuses the workload's requests (refused set, from
// Kind.Takes: the ext_authz kinds send only Envoy CheckRequests).
type gap struct{ target, engine, language, refused, why string }

// reason is the gap in the words of a skipped pair.
func (g gap) reason() string {
	if g.refused != "" {
		return g.refused
	}
	return "the workload has no " + g.language + " version" + g.because()
}

// because is why the workload has no version in the gap's language, when it says: ": its rules
// verify a JWT ...".
func (g gap) because() string {
	if g.why == "" {
		return ""
	}
	return ": " + g.why
}

// engineGaps lists the targets whose engine the workload is not written for, so that a
// Rego-only workload asked of a cedar target fails before anything starts, from a scenario file
// or from flags, rather than as an empty row.
//
// A target measuring a running server (its url) needs no policy, only requests in its engine's
// language.
func engineGaps(w *workload.Workload, targets []TargetRef) []gap {
	var gaps []gap
	seen := map[string]bool{} // a sweep expands one target into several
	for _, t := range targets {
		k := t.Kind()
		if k == nil {
			continue
		}
		if runningServer(t) && engine.RequestsFor(k.Engine, w) {
			continue
		}
		if seen[t.Name] {
			continue
		}
		if lang, ok := engine.WrittenFor(k.Engine, w); !ok {
			seen[t.Name] = true
			gaps = append(gaps, gap{target: t.Name, engine: k.Engine, language: lang, why: engine.WhyNotFor(k.Engine, w)})
		} else if why := k.Refuses(w); why != "" {
			seen[t.Name] = true
			gaps = append(gaps, gap{target: t.Name, refused: why})
		}
	}
	return gaps
}

// howToGive says how to give the workload's version in the gap's language: on the command line
// (flags) or in a scenario file. An engine of the registry that says it itself
// (engine.FilesHinted) is asked; flagsFor and keysFor hold the words for the others.
func (g gap) howToGive(flags bool) string {
	if h, ok := engine.For(g.engine).(engine.FilesHinted); ok {
		onCommandLine, inScenario := h.FilesHint()
		if flags {
			return onCommandLine
		}
		return inScenario
	}
	if flags {
		return flagsFor[g.language]
	}
	return keysFor[g.language]
}

// flagsFor and keysFor say how to give a workload's version in a language, on the command line
// and in a scenario file.
var (
	flagsFor = map[string]string{
		"Rego":    "--policy and --inputs (with --data if it uses them)",
		"Cedar":   "--cedar-policies and --cedar-requests (with --entities and --schema if it uses them)",
		"OpenFGA": "--policy store.fga.yaml, or --policy model.fga with --inputs checks.jsonl (and --data tuples.yaml)",
	}
	keysFor = map[string]string{
		"Rego":    "policy and inputs (with data if it uses them)",
		"Cedar":   "cedar_policies and requests (with entities and schema if it uses them)",
		"OpenFGA": "policy: a store file (store.fga.yaml), or a model (model.fga) with inputs (checks.jsonl) and data (tuples)",
	}
)

// DefaultLoad is the load of a target nobody configured.
func DefaultLoad() TargetRef {
	return TargetRef{
		Load: load.Spec{Workers: DefaultWorkers, Connections: DefaultConnections,
			Duration: DefaultDuration, Warmup: DefaultWarmup},
		Timeout: DefaultTimeout,
	}
}

func resolveLoad(base TargetRef, l loadSpec) TargetRef {
	base.Load = OneModel(base.Load, l.Workers != nil || l.WorkerSweep != nil, l.Rate != nil || l.Rates != nil || l.LoadPoints != nil, l.Stages != nil)
	if l.Stages != nil {
		base.Load.Stages = l.Stages.V
		if l.Duration == nil { // the stages are the measured window
			base.Load.Duration = load.Total(l.Stages.V)
		}
	}
	if l.Workers != nil {
		base.Load.Workers = l.Workers.V
	}
	if l.Rate != nil {
		base.Load.Rate = l.Rate.V
	}
	if l.Connections != nil {
		base.Load.Connections = l.Connections.V
	}
	if l.Duration != nil {
		base.Load.Duration = l.Duration.V
	}
	if l.Warmup != nil {
		base.Load.Warmup = l.Warmup.V
	}
	if l.Requests != nil {
		base.Load.Requests = l.Requests.V
	}
	if l.Timeout != nil {
		base.Timeout = l.Timeout.V
	}
	if l.Coalesce != nil {
		base.Load.Coalesce = l.Coalesce.V
	}
	if l.InputSkew != nil {
		base.Load.Draw = load.Draw(l.InputSkew.V)
	}
	return base
}

type lineError struct {
	line int
	msg  string
}

// OneModel makes way for the load model one place of settings (the scenario's load, a target's,
// the command line) names: a place that names the closed loop (workers) replaces the open loop
// a less specific place set, and one that names an open-loop schedule (a rate, or stages) the
// closed loop and the other schedule. A place that names two leaves them, for load.Spec's one
// rule to refuse.
func OneModel(l load.Spec, closed, rate, stages bool) load.Spec {
	if closed && !rate && !stages {
		l.Rate, l.Stages, l.Coalesce = 0, nil, 0
	}
	if !closed && (rate || stages) {
		l.Workers = 0
	}
	if rate && !stages {
		l.Stages = nil
	}
	if stages && !rate {
		l.Rate = 0
	}
	return l
}

// loadKeyLines are the lines of a load's keys, by the setting names load.Problem uses.
func loadKeyLines(s loadSpec) map[string]int {
	return map[string]int{
		"workers": max(lineOfAt(s.Workers), lineOfAt(s.WorkerSweep)), "rate": max(lineOfAt(s.Rate), lineOfAt(s.Rates), lineOfAt(s.LoadPoints)),
		"connections": max(lineOfAt(s.Connections), lineOfAt(s.LoadPoints)), "duration": lineOfAt(s.Duration),
		"warmup": lineOfAt(s.Warmup), "requests": lineOfAt(s.Requests), "timeout": lineOfAt(s.Timeout), "stages": lineOfAt(s.Stages),
		"coalesce": lineOfAt(s.Coalesce), "input_skew": lineOfAt(s.InputSkew),
	}
}

// validateLoad checks the resolved load with load.Spec's own rules, blaming the line that set
// each bad value: the target's own load first, else the scenario's.
func validateLoad(t TargetRef, specs ...loadSpec) []lineError {
	lineOf := func(setting string) int {
		for _, s := range specs {
			if l := loadKeyLines(s)[setting]; l > 0 {
				return l
			}
		}
		return 0
	}
	var out []lineError
	for _, p := range t.Load.Problems() {
		msg := p.Error()
		if p.With != "" {
			if l := lineOf(p.With); l > 0 && l != lineOf(p.Setting) {
				msg = fmt.Sprintf("%s and %s (line %d) %s", p.Setting, p.With, l, p.Msg)
			}
		}
		out = append(out, lineError{lineOf(p.Setting), msg})
	}
	if t.Timeout <= 0 {
		out = append(out, lineError{lineOf("timeout"), fmt.Sprintf("timeout must be positive, got %s", t.Timeout)})
	}
	return out
}

func lineOfAt[T any](a *at[T]) int {
	if a == nil {
		return 0
	}
	return a.Line
}

func (l *loadSpec) UnmarshalYAML(n *yaml.Node) error {
	type plain loadSpec
	var p plain
	if err := decodeStrict(n, &p); err != nil {
		return err
	}
	*l = loadSpec(p)
	return nil
}

var yamlLine = regexp.MustCompile(`^(?:unmarshal errors:\s*)?line (\d+): `)

// parserProblems are the syntax errors yaml.v3's parser (not its scanner) reports. For them it
// gives the line of a 0-based mark without adding 1, so the line it names is one too low; the
// scanner's are right.
var parserProblems = []string{
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected key",
	"did not find expected '-' indicator",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found undefined tag handle",
	"found duplicate %YAML directive",
	"found duplicate %TAG directive",
	"found incompatible YAML document",
}

// sourceLine turns a YAML error's "line N: ..." into "source:N: ...", the form of every other
// scenario error.
func sourceLine(source, msg string) string {
	if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
		line, problem := msg[m[2]:m[3]], msg[m[1]:]
		if slices.Contains(parserProblems, problem) {
			n, _ := strconv.Atoi(line)
			line = strconv.Itoa(n + 1)
		}
		return source + ":" + line + ": " + problem
	}
	return source + ": " + msg
}
