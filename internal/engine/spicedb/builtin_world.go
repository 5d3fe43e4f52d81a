package spicedb

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	core "github.com/authzed/spicedb/pkg/proto/core/v1"
	"github.com/authzed/spicedb/pkg/schemadsl/compiler"
	"github.com/authzed/spicedb/pkg/schemadsl/input"
	"github.com/authzed/spicedb/pkg/tuple"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/authzbench/authzbench/internal/workload"
)

// fgaTuple is a tuple as the OpenFGA version of a built-in writes it, in JSON.
type fgaTuple struct {
	User      string `json:"user"`
	Relation  string `json:"relation"`
	Object    string `json:"object"`
	Condition *struct {
		Name    string         `json:"name"`
		Context map[string]any `json:"context"`
	} `json:"condition"`
}

// key is the tuple without its condition: two tuples with the same key are one relationship.
func (t fgaTuple) key() string { return t.Object + "#" + t.Relation + "@" + t.User }

// condition is the tuple's condition written out, "" for none.
func (t fgaTuple) condition() string {
	if t.Condition == nil {
		return ""
	}
	data, _ := json.Marshal(t.Condition) // maps marshal with sorted keys: one text per condition
	return string(data)
}

// subjectNode is the object the tuple's user names ("group:eng" for "group:eng#member"), or the
// wildcard itself ("user:*"): what a decision walks to from the tuple's object.
func (t fgaTuple) subjectNode() string {
	node, _, _ := strings.Cut(t.User, "#")
	return node
}

// fgaCheck is an input's OpenFGA Check, as the built-ins write it.
type fgaCheck struct {
	User             string         `json:"user"`
	Relation         string         `json:"relation"`
	Object           string         `json:"object"`
	Context          map[string]any `json:"context"`
	ContextualTuples []fgaTuple     `json:"contextual_tuples"`
	TupleSet         int            `json:"tuple_set"`
}

// located is a tuple and where the workload wrote it.
type located struct {
	fgaTuple
	origin string
}

// worldStats counts what builtinWorld stored, for Differences.
type worldStats struct {
	requests  int // inputs that carry relationships (contextual tuples)
	carried   int // distinct relationships they carry, stored before the clock
	total     int // relationships stored in all
	ownInputs int // inputs given objects of their own
	ownRels   int // relationships written for them
}

// builtinWorld reads w's OpenFGA version into a fixture over fam's schema: the stored tuples,
// then every request's contextual tuples once each, then, for a request whose decision another
// request's tuples could change, a copy of its own world under ids of its own.
func builtinWorld(w *workload.Workload, fam builtinFamily) (*Fixture, worldStats, error) {
	var stats worldStats
	text, err := builtinSchemas.ReadFile("builtin/" + fam.schema)
	if err != nil {
		return nil, stats, fmt.Errorf("workload %s: spicedb schema: %w", w.Name, err)
	}
	f := &Fixture{Source: "workload " + w.Name, Schema: string(text), SchemaFile: fam.schema, SchemaLine: 1}
	relations, err := schemaRelations(fam.schema, f.Schema)
	if err != nil {
		return nil, stats, err
	}

	stored, err := storedTuples(w)
	if err != nil {
		return nil, stats, err
	}
	checks := make([]fgaCheck, len(w.Inputs))
	for i, in := range w.Inputs {
		if checks[i], err = inputCheck(w, i, in); err != nil {
			return nil, stats, err
		}
	}

	// The world every request is decided in: the stored tuples and every request's own. A
	// relationship is stored once, so one carried under two conditions cannot be.
	world := make([]located, 0, len(stored))
	inWorld := make(map[string]located, len(stored))
	add := func(t located) error {
		first, ok := inWorld[t.key()]
		switch {
		case !ok:
			inWorld[t.key()] = t
			world = append(world, t)
		case first.condition() != t.condition():
			return fmt.Errorf("%s: %s with condition %s, and %s with %s: SpiceDB stores one relationship",
				t.origin, t.key(), orNone(t.condition()), first.origin, orNone(first.condition()))
		}
		return nil
	}
	for _, t := range stored {
		if err := add(t); err != nil {
			return nil, stats, err
		}
	}
	carried := map[string]bool{}
	for i, c := range checks {
		if len(c.ContextualTuples) > 0 {
			stats.requests++
		}
		for j, t := range c.ContextualTuples {
			carried[t.key()] = true
			if err := add(located{t, fmt.Sprintf("workload %s input %d contextual tuple %d", w.Name, i+1, j+1)}); err != nil {
				return nil, stats, err
			}
		}
	}
	stats.carried = len(carried)

	own := ownWorlds(w.Name, stored, world, checks)
	for i := range checks {
		if o, ok := own[i]; ok {
			stats.ownInputs++
			stats.ownRels += len(o.tuples)
			world = append(world, o.tuples...)
		}
	}
	stats.total = len(world)

	f.Relationships = make([]Relationship, len(world))
	for i, t := range world {
		if f.Relationships[i], err = relationshipOf(t, relations); err != nil {
			return nil, stats, err
		}
	}
	f.Assertions = make([]Assertion, len(checks))
	for i, c := range checks {
		if o, ok := own[i]; ok {
			c = o.ask(i, c)
		}
		if f.Assertions[i], err = assertionOf(w, i, c); err != nil {
			return nil, stats, err
		}
	}
	return f, stats, nil
}

// storedTuples reads the tuples the OpenFGA version stores, one JSON object a line.
func storedTuples(w *workload.Workload) ([]located, error) {
	var out []located
	scanner := bufio.NewScanner(bytes.NewReader(w.OpenFGA.Tuples))
	scanner.Buffer(nil, 1<<20)
	for line := 1; scanner.Scan(); line++ {
		text := bytes.TrimSpace(scanner.Bytes())
		if len(text) == 0 {
			continue
		}
		where := fmt.Sprintf("workload %s tuple line %d", w.Name, line)
		var t fgaTuple
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out = append(out, located{t, where})
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("workload %s tuples: %w", w.Name, err)
	}
	return out, nil
}

// inputCheck reads input i's OpenFGA check.
func inputCheck(w *workload.Workload, i int, in workload.Input) (fgaCheck, error) {
	where := fmt.Sprintf("workload %s input %d", w.Name, i+1)
	var c fgaCheck
	if in.OpenFGA == nil {
		return c, fmt.Errorf("%s: no OpenFGA check to ask SpiceDB", where)
	}
	dec := json.NewDecoder(bytes.NewReader(in.OpenFGA))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("%s: OpenFGA check: %w", where, err)
	}
	if c.TupleSet != 0 {
		// Only a user's store file has tuple sets, and user files have no built-in version.
		return c, fmt.Errorf("%s: tuple set %d: a built-in has one", where, c.TupleSet)
	}
	return c, nil
}

// ownWorlds returns, by input, the relationships of its own world under ids of its own, for
// every input whose decision the relationships other requests carry could change once all are
// stored together.
//
// A tuple can change a decision only if it lies on a path from the checked object to the
// checked user: its object reachable from the checked object, and the user reachable from its
// subject (or its subject the user's type's wildcard). An input is given a world of its own when
// a tuple it does not carry, and the stored world does not hold, lies on such a path in the
// world of every request together. The test is conservative (it ignores which relations a path
// may follow), so it never misses a tuple that would change a decision.
func ownWorlds(workloadName string, stored, world []located, checks []fgaCheck) map[int]ownWorld {
	inStored := make(map[string]bool, len(stored))
	for _, t := range stored {
		inStored[t.key()] = true
	}
	var foreign []located // the tuples only requests carry
	for _, t := range world {
		if !inStored[t.key()] {
			foreign = append(foreign, t)
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	all := newTupleGraph(world)
	storedGraph := newTupleGraph(stored)
	own := map[int]ownWorld{}
	for i, c := range checks {
		carried := make(map[string]bool, len(c.ContextualTuples))
		for _, t := range c.ContextualTuples {
			carried[t.key()] = true
		}
		from := all.reach([]string{c.Object}, all.subjects)
		user := fgaTuple{User: c.User}.subjectNode()
		userType, _, _ := strings.Cut(user, ":")
		to := all.reach([]string{user, userType + ":*"}, all.objects)
		changes := false
		for _, t := range foreign {
			if !carried[t.key()] && from[t.Object] && to[t.subjectNode()] {
				changes = true
				break
			}
		}
		if changes {
			own[i] = ownWorldOf(workloadName, i, c, stored, storedGraph)
		}
	}
	return own
}

// ownWorld is one input's world under ids of its own: the stored tuples and its own, as far as
// its checked object reaches, with every object they reach renamed input<i>-<id>.
type ownWorld struct {
	tuples  []located
	reached map[string]bool // the objects renamed, by their names in the shared world
}

func ownWorldOf(workloadName string, i int, c fgaCheck, stored []located, storedGraph *tupleGraph) ownWorld {
	g := storedGraph.with(c.ContextualTuples)
	o := ownWorld{reached: g.reach([]string{c.Object}, g.subjects)}
	seen := map[string]bool{} // a carried tuple the store holds too is written once
	rename := func(t located) {
		t.Object = o.rename(i, t.Object)
		t.User = o.rename(i, t.User)
		t.origin += fmt.Sprintf(" (input %d's own world)", i+1)
		if !seen[t.key()] {
			seen[t.key()] = true
			o.tuples = append(o.tuples, t)
		}
	}
	for _, t := range stored {
		if o.reached[t.Object] {
			rename(t)
		}
	}
	for j, t := range c.ContextualTuples {
		if o.reached[t.Object] {
			rename(located{t, fmt.Sprintf("workload %s input %d contextual tuple %d", workloadName, i+1, j+1)})
		}
	}
	return o
}

// rename is an object or a subject ("type:id", "type:id#relation") as input i's own world names
// it: renamed if the world reaches it, as it was otherwise (a wildcard, a user no tuple names).
func (o ownWorld) rename(i int, s string) string {
	node, rel, hasRel := strings.Cut(s, "#")
	if !o.reached[node] || strings.HasSuffix(node, ":*") {
		return s
	}
	node = ownID(i, node)
	if hasRel {
		node += "#" + rel
	}
	return node
}

// ask is input i's check asked in its own world.
func (o ownWorld) ask(i int, c fgaCheck) fgaCheck {
	c.Object = o.rename(i, c.Object)
	c.User = o.rename(i, c.User)
	return c
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// ownID is object ("type:id") renamed for input i's own world.
func ownID(i int, object string) string {
	typ, id, _ := strings.Cut(object, ":")
	return fmt.Sprintf("%s:input%d-%s", typ, i+1, id)
}

// tupleGraph links each object to the subjects of its tuples, and back.
type tupleGraph struct {
	subjects map[string][]string // object → the subject nodes of its tuples
	objects  map[string][]string // subject node → the objects of the tuples naming it
}

func newTupleGraph(ts []located) *tupleGraph {
	g := &tupleGraph{subjects: map[string][]string{}, objects: map[string][]string{}}
	for _, t := range ts {
		g.link(t.fgaTuple)
	}
	return g
}

func (g *tupleGraph) link(t fgaTuple) {
	s := t.subjectNode()
	g.subjects[t.Object] = append(g.subjects[t.Object], s)
	g.objects[s] = append(g.objects[s], t.Object)
}

// with is g's links from objects to subjects and those of the tuples ts, g left as it was: what
// ownWorldOf walks.
func (g *tupleGraph) with(ts []fgaTuple) *tupleGraph {
	if len(ts) == 0 {
		return g
	}
	out := &tupleGraph{subjects: make(map[string][]string, len(g.subjects))}
	for k, v := range g.subjects {
		out.subjects[k] = v[:len(v):len(v)] // appends copy, never write into g's
	}
	for _, t := range ts {
		s := t.subjectNode()
		out.subjects[t.Object] = append(out.subjects[t.Object], s)
	}
	return out
}

// reach returns the nodes reachable from start through next, start included.
func (g *tupleGraph) reach(start []string, next map[string][]string) map[string]bool {
	seen := map[string]bool{}
	queue := append([]string(nil), start...)
	for len(queue) > 0 {
		n := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		queue = append(queue, next[n]...)
	}
	return seen
}

// schemaRelations compiles a family's schema and returns, by definition, the names of its
// relations (not its permissions): the names a relationship may be written under.
func schemaRelations(file, schema string) (map[string]map[string]bool, error) {
	compiled, err := compiler.Compile(compiler.InputSchema{Source: input.Source(file), SchemaString: schema}, compiler.AllowUnprefixedObjectType())
	if err != nil {
		return nil, fmt.Errorf("%s: spicedb refuses the schema: %w", file, err)
	}
	out := map[string]map[string]bool{}
	for _, def := range compiled.ObjectDefinitions {
		rels := map[string]bool{}
		for _, r := range def.GetRelation() {
			if r.GetUsersetRewrite() == nil {
				rels[r.GetName()] = true
			}
		}
		out[def.GetName()] = rels
	}
	return out, nil
}

// relationshipOf writes an OpenFGA tuple as a SpiceDB relationship. Every OpenFGA relation keeps
// its name and meaning in the schema; one that OpenFGA both assigns and computes is a permission
// there, and its tuples are written to the relation direct_<name>. A condition becomes the caveat
// of the same name.
func relationshipOf(t located, relations map[string]map[string]bool) (Relationship, error) {
	fail := func(format string, args ...any) (Relationship, error) {
		return Relationship{}, fmt.Errorf("%s: %s: %s", t.origin, t.key(), fmt.Sprintf(format, args...))
	}
	resource, err := objectOf(t.Object)
	if err != nil {
		return fail("%v", err)
	}
	rels, ok := relations[resource.ObjectType]
	if !ok {
		return fail("spicedb's schema has no definition %s", resource.ObjectType)
	}
	switch {
	case rels[t.Relation]:
		resource.Relation = t.Relation
	case rels["direct_"+t.Relation]:
		resource.Relation = "direct_" + t.Relation
	default:
		return fail("spicedb's schema has no relation %s or direct_%s on %s", t.Relation, t.Relation, resource.ObjectType)
	}
	subject, err := subjectOf(t.User)
	if err != nil {
		return fail("%v", err)
	}
	rel := tuple.Relationship{RelationshipReference: tuple.RelationshipReference{Resource: resource, Subject: subject}}
	if c := t.Condition; c != nil {
		ctx, err := structpb.NewStruct(c.Context)
		if err != nil {
			return fail("condition context: %v", err)
		}
		rel.OptionalCaveat = &core.ContextualizedCaveat{CaveatName: c.Name, Context: ctx}
	}
	return Relationship{Rel: rel, Origin: t.origin}, nil
}

// objectOf reads "type:id".
func objectOf(s string) (tuple.ObjectAndRelation, error) {
	typ, id, ok := strings.Cut(s, ":")
	if !ok || typ == "" || id == "" || strings.Contains(id, "#") {
		return tuple.ObjectAndRelation{}, fmt.Errorf("object %q is not type:id", s)
	}
	return tuple.ObjectAndRelation{ObjectType: typ, ObjectID: id}, nil
}

// subjectOf reads "type:id", "type:id#relation" or "type:*".
func subjectOf(s string) (tuple.ObjectAndRelation, error) {
	node, rel, hasRel := strings.Cut(s, "#")
	o, err := objectOf(node)
	if err != nil {
		return o, fmt.Errorf("user %q is not type:id, type:id#relation or type:*", s)
	}
	o.Relation = tuple.Ellipsis
	if hasRel {
		o.Relation = rel
	}
	return o, nil
}

// assertionOf is input i's check as an assertion: OpenFGA's relation is the permission of the
// same name, and the input's expected decision the answer it must get. An input with a world of
// its own (ownWorlds) asks it there.
func assertionOf(w *workload.Workload, i int, c fgaCheck) (Assertion, error) {
	where := fmt.Sprintf("workload %s input %d", w.Name, i+1)
	a := Assertion{Origin: where, Context: c.Context}
	var err error
	if a.Resource, err = objectOf(c.Object); err != nil {
		return a, fmt.Errorf("%s: %w", where, err)
	}
	a.Resource.Relation = c.Relation
	if a.Subject, err = subjectOf(c.User); err != nil {
		return a, fmt.Errorf("%s: %w", where, err)
	}
	switch w.Inputs[i].Expect {
	case workload.ExpectAllow:
		a.Expect = ExpectAllowed
	case workload.ExpectDeny:
		a.Expect = ExpectDenied
	default:
		return a, fmt.Errorf("%s: no expected decision", where)
	}
	return a, nil
}
