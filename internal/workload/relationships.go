package workload

import "fmt"

// The relationship families (nop, rbac, rbac-data-N, docshare-N, gdrive-N, github-N,
// tinytodo-N) also hold their world as relationships, Zanzibar's way: resource#relation@subject.
// This is their form for the relationship engines, written by the family's reference model and
// read by each engine's package, which writes it in its own terms (OpenFGA's model and tuples,
// SpiceDB's schema and relationships). Each family names its types and relations once, here;
// every engine's model of the family defines the same ones, so a relationship means one thing
// in all of them.
//
// A relationship is a comparable value: a world is a set of them, and one change to it (a grant,
// a revocation) is one relationship written or deleted, which each engine sends as its own
// write (an OpenFGA tuple key, a SpiceDB relationship update).

// Object is one object of a relationship world: a type and an id ("document", "doc-0001").
type Object struct{ Type, ID string }

// Subject is who a relationship is with: an object (a user), every member of a relation of an
// object (a userset: the members of group eng, {group eng member}), or every object of a type
// (ID AnyID: every user).
type Subject struct {
	Type, ID string
	// Relation is the userset's relation; empty for the object itself.
	Relation string
}

// AnyID is the id of a subject that stands for every object of its type.
const AnyID = "*"

// Relationship is one edge of a world: Subject has Relation to Resource.
type Relationship struct {
	Resource Object
	Relation string
	Subject  Subject
}

// Obj is the object of type typ called id.
func Obj(typ, id string) Object { return Object{Type: typ, ID: id} }

// Subject is the object itself as a subject.
func (o Object) Subject() Subject { return Subject{Type: o.Type, ID: o.ID} }

// Set is the userset of o's relation: every subject that has relation to o.
func (o Object) Set(relation string) Subject {
	return Subject{Type: o.Type, ID: o.ID, Relation: relation}
}

// Any is every object of type typ as one subject.
func Any(typ string) Subject { return Subject{Type: typ, ID: AnyID} }

// Relate is the relationship subject has relation to resource.
func Relate(resource Object, relation string, subject Subject) Relationship {
	return Relationship{Resource: resource, Relation: relation, Subject: subject}
}

// Node is the object the subject names (the group of a userset), or the wildcard itself: what a
// decision walks to from a relationship's resource.
func (s Subject) Node() Object { return Object{Type: s.Type, ID: s.ID} }

func (o Object) String() string { return o.Type + ":" + o.ID }

func (s Subject) String() string {
	if s.Relation != "" {
		return s.Type + ":" + s.ID + "#" + s.Relation
	}
	return s.Type + ":" + s.ID
}

// String writes the relationship in Zanzibar's notation, for messages:
// "document:doc-1#viewer@group:eng#member".
func (r Relationship) String() string {
	return fmt.Sprintf("%s#%s@%s", r.Resource, r.Relation, r.Subject)
}

// RelationshipCheck is one input as a relationship engine is asked it: does Subject have
// Permission on Resource, with the relationships the request carries, expecting the input's
// decision.
type RelationshipCheck struct {
	Subject    Object
	Permission string
	Resource   Object
	// Carried are the relationships the request brings with it, in the order it brings them
	// (docshare: the entities Rego and Cedar read from the request), the Reads the decision
	// reads first; the world's stored relationships hold the rest. Nil for a request that
	// carries none.
	Carried []Relationship
	Reads   int
}

// RelationshipWorld is a workload's world as relationships (Workload.Relationships).
type RelationshipWorld struct {
	// Family names the types and relations the relationships use, which each engine's model of
	// it defines: "rbac" for rbac and rbac-data-N, "docshare" for every docshare-N.
	Family string
	// Relationships are stored before the clock, in the order written.
	Relationships []Relationship
	// Checks[i] asks what the workload's Inputs[i] asks.
	Checks []RelationshipCheck
}
