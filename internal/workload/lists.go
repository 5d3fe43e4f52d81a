package workload

import (
	"fmt"
	"slices"
)

// A list query asks a relationship engine for a whole set at once (OpenFGA's ListObjects,
// SpiceDB's LookupResources): every object of a type a subject has a permission on. Its expected
// answer is the family's reference model asked about every object of that type, before the
// clock, so that judging an answer is a comparison of two sorted sets.

// ListQuery is one list question and the reference model's answer to it.
type ListQuery struct {
	Subject      Object
	Permission   string
	ResourceType string
	// Expected are the objects (type:id, as Object.String writes them) the subject has the
	// permission on, sorted.
	Expected []string
}

// String names the query as messages do: "user:user-001 can_read resource:*".
func (q *ListQuery) String() string {
	return fmt.Sprintf("%s %s %s:*", q.Subject, q.Permission, q.ResourceType)
}

// ListQueries are the list queries of w's inputs: Queries[ByInput[i]] asks, of input i's subject
// and permission, every object of its resource's type. Inputs that ask the same subject and
// permission share one query.
type ListQueries struct {
	Queries []ListQuery
	ByInput []int
}

// Query is the list query input i asks.
func (l *ListQueries) Query(i int) *ListQuery { return &l.Queries[l.ByInput[i]] }

// ListQueriesOf builds the list queries of w from its family's reference model; an error says
// when the family has none yet.
func ListQueriesOf(w *Workload) (*ListQueries, error) {
	if d, ok := w.Model.(*RBACData); ok && w.Relationships != nil {
		return rbacLists(d, w)
	}
	return nil, fmt.Errorf("workload %s has no list queries yet: rbac and rbac-data-N have them (every resource a user may act on), from their reference model", w.Name)
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
