package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/userwords"
)

// UserSpec names the files of a user-supplied workload.
type UserSpec struct {
	Name     string
	Policies []string // Rego files or directories (and OPA bundles), or another engine's files (UserFiles)
	Data     []string // JSON or YAML data files
	Inputs   string   // JSON Lines: {"input": {...}, "expect": true|false}
	Query    string   // e.g. data.httpapi.authz.allow; derived from the package when empty
	// V0Compatible reads the Rego as OPA v0 syntax, as OPA's --v0-compatible does.
	V0Compatible bool
	// UndefinedAs is "deny" or "allow" for a policy without a default, whose decision is
	// undefined when no rule matches; empty keeps undefined an error.
	UndefinedAs string
	// Policies may be empty for targets that bring their own policy (the http target); the
	// OPA targets then refuse the workload.

	// The Cedar version: policies, optional entities and schema, and requests, JSON Lines of
	// {"principal": ..., "action": ..., "resource": ..., "context": {...}, "expect": true|false}.
	// With both Inputs and Requests, line n of one is the same decision as line n of the other,
	// so both engines can be compared on the user's own policies.
	CedarPolicies []string
	Entities      string
	Schema        string
	Requests      string
	TemplateLinks string // links for the Cedar policies' templates, as the Cedar CLI's --template-linked

	// DecisionLog is an OPA decision log replayed instead of Inputs (FromDecisionLog): each
	// event's input, its logged result the expected decision. DecisionField is the member of
	// object results compared (allowed by default); ExpectChanges the reviewed decision ids
	// whose decisions are meant to flip.
	DecisionLog   string
	DecisionField string
	ExpectChanges string
	// DecisionPath picks the workload of one logged path, for FromFiles; empty takes the log's
	// only path.
	DecisionPath string
	// Speed, when positive, replays the log's events at their recorded pace divided by it, in
	// place of the targets' load; MaxGap then shortens every recorded pause longer than it.
	Speed  float64
	MaxGap time.Duration
	// LogFromInputs says why the file given as Inputs was taken for the decision log it is
	// (DetectDecisionLog); empty when the log was named as one.
	LogFromInputs string
	// inputsAreInputs records that DetectDecisionLog read Inputs and found no log, so that an
	// inputs file is read once more to build the workload, not twice.
	inputsAreInputs bool
}

// HasCedar reports whether the spec names any Cedar file.
func (s UserSpec) HasCedar() bool {
	return len(s.CedarPolicies) > 0 || s.Entities != "" || s.Schema != "" || s.Requests != "" || s.TemplateLinks != ""
}

// HasRego reports whether the spec names any Rego-side file.
func (s UserSpec) HasRego() bool {
	return len(s.Policies) > 0 || len(s.Data) > 0 || s.Inputs != "" || s.Query != "" || s.DecisionLog != ""
}

// SettingError is a setting of a user workload that is missing or cannot be used as given.
// Its message names each setting as a scenario file's workload entry does (inputs, query,
// undefined_as); a command line, where the settings are flags, says the same with Named.
type SettingError struct {
	// Setting is the setting at fault, named as in a scenario file.
	Setting string
	say     func(name func(setting string) string) string
}

// NewSettingError is a problem with setting, worded by say, which names every setting through
// the name it is given (the setting itself, or the flag that gave it).
func NewSettingError(setting string, say func(name func(setting string) string) string) *SettingError {
	return &SettingError{Setting: setting, say: say}
}

func (e *SettingError) Error() string { return e.say(func(setting string) string { return setting }) }

// Named is the message with every setting it names called name(setting), such as the flag that
// gave it.
func (e *SettingError) Named(name func(setting string) string) string { return e.say(name) }

// Check reports the first setting of the spec that is missing or cannot be used as given,
// before any file is read. FromFiles checks the same first.
func (s UserSpec) Check() error {
	if s.DecisionLog != "" {
		return s.checkReplay()
	}
	if s.Inputs == "" { // an inputs file may be a decision log, which DetectDecisionLog tells
		if err := s.replaySettingWithoutLog(""); err != nil {
			return err
		}
	}
	if u := s.claimedBy(); u != nil {
		if u.Check == nil {
			return nil
		}
		return u.Check(s)
	}
	if s.Inputs == "" {
		return &SettingError{Setting: "inputs", say: func(n func(string) string) string {
			return fmt.Sprintf(`a user workload needs %s FILE.jsonl (one {"input": ..., "expect": true|false} per line), or %s FILE.jsonl for Cedar`,
				n("inputs"), n("requests"))
		}}
	}
	if _, err := ParseUndefinedAs(s.UndefinedAs); err != nil {
		return err
	}
	if s.Query != "" && !strings.HasPrefix(s.Query, "data.") {
		return &SettingError{Setting: "query", say: func(n func(string) string) string {
			return fmt.Sprintf("%s %q: want a reference under data, such as data.authz.allow", n("query"), s.Query)
		}}
	}
	for _, u := range s.besideRego() {
		if u.Check != nil {
			if err := u.Check(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// replaySettingWithoutLog refuses a setting of a replay given without a decision log to
// replay; inputs, when not empty, is the inputs file that turned out not to be one.
func (s UserSpec) replaySettingWithoutLog(inputs string) error {
	for _, r := range []struct {
		setting string
		given   bool
	}{{"decision_field", s.DecisionField != ""}, {"expect_changes", s.ExpectChanges != ""}, {"speed", s.Speed != 0}, {"max_gap", s.MaxGap != 0}} {
		if !r.given {
			continue
		}
		return &SettingError{Setting: r.setting, say: func(n func(string) string) string {
			if inputs != "" {
				return fmt.Sprintf("%s applies to a replayed decision log, and %s %s is inputs, not a log (no line has a \"decision_id\"): give %s FILE",
					n(r.setting), n("inputs"), inputs, n("decision_log"))
			}
			return fmt.Sprintf("%s applies to a replayed decision log: give %s FILE with it", n(r.setting), n("decision_log"))
		}}
	}
	return nil
}

// checkReplay checks the settings of a decision-log replay: its queries are the logged paths
// and its inputs the logged ones, so neither is given, and it is Rego alone.
func (s UserSpec) checkReplay() error {
	for _, clash := range []struct {
		setting string
		given   bool
	}{{"inputs", s.Inputs != ""}, {"query", s.Query != ""}, {"cedar_policies", len(s.CedarPolicies) > 0}, {"requests", s.Requests != ""}} {
		if clash.given {
			return &SettingError{Setting: clash.setting, say: func(n func(string) string) string {
				log := n("decision_log")
				if s.LogFromInputs != "" { // named by the setting the user gave it with
					log = n("inputs") + " " + s.DecisionLog + " (a decision log)"
				}
				return fmt.Sprintf("%s and %s: a replay asks each logged event's path of its logged input; drop %s", n(clash.setting), log, n(clash.setting))
			}}
		}
	}
	if strings.ContainsAny(s.DecisionField, ". /") {
		return &SettingError{Setting: "decision_field", say: func(n func(string) string) string {
			return fmt.Sprintf("%s %q: want the name of one member of the logged result, such as allowed", n("decision_field"), s.DecisionField)
		}}
	}
	if s.MaxGap != 0 && s.Speed == 0 {
		return &SettingError{Setting: "max_gap", say: func(n func(string) string) string {
			return fmt.Sprintf("%s applies to a paced replay: give %s with it", n("max_gap"), n("speed"))
		}}
	}
	_, err := ParseUndefinedAs(s.UndefinedAs)
	return err
}

// FromFiles builds a workload from the user's policy, data and inputs files. An inputs file
// that is an OPA decision log is replayed as one (DetectDecisionLog).
func FromFiles(s UserSpec) (*Workload, error) {
	s, err := s.DetectDecisionLog()
	if err != nil {
		return nil, err
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	if u := s.claimedBy(); u != nil {
		return u.Read(s)
	}
	if err := s.CheckFilesExist(); err != nil {
		return nil, err
	}
	if s.DecisionLog != "" {
		return oneReplay(s)
	}
	undefinedAs, err := ParseUndefinedAs(s.UndefinedAs)
	if err != nil {
		return nil, err
	}
	query := s.Query
	if query == "" && len(s.Policies) > 0 {
		if policyFiles == nil {
			return nil, fmt.Errorf("%s: a policy to run with --inputs, and this authzbench has no engine linked in that reads it", s.Policies[0])
		}
		if query, err = policyFiles.Query(s); err != nil {
			return nil, err
		}
	}
	inputs, err := ReadInputs(s.Inputs)
	if err != nil {
		return nil, err
	}
	w := &Workload{
		Name:        UserName(s),
		Description: "user-supplied: " + strings.Join(append(append([]string{}, s.Policies...), s.Inputs), ", "),
		Query:       query,
		PolicyPaths: s.Policies,
		DataPaths:   s.Data,
		Inputs:      inputs,
		UndefinedAs: undefinedAs,
	}
	if policyFiles != nil {
		if err := policyFiles.Add(s, w); err != nil {
			return nil, err
		}
	}
	for _, u := range s.besideRego() {
		if err := u.Beside(s, w); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// oneReplay is the workload of s.DecisionPath in the user's decision log, or of its only path.
func oneReplay(s UserSpec) (*Workload, error) {
	ws, err := FromDecisionLog(s)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, w := range ws {
		if w.Replay.Path == s.DecisionPath || (s.DecisionPath == "" && len(ws) == 1) {
			if s.Name != "" {
				w.Name = s.Name // as the log's workloads were named when first built
			}
			return w, nil
		}
		paths = append(paths, w.Replay.Path)
	}
	if s.DecisionPath == "" {
		// Only authzbench run (and a scenario) makes a workload of each path.
		return nil, fmt.Errorf("%s has decisions of %d paths (%s), a workload each, and one workload is wanted here; authzbench run replays every path",
			s.DecisionLog, len(paths), strings.Join(paths, ", "))
	}
	return nil, fmt.Errorf("%s has decisions of paths %s; none is %q", s.DecisionLog, strings.Join(paths, ", "), s.DecisionPath)
}

// CheckFilesExist refuses every file of the spec that cannot be read, naming the setting that
// gave it (--policy missing.rego: no such file), all at once.
func (s UserSpec) CheckFilesExist() error {
	var errs []error
	for _, f := range []struct {
		setting string
		paths   []string
	}{
		{"policy", s.Policies}, {"data", s.Data}, {"inputs", []string{s.Inputs}},
		{"decision_log", []string{s.DecisionLog}}, {"expect_changes", []string{s.ExpectChanges}},
		{"cedar_policies", s.CedarPolicies}, {"entities", []string{s.Entities}}, {"schema", []string{s.Schema}},
		{"requests", []string{s.Requests}}, {"template_links", []string{s.TemplateLinks}},
	} {
		for _, p := range f.paths {
			if p == "" {
				continue
			}
			if _, err := os.Stat(p); err != nil {
				why := userwords.Unreadable(p, err)
				errs = append(errs, &SettingError{Setting: f.setting, say: func(n func(string) string) string {
					return fmt.Sprintf("%s %v", n(f.setting), why)
				}})
			}
		}
	}
	if len(errs) == 0 && policyFiles != nil {
		errs = policyFiles.Check(s)
	}
	return errors.Join(errs...)
}

// ParseUndefinedAs reads the undefined_as setting: "deny" or "allow", or empty for none.
func ParseUndefinedAs(v string) (Expect, error) {
	switch v {
	case "":
		return Unverified, nil
	case "deny":
		return ExpectDeny, nil
	case "allow":
		return ExpectAllow, nil
	}
	return Unverified, &SettingError{Setting: "undefined_as", say: func(n func(string) string) string {
		return fmt.Sprintf("%s %q: want deny or allow", n("undefined_as"), v)
	}}
}

// UserName is the workload's name: the one given, or else the first policy's file name without
// its extension (authz.rego: authz), so that results of two users' policies do not both say
// "user".
func UserName(s UserSpec) string {
	if s.Name != "" {
		return s.Name
	}
	for _, p := range [][]string{s.Policies, s.CedarPolicies, {s.Inputs, s.Requests}} {
		for _, f := range p {
			if f == "" {
				continue
			}
			base := filepath.Base(filepath.Clean(f))
			if i := strings.IndexByte(base, '.'); i > 0 {
				base = base[:i]
			}
			if base != "" && base != "." && base != string(filepath.Separator) {
				return base
			}
		}
	}
	return "user"
}

// ReadInputs reads a JSON Lines file of {"input": {...}, "expect": true|false}; "expect" may be
// absent (the input is then unverified). Blank lines and lines starting with # are skipped.
// Every bad line is reported with its number, all at once.
func ReadInputs(path string) ([]Input, error) {
	return ReadLines(path, "inputs", parseInputLine)
}

// MaxLineBytes is the longest line of an inputs or requests file read: a line is one input,
// held in memory whole.
const MaxLineBytes = 64 << 20

// ReadLines reads a JSON Lines file of inputs, what it holds ("inputs") named in its errors:
// each line that is neither blank nor a # comment is parsed by parse, its Source set to the
// file and line. Every bad line is reported with its number, up to 20, all at once.
func ReadLines(path, what string, parse func([]byte) (Input, error)) ([]Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s %w", what, userwords.Unreadable(path, err))
	}
	defer f.Close()
	var inputs []Input
	var errs []error
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	line := 1
	for ; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		in, err := parse(text)
		in.Source = fmt.Sprintf("%s:%d", path, line)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", path, line, err))
			if len(errs) >= 20 {
				errs = append(errs, errors.New("too many errors; stopping"))
				break
			}
			continue
		}
		inputs = append(inputs, in)
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		errs = append(errs, fmt.Errorf("%s:%d: line longer than %d MiB, the most one line of %s may hold", path, line, MaxLineBytes>>20, what))
	case err != nil:
		errs = append(errs, fmt.Errorf("%s:%d: %w", path, line, err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%s: no %s", path, what)
	}
	return inputs, nil
}

// inputLineForm is the form of a line of an inputs file, as the messages about a line that is
// not one name it.
const inputLineForm = `a JSON object {"input": {...}, "expect": true|false}`

func parseInputLine(text []byte) (Input, error) {
	var line struct {
		Input  json.RawMessage `json:"input"`
		Expect *bool           `json:"expect"`
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&line); err != nil {
		return Input{}, userwords.JSON(text, err, inputLineForm)
	}
	if rest := bytes.TrimSpace(text[dec.InputOffset():]); len(rest) > 0 {
		return Input{}, fmt.Errorf("more than one JSON value on the line, or text after it: %q", truncated(rest))
	}
	if len(line.Input) == 0 || string(line.Input) == "null" {
		return Input{}, errors.New(`missing "input"`)
	}
	in := Input{JSON: compact(line.Input)}
	if line.Expect != nil {
		in.Expect = expectOf(*line.Expect)
	}
	return in, nil
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}

// Export writes the workload as files other tools read: its policy and data as OPA loads them,
// inputs.jsonl in the format ReadInputs reads, the first input alone and the first request body
// of OPA's REST API. An engine's version with files of its own is its package's to write
// (engine.Exported).
func Export(w *Workload, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("export %s: %w", w.Name, err)
	}
	if _, _, err := w.Files(dir); err != nil {
		return err
	}
	var lines bytes.Buffer
	for _, in := range w.Inputs {
		lines.WriteString(`{"input":`)
		lines.Write(in.JSON)
		if in.Expect != Unverified {
			fmt.Fprintf(&lines, `,"expect":%t`, in.Expect == ExpectAllow)
		}
		lines.WriteString("}\n")
	}
	files := map[string][]byte{"inputs.jsonl": lines.Bytes()}
	if len(w.Inputs) > 0 {
		files["input-1.json"] = w.Inputs[0].JSON
		files["body-1.json"] = append(append([]byte(`{"input":`), w.Inputs[0].JSON...), '}')
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("export %s: %w", w.Name, err)
		}
	}
	return nil
}

func truncated(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// UserFiles reads a user's files in the form an engine's own users keep them (the validation
// file its own tools read) into a workload: the engine's package registers it (RegisterUserFiles), as
// it reads them with the engine's own parsers, and this package asks it whose the files are.
// The workload it reads carries its version in Workload.Versions and each input's request in
// Input.Requests, under the engine's name.
type UserFiles struct {
	Engine string // the engine's name, for messages, as it registers it
	// Claims says whether the spec's files are in the engine's form: by their names, or by a
	// look at a file (the top-level keys of a YAML file). It must claim no file another engine
	// reads (a Rego policy, a Cedar one, another engine's store file), and reads as little as it
	// can.
	Claims func(UserSpec) bool
	// Check refuses settings the engine's files cannot be given with, before any file is read,
	// as Check does; nil takes any.
	Check func(UserSpec) error
	// Read reads the files into a workload, every error naming its file and line.
	Read func(UserSpec) (*Workload, error)
	// Beside, when set, lets the engine's files come with a Rego policy and its inputs, to run
	// both on the same decisions: such a spec is read as Rego, Check then run on it too, and
	// Beside adds the engine's version, read from its files, to the workload read (each input's
	// request, line n of the engine's the same decision as input n). Read is for the engine's
	// files alone.
	Beside func(s UserSpec, w *Workload) error
}

var userFiles []UserFiles

// RegisterUserFiles adds an engine's reader of users' files; called from the init function of
// the engine's package. One without Claims or Read, or a second for the same engine, is a
// programming error: it panics.
func RegisterUserFiles(u UserFiles) {
	if u.Engine == "" || u.Claims == nil || u.Read == nil {
		panic("workload: RegisterUserFiles without an engine, Claims or Read")
	}
	for _, o := range userFiles {
		if o.Engine == u.Engine {
			panic("workload: user files of " + u.Engine + " registered twice")
		}
	}
	userFiles = append(userFiles, u)
}

// claimedBy is the registered reader whose engine's form the spec's files are in; nil for
// none. A replay is read before any is asked.
func (s UserSpec) claimedBy() *UserFiles {
	if s.DecisionLog != "" {
		return nil
	}
	for i := range userFiles {
		if u := &userFiles[i]; u.Claims(s) && (u.Beside == nil || !s.HasRego()) {
			return u
		}
	}
	return nil
}

// besideRego are the registered readers whose engines' files the spec gives beside its Rego
// policy and inputs (UserFiles.Beside).
func (s UserSpec) besideRego() []*UserFiles {
	var out []*UserFiles
	for i := range userFiles {
		if u := &userFiles[i]; u.Beside != nil && s.HasRego() && u.Claims(s) {
			out = append(out, u)
		}
	}
	return out
}

// PolicyFiles reads the policy and data files that come with an inputs file of
// {"input": ..., "expect": ...} lines (OPA's Rego policies, its data and bundles): the engine's
// package registers it (RegisterPolicyFiles), as reading them takes the engine's own loader.
type PolicyFiles struct {
	Engine string // the engine's name, as it registers it
	// Check refuses, before any load, the spec's policy and data paths that cannot be loaded
	// as given (a policy directory with no policy in it, a broken bundle), each a
	// *SettingError; CheckFilesExist asks it once every file exists.
	Check func(s UserSpec) []error
	// Query is the decision the spec's policies are asked for when it names none, derived
	// from them; an error says why none can be.
	Query func(s UserSpec) (string, error)
	// Add adds the engine's version to w, read from s (its policy and data paths, inputs and
	// query set): what of the spec only the engine reads, such as the dialect of its policies.
	// FromFiles and FromDecisionLog call it on every workload they build.
	Add func(s UserSpec, w *Workload) error
}

var policyFiles *PolicyFiles

// RegisterPolicyFiles sets the reader of the policies given with inputs files; called from the
// init function of the engine's package. One without Check or Query, or a second, is a
// programming error: it panics.
func RegisterPolicyFiles(p PolicyFiles) {
	if p.Engine == "" || p.Check == nil || p.Query == nil || p.Add == nil {
		panic("workload: RegisterPolicyFiles without an engine, Check, Query or Add")
	}
	if policyFiles != nil {
		panic("workload: policy files of " + p.Engine + " registered beside " + policyFiles.Engine + "'s")
	}
	policyFiles = &p
}
