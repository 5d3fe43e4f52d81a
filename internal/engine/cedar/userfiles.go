package cedar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cedar-policy/cedar-go/types"

	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/userwords"
	"github.com/authzbench/authzbench/internal/workload"
)

// Users' Cedar files, as the Cedar CLI reads them: policies, optional entities, schema and
// template links, and requests, JSON Lines of {"principal": ..., "action": ..., "resource":
// ..., "context": {...}, "expect": true|false}. Given alone they are a workload of their own;
// given with a Rego policy and its inputs, line n of the requests is the same decision as line n
// of the inputs, so both engines are compared on the user's own policies.
func init() {
	workload.RegisterUserFiles(workload.UserFiles{Engine: "cedar", Claims: workload.UserSpec.HasCedar,
		Check: checkSpec, Read: fromFiles, Beside: beside})
}

// checkSpec wants the policies and the requests, before any file is read.
func checkSpec(s workload.UserSpec) error {
	if len(s.CedarPolicies) == 0 {
		return workload.NewSettingError("cedar_policies", func(n func(string) string) string {
			return fmt.Sprintf("a Cedar workload needs %s FILE (and %s FILE.jsonl)", n("cedar_policies"), n("requests"))
		})
	}
	if s.Requests == "" {
		return workload.NewSettingError("requests", func(n func(string) string) string {
			return fmt.Sprintf(`a Cedar workload needs %s FILE.jsonl (one {"principal": ..., "action": ..., "resource": ..., "context": {...}, "expect": true|false} per line)`,
				n("requests"))
		})
	}
	return nil
}

// fromFiles reads a Cedar workload of the user's: every file named there first, then the files.
func fromFiles(s workload.UserSpec) (*workload.Workload, error) {
	if err := s.CheckFilesExist(); err != nil {
		return nil, err
	}
	return read(s)
}

// beside adds the Cedar version of the user's files to w, the workload of their Rego policy
// and inputs: the two must be as many decisions, and agree on those both expect.
func beside(s workload.UserSpec, w *workload.Workload) error {
	cw, err := read(s)
	if err != nil {
		return err
	}
	inputs := w.Inputs
	if len(cw.Inputs) != len(inputs) {
		return fmt.Errorf("%s has %d inputs and %s has %d requests: with both, line n of one must be the same decision as line n of the other",
			s.Inputs, len(inputs), s.Requests, len(cw.Inputs))
	}
	for i := range inputs {
		c := cw.Inputs[i]
		if c.Expect != workload.Unverified && inputs[i].Expect != workload.Unverified && c.Expect != inputs[i].Expect {
			return fmt.Errorf("%s expects %s and %s expects %s for the same decision", inputs[i].Source, inputs[i].Expect, c.Source, c.Expect)
		}
		if inputs[i].Expect == workload.Unverified {
			inputs[i].Expect = c.Expect
		}
		if inputs[i].Requests == nil {
			inputs[i].Requests = map[string]workload.EngineRequest{}
		}
		inputs[i].Requests[Name] = c.Requests[Name]
	}
	if w.Versions == nil {
		w.Versions = map[string]*workload.Version{}
	}
	w.Versions[Name] = cw.Versions[Name]
	w.Description += "; Cedar: " + strings.Join(append(append([]string{}, s.CedarPolicies...), s.Requests), ", ")
	return nil
}

// read builds the Cedar side of a user workload whose settings passed checkSpec.
func read(s workload.UserSpec) (*workload.Workload, error) {
	requests, err := workload.ReadLines(s.Requests, "requests", parseRequestLine)
	if err != nil {
		return nil, err
	}
	for i, in := range requests {
		r := in.Requests[Name]
		r.Source = in.Source
		requests[i].Requests[Name] = r
	}
	// Load the policies, entities and schema now, and check every request against them, so a
	// mistake in any of them is reported before any load starts, not when a target starts.
	engine, err := cedarengine.Load(cedarengine.Paths{Policies: s.CedarPolicies, Entities: s.Entities, Schema: s.Schema, TemplateLinks: s.TemplateLinks})
	if err != nil {
		return nil, err
	}
	var errs []error
	warnings := slices.Clone(engine.Warnings())
	asked := map[types.EntityUID]bool{}
	for _, in := range requests {
		r, ws, err := engine.ParseRequestWarning(in.Requests[Name].Body)
		if err != nil && len(errs) < 20 {
			errs = append(errs, fmt.Errorf("%s: %w", in.Source, err))
		}
		asked[r.Action] = true
		for _, w := range ws {
			warnings = append(warnings, in.Source+": "+w)
		}
	}
	// `action in Action::"g"` with no entity g matches only g itself; if no request asks for g,
	// the author meant a group, and every decision through it is silently a deny.
	for _, g := range engine.UnknownActionGroups() {
		if !asked[g.Action] {
			warnings = append(warnings, fmt.Sprintf("%s: action in %s: no entity %s, so no action is in it, and no request asks for it; "+
				"declare the group in the schema (action read in [\"%s\"]), as the Cedar CLI reads action groups from the schema",
				g.Policy, g.Action, g.Action, string(g.Action.ID)))
		}
	}
	// The same mistake tends to be on every line; a few of them make the point.
	if len(warnings) > 10 {
		warnings = append(warnings[:10], fmt.Sprintf("and %d more warnings like these", len(warnings)-10))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	files := map[string]string{FilePolicies: strings.Join(s.CedarPolicies, ", "), FileRequests: s.Requests}
	for part, path := range map[string]string{FileEntities: s.Entities, FileSchema: s.Schema, FileTemplateLinks: s.TemplateLinks} {
		if path != "" {
			files[part] = path
		}
	}
	return &workload.Workload{
		Name:        workload.UserName(s),
		Description: "user-supplied Cedar: " + strings.Join(append(append([]string{}, s.CedarPolicies...), s.Requests), ", "),
		Inputs:      requests,
		Versions: map[string]*workload.Version{Name: {Files: files, Warnings: warnings,
			Own: &Files{PolicyPaths: s.CedarPolicies, EntitiesPath: s.Entities, SchemaPath: s.Schema, TemplateLinksPath: s.TemplateLinks}}},
	}, nil
}

// The parts of the user's Cedar files, as workload.Version.Files names them; the policies are
// one part, their paths joined with ", ".
const (
	FilePolicies      = "policies"
	FileEntities      = "entities"
	FileSchema        = "schema"
	FileTemplateLinks = "template_links"
	FileRequests      = "requests"
)

// requestLineForm is the form of a line of a requests file, as the messages about a line that
// is not one name it.
const requestLineForm = `a JSON object {"principal": ..., "action": ..., "resource": ..., "context": {...}, "expect": true|false}`

// requestKeys are the members a request line may have besides "expect".
var requestKeys = map[string]bool{"principal": true, "action": true, "resource": true, "context": true, "entities": true}

// parseRequestLine reads one line of a requests file: the request, with entity references in
// Cedar's JSON forms, and its expected decision; "context", "entities" and "expect" may be
// absent.
func parseRequestLine(text []byte) (workload.Input, error) {
	var line map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(text))
	if err := dec.Decode(&line); err != nil {
		return workload.Input{}, userwords.JSON(text, err, requestLineForm)
	}
	if line == nil {
		return workload.Input{}, errors.New("want " + requestLineForm + ", got null")
	}
	if rest := bytes.TrimSpace(text[dec.InputOffset():]); len(rest) > 0 {
		return workload.Input{}, fmt.Errorf("more than one JSON value on the line, or text after it: %q", truncated(rest))
	}
	var in workload.Input
	if raw, ok := line["expect"]; ok {
		var e *bool
		if err := json.Unmarshal(raw, &e); err != nil {
			return workload.Input{}, fmt.Errorf(`"expect" must be true or false, not %s`, raw)
		}
		if e != nil {
			in.Expect = expectOf(*e)
		}
		delete(line, "expect")
	}
	for _, k := range []string{"principal", "action", "resource"} {
		if _, ok := line[k]; !ok {
			return workload.Input{}, fmt.Errorf("missing %q", k)
		}
	}
	for k := range line {
		if !requestKeys[k] {
			return workload.Input{}, fmt.Errorf("unknown member %q; a request has principal, action, resource, context, entities and expect", k)
		}
	}
	body := mustJSON(line)
	if err := cedarengine.CheckRequest(body); err != nil {
		return workload.Input{}, err
	}
	in.Requests = map[string]workload.EngineRequest{Name: {Body: body}}
	return in, nil
}

// expectOf is the expectation of a reference model's, or a requests line's, answer.
func expectOf(allow bool) workload.Expect {
	if allow {
		return workload.ExpectAllow
	}
	return workload.ExpectDeny
}

// mustJSON encodes a value built here; failure is a programming error. HTML characters are
// kept as they are, as the Cedar CLI's files have them.
func mustJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func truncated(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
