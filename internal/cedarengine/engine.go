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
	"strings"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
	expast "github.com/cedar-policy/cedar-go/x/exp/ast"
	"github.com/cedar-policy/cedar-go/x/exp/schema"
	"github.com/cedar-policy/cedar-go/x/exp/schema/validate"
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
}

// Engine is a loaded policy set with its entities. It is safe for concurrent use: deciding
// only reads it.
type Engine struct {
	policies  *cedar.PolicySet
	entities  cedar.EntityMap
	validator *validate.Validator // nil without a schema
	ids       []cedar.PolicyID
}

// Load reads the files and builds an Engine.
func Load(p Paths) (*Engine, error) {
	var pols []Source
	for _, path := range p.Policies {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read Cedar policies: %w", err)
		}
		pols = append(pols, Source{Name: path, Text: b})
	}
	var entities, sch *Source
	for _, f := range []struct {
		path string
		dst  **Source
	}{{p.Entities, &entities}, {p.Schema, &sch}} {
		if f.path == "" {
			continue
		}
		b, err := os.ReadFile(f.path)
		if err != nil {
			return nil, fmt.Errorf("read Cedar file: %w", err)
		}
		*f.dst = &Source{Name: f.path, Text: b}
	}
	return New(pols, entities, sch)
}

// New builds an Engine from policy texts, an optional entities document and an optional
// schema. A policy annotated @id("name") is known by that name in decisions; the others are
// policy0, policy1 ... in the order given, as cedar-go and the Cedar CLI number them. With a
// schema, every policy and entity is validated against it (strict mode), and so is every
// request parsed later.
func New(policies []Source, entities, sch *Source) (*Engine, error) {
	if len(policies) == 0 {
		return nil, errors.New("no Cedar policies: give at least one policy file")
	}
	e := &Engine{policies: cedar.NewPolicySet(), entities: cedar.EntityMap{}}
	n := 0
	for _, src := range policies {
		list, err := cedar.NewPolicyListFromBytes(src.Name, src.Text)
		if err != nil {
			// cedar-go's parse errors say <input> where the file name belongs.
			return nil, fmt.Errorf("parse Cedar policies: %s", strings.ReplaceAll(err.Error(), "<input>", src.Name))
		}
		for _, pol := range list {
			id := cedar.PolicyID(fmt.Sprintf("policy%d", n))
			n++
			if named, ok := pol.Annotations()["id"]; ok {
				id = cedar.PolicyID(named)
			}
			if !e.policies.Add(id, pol) {
				return nil, fmt.Errorf("%s: policy id %q is used twice", positionOf(pol), id)
			}
			e.ids = append(e.ids, id)
		}
	}
	var places []entityPlace
	if entities != nil {
		var err error
		if places, err = readEntities(*entities, e.entities); err != nil {
			return nil, err
		}
	}
	if sch != nil {
		v, err := newValidator(*sch)
		if err != nil {
			return nil, err
		}
		e.validator = v
		var errs []error
		for _, id := range e.ids {
			pol := e.policies.Get(id)
			if err := v.Policy(string(id), (*expast.Policy)(pol.AST())); err != nil {
				errs = append(errs, fmt.Errorf("%s: policy %s does not validate against schema %s: %w", positionOf(pol), id, sch.Name, err))
			}
		}
		// Entity by entity, in file order: the validator's own Entities says only "error during
		// entity deserialization", while Entity names the attribute at fault.
		for _, p := range places {
			if err := v.Entity(e.entities[p.uid]); err != nil {
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

func newValidator(src Source) (*validate.Validator, error) {
	var s schema.Schema
	s.SetFilename(src.Name)
	var err error
	if strings.HasSuffix(src.Name, ".json") {
		err = s.UnmarshalJSON(src.Text)
	} else {
		err = s.UnmarshalCedar(src.Text)
	}
	if err != nil {
		return nil, fmt.Errorf("parse Cedar schema %s: %w", src.Name, err)
	}
	r, err := s.Resolve()
	if err != nil {
		// cedar-go's resolve errors carry no position; the entity they name is found in the
		// text, where the schema is in Cedar syntax.
		return nil, fmt.Errorf("%s: Cedar schema: %w", schemaPlace(src, err.Error()), err)
	}
	return validate.New(r), nil
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
}

// requestDoc is the JSON form of a request: the body of the server's /v1/is_authorized and a
// line of a requests file (which may add "expect").
type requestDoc struct {
	Principal *types.EntityUID `json:"principal"`
	Action    *types.EntityUID `json:"action"`
	Resource  *types.EntityUID `json:"resource"`
	Context   *types.Record    `json:"context"`
	Entities  *types.EntityMap `json:"entities"`
}

// CheckRequest reports whether b is a well-formed request document, without a policy set: the
// check a requests file gets line by line before anything is loaded.
func CheckRequest(b []byte) error {
	var e Engine
	_, err := e.ParseRequest(b)
	return err
}

// ParseRequest reads a request document. Entity references take Cedar's JSON forms,
// {"type": "User", "id": "alice"} or {"__entity": {...}}; context is a Cedar record in JSON
// (absent means empty); "entities", if present, is an array of entities that add to the store
// for this request only. With a schema, the request is validated against it.
func (e *Engine) ParseRequest(b []byte) (Request, error) {
	var d requestDoc
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		return Request{}, fmt.Errorf("not a Cedar request document: %w", err)
	}
	switch {
	case d.Principal == nil:
		return Request{}, errors.New(`missing "principal"`)
	case d.Action == nil:
		return Request{}, errors.New(`missing "action"`)
	case d.Resource == nil:
		return Request{}, errors.New(`missing "resource"`)
	}
	r := Request{Request: cedar.Request{Principal: *d.Principal, Action: *d.Action, Resource: *d.Resource}}
	if d.Context != nil {
		r.Context = *d.Context
	}
	r.entities = e.entities
	if d.Entities != nil && len(*d.Entities) > 0 {
		r.entities = layered{request: *d.Entities, store: e.entities}
	}
	if e.validator != nil {
		if err := e.validator.Request(r.Request); err != nil {
			return Request{}, fmt.Errorf("request does not validate against the schema: %w", err)
		}
	}
	return r, nil
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

// PolicySet and Entities expose what was loaded, for benchmarks that call cedar.Authorize
// directly to compare against.
func (e *Engine) PolicySet() *cedar.PolicySet { return e.policies }

// EntitiesOf returns the entities a request is decided against.
func (r *Request) EntitiesOf() types.EntityGetter { return r.entities }

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
func readEntities(src Source, into cedar.EntityMap) ([]entityPlace, error) {
	at := func(offset int64) string {
		line, col := lineColumn(src.Text, offset)
		return fmt.Sprintf("%s:%d:%d", src.Name, line, col)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(src.Text, &items); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, fmt.Errorf("%s: not a JSON array of Cedar entities: %w", at(syntax.Offset), err)
		}
		return nil, fmt.Errorf("%s: not a JSON array of Cedar entities: %w", src.Name, err)
	}
	var places []entityPlace
	offset := int64(bytes.IndexByte(src.Text, '['))
	for i, item := range items {
		// json.Unmarshal keeps each element's bytes as written, so the element is found by its
		// text, searching on from the end of the one before.
		start := offset + int64(bytes.Index(src.Text[offset:], item))
		offset = start + int64(len(item))
		var ent types.Entity
		if err := json.Unmarshal(item, &ent); err != nil {
			return nil, fmt.Errorf("%s: entity %d of the array: %w", at(start), i+1, err)
		}
		line, col := lineColumn(src.Text, start)
		if _, dup := into[ent.UID]; dup {
			return nil, fmt.Errorf("%s: entity %s is given twice", at(start), ent.UID)
		}
		into[ent.UID] = ent
		places = append(places, entityPlace{uid: ent.UID, line: line, column: col})
	}
	return places, nil
}

// lineColumn turns a byte offset into a 1-based line and column.
func lineColumn(text []byte, offset int64) (line, column int) {
	offset = min(max(offset, 0), int64(len(text)))
	before := text[:offset]
	line = 1 + bytes.Count(before, []byte("\n"))
	return line, int(offset) - bytes.LastIndexByte(before, '\n')
}
