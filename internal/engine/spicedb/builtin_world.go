package spicedb

import (
	"fmt"

	"github.com/authzed/spicedb/pkg/schemadsl/compiler"
	"github.com/authzed/spicedb/pkg/schemadsl/input"
	"github.com/authzed/spicedb/pkg/tuple"

	"github.com/authzbench/authzbench/internal/workload"
)

// located is a relationship and where the workload wrote it.
type located struct {
	workload.Relationship
	origin string
}

// subjectNode is the object the relationship's subject names ("group:eng" for the members of
// group eng), or the wildcard itself ("user:*"): what a decision walks to from its resource.
func subjectNode(r workload.Relationship) string { return r.Subject.Node().String() }

// worldStats counts what builtinWorld stored, for Differences.
type worldStats struct {
	requests  int // inputs that carry relationships (contextual tuples)
	carried   int // distinct relationships they carry, stored before the clock
	total     int // relationships stored in all
	ownInputs int // inputs given objects of their own
	ownRels   int // relationships written for them
}

// builtinWorld writes w's relationship world into a fixture over fam's schema: the stored
// relationships, then every request's carried ones once each, then, for a request whose
// decision another request's relationships could change, a copy of its own world under ids of
// its own.
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
	rw := w.Relationships
	// Inputs cut to their first n (a test's, a verify of the first inputs) keep the world's
	// checks: the first n are theirs.
	if len(rw.Checks) < len(w.Inputs) {
		return nil, stats, fmt.Errorf("workload %s: %d relationship checks for %d inputs", w.Name, len(rw.Checks), len(w.Inputs))
	}
	checks := rw.Checks[:len(w.Inputs)]
	stored := make([]located, len(rw.Relationships))
	for i, r := range rw.Relationships {
		stored[i] = located{r, fmt.Sprintf("workload %s relationship %d", w.Name, i+1)}
	}

	// The world every request is decided in: the stored relationships and every request's own,
	// each once.
	world := make([]located, 0, len(stored))
	inWorld := make(map[workload.Relationship]bool, len(stored))
	add := func(t located) {
		if !inWorld[t.Relationship] {
			inWorld[t.Relationship] = true
			world = append(world, t)
		}
	}
	for _, t := range stored {
		add(t)
	}
	carried := map[workload.Relationship]bool{}
	for i, c := range checks {
		if len(c.Carried) > 0 {
			stats.requests++
		}
		for j, r := range c.Carried {
			carried[r] = true
			add(located{r, fmt.Sprintf("workload %s input %d carried relationship %d", w.Name, i+1, j+1)})
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
func ownWorlds(workloadName string, stored, world []located, checks []workload.RelationshipCheck) map[int]ownWorld {
	inStored := make(map[workload.Relationship]bool, len(stored))
	for _, t := range stored {
		inStored[t.Relationship] = true
	}
	var foreign []located // the relationships only requests carry
	for _, t := range world {
		if !inStored[t.Relationship] {
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
		carried := make(map[workload.Relationship]bool, len(c.Carried))
		for _, r := range c.Carried {
			carried[r] = true
		}
		from := all.reach([]string{c.Resource.String()}, all.subjects)
		to := all.reach([]string{c.Subject.String(), workload.Any(c.Subject.Type).String()}, all.objects)
		changes := false
		for _, t := range foreign {
			if !carried[t.Relationship] && from[t.Resource.String()] && to[subjectNode(t.Relationship)] {
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

// ownWorld is one input's world under ids of its own: the stored relationships and its own, as
// far as its checked resource reaches, with every object they reach renamed input<i>-<id>.
type ownWorld struct {
	tuples  []located
	reached map[string]bool // the objects renamed, by their names in the shared world
}

func ownWorldOf(workloadName string, i int, c workload.RelationshipCheck, stored []located, storedGraph *tupleGraph) ownWorld {
	g := storedGraph.with(c.Carried)
	o := ownWorld{reached: g.reach([]string{c.Resource.String()}, g.subjects)}
	seen := map[workload.Relationship]bool{} // a carried relationship the store holds too is written once
	rename := func(t located) {
		t.Resource = o.object(i, t.Resource)
		t.Subject = o.subject(i, t.Subject)
		t.origin += fmt.Sprintf(" (input %d's own world)", i+1)
		if !seen[t.Relationship] {
			seen[t.Relationship] = true
			o.tuples = append(o.tuples, t)
		}
	}
	for _, t := range stored {
		if o.reached[t.Resource.String()] {
			rename(t)
		}
	}
	for j, r := range c.Carried {
		if o.reached[r.Resource.String()] {
			rename(located{r, fmt.Sprintf("workload %s input %d carried relationship %d", workloadName, i+1, j+1)})
		}
	}
	return o
}

// object is an object as input i's own world names it: renamed if the world reaches it, as it
// was otherwise (a user no relationship names).
func (o ownWorld) object(i int, x workload.Object) workload.Object {
	if !o.reached[x.String()] || x.ID == workload.AnyID {
		return x
	}
	return workload.Obj(x.Type, fmt.Sprintf("input%d-%s", i+1, x.ID))
}

// subject is a subject as input i's own world names it: its object renamed as object renames
// it, its relation kept; a wildcard stays a wildcard.
func (o ownWorld) subject(i int, s workload.Subject) workload.Subject {
	node := o.object(i, s.Node())
	return workload.Subject{Type: node.Type, ID: node.ID, Relation: s.Relation}
}

// ask is input i's check asked in its own world.
func (o ownWorld) ask(i int, c workload.RelationshipCheck) workload.RelationshipCheck {
	c.Resource = o.object(i, c.Resource)
	c.Subject = o.object(i, c.Subject)
	return c
}

// tupleGraph links each object to the subjects of its relationships, and back.
type tupleGraph struct {
	subjects map[string][]string // object → the subject nodes of its relationships
	objects  map[string][]string // subject node → the objects of the relationships naming it
}

func newTupleGraph(ts []located) *tupleGraph {
	g := &tupleGraph{subjects: map[string][]string{}, objects: map[string][]string{}}
	for _, t := range ts {
		g.link(t.Relationship)
	}
	return g
}

func (g *tupleGraph) link(r workload.Relationship) {
	s, object := subjectNode(r), r.Resource.String()
	g.subjects[object] = append(g.subjects[object], s)
	g.objects[s] = append(g.objects[s], object)
}

// with is g's links from objects to subjects and those of the relationships rs, g left as it
// was: what ownWorldOf walks.
func (g *tupleGraph) with(rs []workload.Relationship) *tupleGraph {
	if len(rs) == 0 {
		return g
	}
	out := &tupleGraph{subjects: make(map[string][]string, len(g.subjects))}
	for k, v := range g.subjects {
		out.subjects[k] = v[:len(v):len(v)] // appends copy, never write into g's
	}
	for _, r := range rs {
		object := r.Resource.String()
		out.subjects[object] = append(out.subjects[object], subjectNode(r))
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

// relationshipOf writes a relationship in SpiceDB's terms. Every relation of the family keeps
// its name and meaning in the schema; one that the family both assigns and computes is a
// permission there, and its relationships are written to the relation direct_<name>.
func relationshipOf(t located, relations map[string]map[string]bool) (Relationship, error) {
	fail := func(format string, args ...any) (Relationship, error) {
		return Relationship{}, fmt.Errorf("%s: %s: %s", t.origin, t.Relationship, fmt.Sprintf(format, args...))
	}
	resource := tuple.ObjectAndRelation{ObjectType: t.Resource.Type, ObjectID: t.Resource.ID}
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
	rel := tuple.Relationship{RelationshipReference: tuple.RelationshipReference{Resource: resource, Subject: subjectOf(t.Subject)}}
	return Relationship{Rel: rel, Origin: t.origin}, nil
}

// subjectOf is a subject in SpiceDB's terms: an object with "..." as its relation (or the
// wildcard, "user:*"), or a subject set, "group:eng#member".
func subjectOf(s workload.Subject) tuple.ObjectAndRelation {
	o := tuple.ObjectAndRelation{ObjectType: s.Type, ObjectID: s.ID, Relation: tuple.Ellipsis}
	if s.Relation != "" {
		o.Relation = s.Relation
	}
	return o
}

// assertionOf is input i's check as an assertion: the family's permission is the permission of
// the same name, and the input's expected decision the answer it must get. An input with a
// world of its own (ownWorlds) asks it there.
func assertionOf(w *workload.Workload, i int, c workload.RelationshipCheck) (Assertion, error) {
	where := fmt.Sprintf("workload %s input %d", w.Name, i+1)
	a := Assertion{Origin: where,
		Resource: tuple.ObjectAndRelation{ObjectType: c.Resource.Type, ObjectID: c.Resource.ID, Relation: c.Permission},
		Subject:  subjectOf(c.Subject.Subject())}
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
