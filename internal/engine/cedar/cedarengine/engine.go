// Package cedarengine loads a Cedar policy set, its entities and optional schema with
// cedar-go, turns request documents into cedar.Requests, and decides them. The in-process
// target, the server authzbench serves Cedar with, and the workload tests all go through it, so
// every Cedar mode loads and decides alike.
package cedarengine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
	expast "github.com/cedar-policy/cedar-go/x/exp/ast"
	"github.com/cedar-policy/cedar-go/x/exp/schema"
	"github.com/cedar-policy/cedar-go/x/exp/schema/resolved"
	"github.com/cedar-policy/cedar-go/x/exp/schema/validate"

	"github.com/authzbench/authzbench/internal/userwords"
)

// Source is one file's name and text; the name appears in error positions.
type Source struct {
	Name string
	Text []byte
}

// Paths names the files of a policy set on disk.
type Paths struct {
	Policies []string
	Entities string // JSON array of entities; empty for none
	Schema   string // Cedar schema, human-readable (.cedarschema) or JSON (.json); empty for none
	// TemplateLinks links the policies' templates, a JSON array as the Cedar CLI's
	// --template-linked reads: [{"template_id": ..., "link_id": ..., "args": {"?principal": ...}}].
	TemplateLinks string
}

// Engine is a loaded policy set with its entities. It is safe for concurrent use: deciding
// only reads it.
type Engine struct {
	policies  *cedar.PolicySet
	entities  cedar.EntityMap
	schema    *resolved.Schema    // nil without a schema
	validator *validate.Validator // nil without a schema
	ids       []cedar.PolicyID
	warnings  []string
}

// Load reads the files and builds an Engine.
func Load(p Paths) (*Engine, error) {
	var pols []Source
	for _, path := range p.Policies {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read Cedar policies %w", userwords.Unreadable(path, err))
		}
		pols = append(pols, Source{Name: path, Text: b})
	}
	var entities, sch, links *Source
	for _, f := range []struct {
		path string
		dst  **Source
	}{{p.Entities, &entities}, {p.Schema, &sch}, {p.TemplateLinks, &links}} {
		if f.path == "" {
			continue
		}
		b, err := os.ReadFile(f.path)
		if err != nil {
			return nil, fmt.Errorf("read Cedar file %w", userwords.Unreadable(f.path, err))
		}
		*f.dst = &Source{Name: f.path, Text: b}
	}
	var opts []Option
	if links != nil {
		opts = append(opts, WithTemplateLinks(*links))
	}
	return New(pols, entities, sch, opts...)
}

// Option adds to what New builds.
type Option func(*options)

type options struct {
	links *Source
}

// WithTemplateLinks links the policies' templates as src says (see Paths.TemplateLinks).
func WithTemplateLinks(src Source) Option { return func(o *options) { o.links = &src } }

// New builds an Engine from policy texts, an optional entities document and an optional
// schema. A policy annotated @id("name") is known by that name in decisions; the others are
// policy0, policy1 ... in the order given, templates included, as the Cedar CLI numbers them; a
// linked template is known by its link id. With a schema, entities and request contexts are
// read by it (so the shorter JSON forms the Cedar CLI accepts with a schema read alike), its
// actions and their groups join the entity store, and every policy, entity and request is
// validated against it.
func New(policies []Source, entities, sch *Source, opts ...Option) (*Engine, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if len(policies) == 0 {
		return nil, errors.New("no Cedar policies: give at least one policy file")
	}
	e := &Engine{policies: cedar.NewPolicySet(), entities: cedar.EntityMap{}}
	templates := map[cedar.PolicyID]*template{}
	var order []*template
	n := 0
	for _, src := range policies {
		found, err := e.addPolicies(src, &n)
		if err != nil {
			return nil, err
		}
		for _, t := range found {
			if _, dup := templates[t.id]; dup || e.policies.Get(t.id) != nil {
				return nil, fmt.Errorf("%s: policy id %q is used twice", t.where, t.id)
			}
			templates[t.id] = t
			order = append(order, t)
		}
	}
	if sch != nil {
		var err error
		if e.schema, e.validator, err = newValidator(*sch); err != nil {
			return nil, err
		}
	}
	if o.links != nil {
		if err := e.linkTemplates(*o.links, templates); err != nil {
			return nil, err
		}
	}
	for _, t := range order {
		switch {
		case o.links == nil:
			e.warnings = append(e.warnings, fmt.Sprintf("%s: policy %s is a template (it has a ?principal or ?resource slot) and decides nothing without links: give a template links file, in the Cedar CLI's --template-linked format", t.where, t.id))
		case t.linked == 0:
			e.warnings = append(e.warnings, fmt.Sprintf("%s: template %s has no links in %s, so it decides nothing", t.where, t.id, o.links.Name))
		}
	}
	if len(e.ids) == 0 {
		return nil, errors.New("no Cedar policies to decide with: the policy files hold only templates, and none is linked")
	}
	reader := &valueReader{schema: e.schema, warn: func(w string) { e.warnings = append(e.warnings, w) }}
	var places []entityPlace
	if entities != nil {
		var err error
		if places, err = readEntities(*entities, e.entities, reader); err != nil {
			return nil, err
		}
	}
	if e.schema != nil {
		// The Cedar CLI puts the schema's actions, with their groups, in the entity store, so
		// that `action in Action::"group"` finds them. An action the entities file gives too is
		// checked against the schema below.
		for uid, a := range e.schema.Actions {
			if _, ok := e.entities[uid]; !ok {
				e.entities[uid] = a.Entity
			}
		}
	}
	if err := e.checkAcyclic(entities, sch, places); err != nil {
		return nil, err
	}
	if e.validator != nil {
		var errs []error
		for _, id := range e.ids {
			pol := e.policies.Get(id)
			if err := e.validator.Policy(string(id), (*expast.Policy)(pol.AST())); err != nil {
				errs = append(errs, fmt.Errorf("%s: policy %s does not validate against schema %s: %w", positionOf(pol), id, sch.Name, err))
			}
		}
		// Entity by entity, in file order: the validator's own Entities says only "error during
		// entity deserialization", while Entity names the attribute at fault.
		for _, p := range places {
			if err := e.checkEntity(e.entities[p.uid]); err != nil {
				errs = append(errs, fmt.Errorf("%s:%d:%d: entity %s does not validate against schema %s: %w",
					entities.Name, p.line, p.column, p.uid, sch.Name, err))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// ActionGroup is an action a policy's scope names after `in`, where the entity store has no such
// entity: only that action itself is then in it. Where the requests never ask for that action,
// the author meant a group, which the Cedar CLI reads from the schema (or the entities).
type ActionGroup struct {
	Action types.EntityUID
	Policy string // file:line:column and id
}

// UnknownActionGroups lists the actions named after `action in` (alone, or alone in a list) that
// no entity declares.
func (e *Engine) UnknownActionGroups() []ActionGroup {
	var out []ActionGroup
	for _, id := range e.ids {
		pol := e.policies.Get(id)
		var named []types.EntityUID
		switch scope := (*expast.Policy)(pol.AST()).Action.(type) {
		case expast.ScopeTypeIn:
			named = []types.EntityUID{scope.Entity}
		case expast.ScopeTypeInSet:
			// `action in [A, B, C]` is the usual way to list plain actions, each in itself;
			// `action in [G]` names a group as `action in G` does.
			if len(scope.Entities) == 1 {
				named = scope.Entities
			}
		}
		for _, uid := range named {
			if _, known := e.entities[uid]; !known {
				out = append(out, ActionGroup{Action: uid, Policy: fmt.Sprintf("%s: policy %s", positionOf(pol), id)})
			}
		}
	}
	return out
}

// Warnings says what was read in a way the user may not have meant: a template without links,
// a value whose JSON form the Cedar CLI would read otherwise with a schema.
func (e *Engine) Warnings() []string { return e.warnings }

// addPolicies adds a file's static policies to the set and returns its templates, numbering
// both from *n on.
func (e *Engine) addPolicies(src Source, n *int) ([]*template, error) {
	src.Text = escapeLineBreaks(src.Text)
	texts := scanPolicies(src.Text)
	isTemplate := make([]bool, len(texts))
	templates := 0
	for i, t := range texts {
		if len(t.slots) > 0 {
			isTemplate[i] = true
			templates++
		}
	}
	text := src.Text
	if templates > 0 {
		// The static policies are parsed with the templates blanked out, so that they keep
		// their positions and cedar-go never sees a slot.
		inTemplate := make([]bool, len(src.Text))
		for k, t := range texts {
			for i := t.start; isTemplate[k] && i < t.end; i++ {
				inTemplate[i] = true
			}
		}
		text = blankedExcept(src.Text, func(i int) bool { return !inTemplate[i] })
	}
	list, err := cedar.NewPolicyListFromBytes(src.Name, text)
	if err != nil {
		return nil, parseError(err, src)
	}
	if templates > 0 && len(list) != len(texts)-templates {
		return nil, fmt.Errorf("%s: could not tell the templates from the static policies (%d policies, %d of them templates, and cedar-go parsed %d static ones)",
			src.Name, len(texts), templates, len(list))
	}
	var found []*template
	k := 0
	for i := range len(list) + templates {
		id := cedar.PolicyID(fmt.Sprintf("policy%d", *n))
		*n++
		if templates > 0 && isTemplate[i] {
			t := &template{src: src, text: texts[i]}
			line, col := lineColumn(src.Text, int64(t.text.start))
			t.where = fmt.Sprintf("%s:%d:%d", src.Name, line, col)
			// Parsed with stand-ins for its slots: its syntax is checked now, and its @id read.
			stand := map[string]types.EntityUID{
				"?principal": types.NewEntityUID("Slot", "?principal"),
				"?resource":  types.NewEntityUID("Slot", "?resource"),
			}
			parsed, err := cedar.NewPolicyListFromBytes(src.Name, t.withSlots(stand))
			if err != nil || len(parsed) != 1 {
				return nil, fmt.Errorf("template at %s: %w", t.where, parseError(err, src))
			}
			t.id = id
			if named, ok := parsed[0].Annotations()["id"]; ok {
				t.id = cedar.PolicyID(named)
			}
			found = append(found, t)
			continue
		}
		pol := list[k]
		k++
		if named, ok := pol.Annotations()["id"]; ok {
			id = cedar.PolicyID(named)
		}
		if !e.policies.Add(id, pol) {
			return nil, fmt.Errorf("%s: policy id %q is used twice", positionOf(pol), id)
		}
		e.ids = append(e.ids, id)
	}
	return found, nil
}

// parseError is cedar-go's parse error with the file's name where it says <input>.
func parseError(err error, src Source) error {
	if err == nil {
		return errors.New("not one policy")
	}
	return fmt.Errorf("parse Cedar policies: %s", strings.ReplaceAll(err.Error(), "<input>", src.Name))
}

// checkEntity validates an entity against the schema. The Rust implementation lets an entity
// have a parent of any type its type may be in, directly or through other types (a User in a
// Group in an Org may name the Org), while cedar-go's validator takes only direct parent types;
// so parents are checked here, transitively, and the rest by cedar-go.
func (e *Engine) checkEntity(ent types.Entity) error {
	decl, ok := e.schema.Entities[ent.UID.Type]
	if !ok {
		return e.validator.Entity(ent)
	}
	allowed := e.ancestorTypes(ent.UID.Type)
	for p := range ent.Parents.All() {
		if !allowed[p.Type] {
			return fmt.Errorf("parent %s: the schema does not let a %s be in a %s (it may be in: %s)",
				p, ent.UID.Type, p.Type, typeList(decl.ParentTypes))
		}
	}
	ent.Parents = types.EntityUIDSet{}
	return e.validator.Entity(ent)
}

// ancestorTypes are the types an entity of type t may be in, directly or not.
func (e *Engine) ancestorTypes(t types.EntityType) map[types.EntityType]bool {
	seen := map[types.EntityType]bool{}
	var walk func(types.EntityType)
	walk = func(t types.EntityType) {
		for _, p := range e.schema.Entities[t].ParentTypes {
			if !seen[p] {
				seen[p] = true
				walk(p)
			}
		}
	}
	walk(t)
	return seen
}

func typeList(ts []types.EntityType) string {
	if len(ts) == 0 {
		return "none"
	}
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

func newValidator(src Source) (*resolved.Schema, *validate.Validator, error) {
	var s schema.Schema
	s.SetFilename(src.Name)
	var err error
	if strings.HasSuffix(src.Name, ".json") {
		err = s.UnmarshalJSON(src.Text)
	} else {
		// Annotations in a schema are string literals too: read alike (see escapeLineBreaks).
		err = s.UnmarshalCedar(escapeLineBreaks(src.Text))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("parse Cedar schema %s: %s", src.Name, userwords.Text(err.Error()))
	}
	r, err := s.Resolve()
	if err != nil {
		// cedar-go's resolve errors carry no position; the entity they name is found in the
		// text, where the schema is in Cedar syntax.
		return nil, nil, fmt.Errorf("%s: Cedar schema: %w", schemaPlace(src, err.Error()), err)
	}
	return r, validate.New(r), nil
}

func positionOf(p *cedar.Policy) string {
	pos := p.Position()
	return fmt.Sprintf("%s:%d:%d", pos.Filename, pos.Line, pos.Column)
}

// Policies returns how many policies the set holds.
func (e *Engine) Policies() int { return len(e.ids) }

// Request is a parsed request, ready to decide without further allocation for parsing.
type Request struct {
	cedar.Request
	// entities are the store plus any entities the request carried (these win on a clash).
	entities types.EntityGetter
	// own are the entities the request carried; nil for none.
	own cedar.EntityMap
}

// CheckRequest reports whether b is a well-formed request document, without a policy set: the
// check a requests file gets line by line before anything is loaded.
func CheckRequest(b []byte) error {
	var e Engine
	_, err := e.ParseRequest(b)
	return err
}

// uidForms is what a request's principal, action or resource may be, for messages.
const uidForms = `{"type": "User", "id": "alice"}, {"__entity": {"type": "User", "id": "alice"}} or "User::\"alice\""`

// ParseRequest reads a request document: {"principal": ..., "action": ..., "resource": ...,
// "context": {...}, "entities": [...]}. Entity references take the forms the Cedar CLI takes,
// {"type": "User", "id": "alice"}, {"__entity": {...}} or "User::\"alice\""; context is a Cedar
// record in JSON (absent means empty), read by the schema's context type for the action when
// there is a schema; "entities", if present, is an array of entities that add to the store for
// this request only. With a schema, the request is validated against it.
func (e *Engine) ParseRequest(b []byte) (Request, error) {
	return e.parseRequest(b, nil)
}

// ParseRequestWarning reads a request as ParseRequest does, and says what it read in a way the
// user may not have meant (see Warnings).
func (e *Engine) ParseRequestWarning(b []byte) (Request, []string, error) {
	var warnings []string
	r, err := e.parseRequest(b, func(w string) { warnings = append(warnings, w) })
	return r, warnings, err
}

func (e *Engine) parseRequest(b []byte, warn func(string)) (Request, error) {
	var d map[string]json.RawMessage
	if err := json.Unmarshal(b, &d); err != nil || d == nil {
		return Request{}, fmt.Errorf(`not a Cedar request document {"principal": ..., "action": ..., "resource": ..., "context": {...}}: %v`, err)
	}
	var r Request
	for _, f := range []struct {
		name string
		dst  *types.EntityUID
	}{{"principal", &r.Principal}, {"action", &r.Action}, {"resource", &r.Resource}} {
		raw, ok := d[f.name]
		if !ok {
			return Request{}, fmt.Errorf("missing %q; write it as %s", f.name, uidForms)
		}
		uid, err := readUID(raw)
		if err != nil {
			return Request{}, fmt.Errorf("%q: %s is not an entity: %s; write it as %s", f.name, jsonKind(raw), userwords.Text(err.Error()), uidForms)
		}
		*f.dst = uid
	}
	reader := &valueReader{schema: e.schema, warn: warn}
	if raw, ok := d["context"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		if raw = bytes.TrimSpace(raw); raw[0] != '{' {
			return Request{}, fmt.Errorf(`"context": want a JSON object, got %s`, jsonKind(raw))
		}
		var want resolved.RecordType
		if e.schema != nil {
			if a, ok := e.schema.Actions[r.Action]; ok && a.AppliesTo != nil {
				want = a.AppliesTo.Context
				if want == nil {
					want = resolved.RecordType{}
				}
			}
		}
		var fast types.Value
		if want != nil && warn == nil && types.UnmarshalJSON(raw, &fast) == nil && conforms(fast, want) {
			// Canonical JSON, read in one pass as the server pays on every request.
			r.Context = fast.(types.Record)
		} else if want != nil {
			var members map[string]json.RawMessage
			if err := json.Unmarshal(raw, &members); err != nil {
				return Request{}, fmt.Errorf(`"context": %w`, err)
			}
			rec, err := reader.record(members, want, "context", false)
			if err != nil {
				return Request{}, err
			}
			r.Context = rec
		} else {
			v, err := reader.value(raw, nil, "context")
			if err != nil {
				return Request{}, err
			}
			rec, ok := v.(types.Record)
			if !ok {
				return Request{}, fmt.Errorf(`"context": want a record, got %s`, valueTypeName(v))
			}
			r.Context = rec
		}
	}
	r.entities = e.entities
	if raw, ok := d["entities"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		own, err := requestEntities(raw, reader)
		if err != nil {
			return Request{}, err
		}
		if len(own) > 0 {
			r.own = own
			r.entities = layered{request: own, store: e.entities}
			if warn != nil {
				// Checked where requests are checked before any load, not where a server reads
				// them under load: the store is acyclic, so a cycle runs through the request's
				// own entities, and a search from each of them finds it.
				if cycle := findParentCycle(r.entities, sortedUIDs(own)); cycle != nil {
					return Request{}, fmt.Errorf(`"entities": %w`, cycleError("", cycle, nil))
				}
			}
		}
	}
	if e.validator != nil {
		if err := e.validator.Request(r.Request); err != nil {
			return Request{}, fmt.Errorf("request does not validate against the schema: %w%s", err, e.appliesTo(r.Action))
		}
	}
	return r, nil
}

// appliesTo says what the schema takes for an action, to follow a request's validation error.
func (e *Engine) appliesTo(action types.EntityUID) string {
	a, ok := e.schema.Actions[action]
	if !ok {
		actions := make([]string, 0, len(e.schema.Actions))
		for uid, a := range e.schema.Actions {
			if a.AppliesTo != nil {
				actions = append(actions, uid.String())
			}
		}
		slices.Sort(actions)
		return "; the schema's actions are " + strings.Join(actions, ", ")
	}
	if a.AppliesTo == nil {
		return fmt.Sprintf("; the schema's %s applies to no request (an action group?)", action)
	}
	return fmt.Sprintf("; the schema's %s takes principal %s, resource %s", action,
		typeList(a.AppliesTo.Principals), typeList(a.AppliesTo.Resources))
}

// requestEntities reads the entities a request brings.
func requestEntities(raw json.RawMessage, reader *valueReader) (cedar.EntityMap, error) {
	if reader.warn == nil {
		// cedar-go reads the array in one pass, as a server pays on every request that brings
		// entities; written in the canonical forms, that is already what the schema reads.
		// What it refuses or reads otherwise, the reading below converts or explains.
		var own cedar.EntityMap
		if err := json.Unmarshal(raw, &own); err == nil {
			fast := true
			for _, ent := range own {
				if reader.schema != nil && !reader.entityConforms(ent) {
					fast = false
					break
				}
			}
			if fast {
				return own, nil
			}
		}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf(`"entities": want a JSON array of entities, got %s`, jsonKind(raw))
	}
	own := cedar.EntityMap{}
	for i, item := range items {
		ent, err := reader.entity(item)
		if err != nil {
			return nil, fmt.Errorf(`"entities" entity %d: %w`, i+1, err)
		}
		own[ent.UID] = ent
	}
	return own, nil
}

// layered looks an entity up in the request's own entities, then in the store, so requests can
// bring entities without copying the store for each one.
type layered struct {
	request, store cedar.EntityMap
}

func (l layered) Get(uid types.EntityUID) (types.Entity, bool) {
	if ent, ok := l.request[uid]; ok {
		return ent, true
	}
	return l.store.Get(uid)
}

// Decide authorizes a parsed request.
func (e *Engine) Decide(r *Request) (cedar.Decision, cedar.Diagnostic) {
	return cedar.Authorize(e.policies, r.entities, r.Request)
}

var resolvedEntity = regexp.MustCompile(`entity "([A-Za-z_][A-Za-z0-9_]*)"`)

// schemaPlace is file:line:column of the declaration of the entity a schema error names, or the
// file alone when it cannot be found.
func schemaPlace(src Source, msg string) string {
	m := resolvedEntity.FindStringSubmatch(msg)
	if m == nil || strings.HasSuffix(src.Name, ".json") {
		return src.Name
	}
	decl := regexp.MustCompile(`\bentity\s+(?:[A-Za-z0-9_]+\s*,\s*)*` + m[1] + `\b`)
	loc := decl.FindIndex(src.Text)
	if loc == nil {
		return src.Name
	}
	line, col := lineColumn(src.Text, int64(loc[0]))
	return fmt.Sprintf("%s:%d:%d", src.Name, line, col)
}

// entityPlace is where an entity starts in its file, so an error can point at it.
type entityPlace struct {
	uid          types.EntityUID
	line, column int
}

// readEntities decodes a JSON array of Cedar entities into into, keeping where each one starts.
// A syntax error or a malformed entity names its line and column.
func readEntities(src Source, into cedar.EntityMap, reader *valueReader) ([]entityPlace, error) {
	at := func(offset int64) string {
		line, col := lineColumn(src.Text, offset)
		return fmt.Sprintf("%s:%d:%d", src.Name, line, col)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(src.Text, &items); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, fmt.Errorf("%s: %w", at(syntax.Offset), userwords.JSON(src.Text, err, ""))
		}
		return nil, fmt.Errorf("%s: %w", src.Name, userwords.JSON(src.Text, err, "a JSON array of Cedar entities"))
	}
	var places []entityPlace
	offset := int64(bytes.IndexByte(src.Text, '['))
	lines := lineCounter{text: src.Text, line: 1, lastNewline: -1}
	for i, item := range items {
		// json.Unmarshal keeps each element's bytes as written, so the element is found by its
		// text, searching on from the end of the one before.
		start := offset + int64(bytes.Index(src.Text[offset:], item))
		offset = start + int64(len(item))
		ent, err := reader.entity(item)
		if err != nil {
			return nil, fmt.Errorf("%s: entity %d of the array: %w", at(start), i+1, err)
		}
		line, col := lines.at(start)
		if _, dup := into[ent.UID]; dup {
			return nil, fmt.Errorf("%s: entity %s is given twice", at(start), ent.UID)
		}
		into[ent.UID] = ent
		places = append(places, entityPlace{uid: ent.UID, line: line, column: col})
	}
	return places, nil
}

// lineCounter turns increasing byte offsets into lines and columns, counting each byte once: an
// entities file of a million entities, often all on one line, would take hours if every
// entity's place were counted from the start of the file (lineColumn).
type lineCounter struct {
	text        []byte
	pos         int64 // bytes counted so far
	line        int   // 1-based line at pos
	lastNewline int64 // offset of the last newline before pos, -1 for none
}

// at returns the line and column of offset, which must not be before the last one asked.
func (c *lineCounter) at(offset int64) (line, column int) {
	offset = min(max(offset, c.pos), int64(len(c.text)))
	seg := c.text[c.pos:offset]
	c.line += bytes.Count(seg, []byte("\n"))
	if i := bytes.LastIndexByte(seg, '\n'); i >= 0 {
		c.lastNewline = c.pos + int64(i)
	}
	c.pos = offset
	return c.line, int(offset - c.lastNewline)
}

// lineColumn turns a byte offset into a 1-based line and column.
func lineColumn(text []byte, offset int64) (line, column int) {
	offset = min(max(offset, 0), int64(len(text)))
	before := text[:offset]
	line = 1 + bytes.Count(before, []byte("\n"))
	return line, int(offset) - bytes.LastIndexByte(before, '\n')
}
