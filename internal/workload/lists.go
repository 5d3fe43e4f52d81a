package workload

import (
	"fmt"
	"slices"
)

// A list query asks a relationship engine for a whole set at once: every object of a type a
// subject has a permission on (OpenFGA's ListObjects, SpiceDB's LookupResources), or every
// subject of a type with a permission on an object (OpenFGA's ListUsers, SpiceDB's
// LookupSubjects). Its expected answer is the family's reference model asked about every object,
// or every subject, of that type, before the clock, so that judging an answer is a comparison
// of two sets.

// ListOf is what a list query lists.
type ListOf uint8

const (
	// Objects: every object of ResourceType Subject has Permission on.
	Objects ListOf = iota
	// Subjects: every subject of SubjectType with Permission on Resource.
	Subjects
)

// ListQuery is one list question and the reference model's answer to it.
type ListQuery struct {
	Of         ListOf
	Permission string
	// Objects: who asks, and the type listed.
	Subject      Object
	ResourceType string
	// Subjects: of what, and the type listed.
	Resource    Object
	SubjectType string
	// Expected are the objects or subjects listed (type:id, as Object.String writes them),
	// sorted.
	Expected []string
}

// String names the query as messages do: "user:user-001 can_read resource:*", or
// "user:* can_read resource:document-doc-0001".
func (q *ListQuery) String() string {
	if q.Of == Subjects {
		return fmt.Sprintf("%s:* %s %s", q.SubjectType, q.Permission, q.Resource)
	}
	return fmt.Sprintf("%s %s %s:*", q.Subject, q.Permission, q.ResourceType)
}

// ListQueries are the list queries of w's inputs: Queries[ByInput[i]] asks, of input i's subject
// and permission, every object of its resource's type (Objects), or, of its resource and
// permission, every subject of its subject's type (Subjects). Inputs that ask the same share one
// query.
type ListQueries struct {
	Queries []ListQuery
	ByInput []int
}

// Query is the list query input i asks.
func (l *ListQueries) Query(i int) *ListQuery { return &l.Queries[l.ByInput[i]] }

// ListQueriesOf builds the list queries of w, of objects or of subjects, from its family's
// reference model; an error says when the family has none yet.
func ListQueriesOf(w *Workload, of ListOf) (*ListQueries, error) {
	if d, ok := w.Model.(*RBACData); ok && w.Relationships != nil {
		if of == Subjects {
			return rbacUserLists(d, w)
		}
		return rbacLists(d, w)
	}
	return nil, fmt.Errorf("workload %s has no list queries yet: rbac and rbac-data-N have them (every resource a user may act on, every user who may act on a resource), from their reference model", w.Name)
}

// rbacLists asks, for each user and action the inputs ask, every resource the user may so act
// on. rbac's resources are all of one type in the relationship world (resource, the kind in
// the id), so each answer spans every kind.
func rbacLists(d *RBACData, w *Workload) (*ListQueries, error) {
	type key struct{ user, action string }
	seen := map[key]int{}
	l := &ListQueries{ByInput: make([]int, len(w.Inputs))}
	for i, in := range w.Inputs {
		q, ok := in.Model.(RBACInput)
		if !ok {
			return nil, fmt.Errorf("workload %s: input %d is not an rbac request", w.Name, i+1)
		}
		k := key{q.User, q.Action}
		n, ok := seen[k]
		if !ok {
			c := rbacCheck(q)
			lq := ListQuery{Subject: c.Subject, Permission: c.Permission, ResourceType: c.Resource.Type, Expected: []string{}}
			for _, typ := range sortedKeysOf(d.Resources) {
				for _, id := range sortedKeysOf(d.Resources[typ]) {
					if allow, _ := rbacDecide(d, RBACInput{User: q.User, Action: q.Action, Resource: RBACResourceRef{Type: typ, ID: id}}); allow {
						lq.Expected = append(lq.Expected, rbacObject(typ, id).String())
					}
				}
			}
			slices.Sort(lq.Expected)
			n = len(l.Queries)
			seen[k] = n
			l.Queries = append(l.Queries, lq)
		}
		l.ByInput[i] = n
	}
	return l, nil
}

// rbacUserLists asks, for each resource and action the inputs ask, every user of the directory
// who may so act on it: users the directory does not know have no relationships, and no engine
// can name them.
func rbacUserLists(d *RBACData, w *Workload) (*ListQueries, error) {
	type key struct{ typ, id, action string }
	seen := map[key]int{}
	users := sortedKeysOf(d.Users)
	l := &ListQueries{ByInput: make([]int, len(w.Inputs))}
	for i, in := range w.Inputs {
		q, ok := in.Model.(RBACInput)
		if !ok {
			return nil, fmt.Errorf("workload %s: input %d is not an rbac request", w.Name, i+1)
		}
		k := key{q.Resource.Type, q.Resource.ID, q.Action}
		n, ok := seen[k]
		if !ok {
			c := rbacCheck(q)
			lq := ListQuery{Of: Subjects, Resource: c.Resource, Permission: c.Permission, SubjectType: c.Subject.Type, Expected: []string{}}
			for _, u := range users {
				if allow, _ := rbacDecide(d, RBACInput{User: u, Action: q.Action, Resource: q.Resource}); allow {
					lq.Expected = append(lq.Expected, Obj(c.Subject.Type, u).String())
				}
			}
			n = len(l.Queries)
			seen[k] = n
			l.Queries = append(l.Queries, lq)
		}
		l.ByInput[i] = n
	}
	return l, nil
}

// OwnedOnly finds a list query of objects, in an rbac-data world, whose subject reads one object
// only as its owner (no role of theirs grants reading its kind): deleting that owner
// relationship takes exactly that object out of the answer, which is how a test makes an
// engine's answer miss one object. It returns the query's number and the object; ok is false
// when no query has one.
func (l *ListQueries) OwnedOnly(w *Workload) (n int, object string, ok bool) {
	d, isRBAC := w.Model.(*RBACData)
	if !isRBAC {
		return 0, "", false
	}
	for n := range l.Queries {
		q := &l.Queries[n]
		if q.Permission != "can_read" {
			continue
		}
		user := d.Users[q.Subject.ID]
		for typ, byID := range d.Resources {
			granted := false
			for _, role := range user.Roles {
				granted = granted || role == "admin" || slices.Contains(d.Roles[role][typ], "read")
			}
			if granted {
				continue
			}
			for id, res := range byID {
				if o := "resource:" + typ + "-" + id; res.Owner == q.Subject.ID && slices.Contains(q.Expected, o) {
					return n, o, true
				}
			}
		}
	}
	return 0, "", false
}
