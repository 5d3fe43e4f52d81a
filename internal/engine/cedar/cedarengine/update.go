package cedarengine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
	expast "github.com/cedar-policy/cedar-go/x/exp/ast"
)

// Update is a change to a loaded policy set and its entities, as the Cedar server's update
// endpoint and the in-process target take it: {"entities": [...], "delete": [...], "policies":
// [...]}. Entities are put whole (added, or replacing the entity of the same uid), in the form of
// an entities file; delete names the uids to remove, in the forms a request's principal takes;
// policies, when given, replace the whole policy set, each a policy file's text (static policies
// only: an update links no template).
type Update struct {
	Entities json.RawMessage   `json:"entities,omitempty"`
	Delete   []json.RawMessage `json:"delete,omitempty"`
	Policies []string          `json:"policies,omitempty"`
}

// ReadUpdate reads an update document strictly: an unknown key, or neither entities nor
// deletes, is an error.
func ReadUpdate(b []byte) (Update, error) {
	var u Update
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&u); err != nil {
		return Update{}, fmt.Errorf(`not an update {"entities": [...], "delete": [...]}: %v`, err)
	}
	if len(bytes.TrimSpace(u.Entities)) == 0 && len(u.Delete) == 0 && u.Policies == nil {
		return Update{}, errors.New(`an update with no "entities" to put, nothing to "delete" and no "policies"`)
	}
	if u.Policies != nil && len(u.Policies) == 0 {
		return Update{}, errors.New(`"policies": [] would leave no policy: give the policy files' texts`)
	}
	return u, nil
}

// CheckPolicies reads policy texts as an update's "policies" are read, without a schema: the
// check a changes file's line gets before anything is loaded.
func CheckPolicies(name string, texts []string) error {
	e := &Engine{policies: cedar.NewPolicySet()}
	return e.replacePolicies(name, texts)
}

// replacePolicies puts a new policy set of texts in e, numbered as files given at start are.
func (e *Engine) replacePolicies(name string, texts []string) error {
	e.policies, e.ids = cedar.NewPolicySet(), nil
	n := 0
	for i, text := range texts {
		src := Source{Name: fmt.Sprintf("%s policies %d", name, i+1), Text: []byte(text)}
		templates, err := e.addPolicies(src, &n)
		if err != nil {
			return err
		}
		if len(templates) > 0 {
			return fmt.Errorf("%s: policy %s is a template: an update links no template", templates[0].where, templates[0].id)
		}
	}
	if len(e.ids) == 0 {
		return fmt.Errorf("%s: no policies in \"policies\"", name)
	}
	return nil
}

// With is e with u applied, as a new Engine: e is left as it was, so what decides with it goes
// on deciding with the world before u until it is handed the new one. The schema is shared, and
// the policy set too unless u replaces it (nothing writes either); the entity store is copied,
// as a service that builds its store anew for each change does. Entities put are read and validated as an entities file's
// are (name names the update in errors), and the store stays acyclic.
func (e *Engine) With(name string, u Update) (*Engine, error) {
	put := cedar.EntityMap{}
	reader := &valueReader{schema: e.schema}
	var places []entityPlace
	if len(bytes.TrimSpace(u.Entities)) > 0 {
		var err error
		if places, err = readEntities(Source{Name: name, Text: u.Entities}, put, reader); err != nil {
			return nil, err
		}
	}
	n := *e
	n.warnings = nil
	if u.Policies != nil {
		if err := n.replacePolicies(name, u.Policies); err != nil {
			return nil, err
		}
		if n.validator != nil {
			var errs []error
			for _, id := range n.ids {
				pol := n.policies.Get(id)
				if err := n.validator.Policy(string(id), (*expast.Policy)(pol.AST())); err != nil {
					errs = append(errs, fmt.Errorf("%s: policy %s does not validate against the schema: %w", positionOf(pol), id, err))
				}
			}
			if err := errors.Join(errs...); err != nil {
				return nil, err
			}
		}
	}
	n.entities = maps.Clone(e.entities)
	for i, raw := range u.Delete {
		uid, err := readUID(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: delete %d: %s is not an entity: %v; write it as %s", name, i+1, jsonKind(raw), err, uidForms)
		}
		if _, ok := n.entities[uid]; !ok {
			return nil, fmt.Errorf("%s: delete %d: no entity %s in the store", name, i+1, uid)
		}
		delete(n.entities, uid)
	}
	var errs []error
	for _, p := range places {
		ent := put[p.uid]
		if n.validator != nil {
			if err := n.checkEntity(ent); err != nil {
				errs = append(errs, fmt.Errorf("%s:%d:%d: entity %s does not validate against the schema: %w", name, p.line, p.column, p.uid, err))
			}
		}
		n.entities[p.uid] = ent
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// The store was acyclic: a cycle now runs through an entity put.
	order := make([]types.EntityUID, 0, len(places))
	for _, p := range places {
		order = append(order, p.uid)
	}
	slices.SortFunc(order, func(a, b types.EntityUID) int { return strings.Compare(a.String(), b.String()) })
	if cycle := findParentCycle(n.entities, order); cycle != nil {
		return nil, cycleError(name, cycle, nil)
	}
	return &n, nil
}

// DecideCurrent authorizes r, parsed by this engine or another of the same policies and schema
// (an earlier one of a Live), against this engine's entities: r's own entities, if it brought
// any, over this store.
func (e *Engine) DecideCurrent(r *Request) (cedar.Decision, cedar.Diagnostic) {
	if r.own != nil {
		return cedar.Authorize(e.policies, layered{request: r.own, store: e.entities}, r.Request)
	}
	return cedar.Authorize(e.policies, e.entities, r.Request)
}

// Live is an Engine that changes during a run: each update builds a new Engine and swaps it in
// whole, as services built on cedar-go do (its policy set has no lock: cedar-local-agent builds
// a new one on every refresh). A decision reads the engine current when it starts and finishes
// on it; one started after Update returned sees the update.
type Live struct {
	current atomic.Pointer[Engine]
	// updates are applied one at a time, each on the engine the one before made.
	updates sync.Mutex
}

// NewLive is a Live starting with e.
func NewLive(e *Engine) *Live {
	l := &Live{}
	l.current.Store(e)
	return l
}

// Engine is the engine current now.
func (l *Live) Engine() *Engine { return l.current.Load() }

// Update builds the engine with u applied and swaps it in; on an error nothing changes.
func (l *Live) Update(name string, u Update) error {
	l.updates.Lock()
	defer l.updates.Unlock()
	n, err := l.current.Load().With(name, u)
	if err != nil {
		return err
	}
	l.current.Store(n)
	return nil
}
