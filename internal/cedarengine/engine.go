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
	if entities != nil {
		if err := json.Unmarshal(entities.Text, &e.entities); err != nil {
			return nil, fmt.Errorf("%s: not a JSON array of Cedar entities: %w", entities.Name, err)
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
		if err := v.Entities(e.entities); err != nil {
			errs = append(errs, fmt.Errorf("entities do not validate against schema %s: %w", sch.Name, err))
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
		return nil, fmt.Errorf("Cedar schema %s: %w", src.Name, err)
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
