package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The data-size family, rbac-data-<N>: the rbac workload's policy and roles over a directory of
// N users, to see how latency and the engine's memory grow with the data it decides over, when
// the policy stays the same. In Rego the users are data (data.rbac.users); in Cedar they are
// entities, each a member of its roles; in OpenFGA, tuples (each role's assignees).
//
// Only the directory grows: the resources (500) and the roles table stay rbac's, and the inputs
// keep the same mix at every N (a third ask about the caller's own resource, a few name an
// unknown user or resource), so the decisions' work differs only in what the lookups search.

// MinDataUsers and MaxDataUsers bound the N of rbac-data-<N>.
const (
	MinDataUsers = 10
	MaxDataUsers = 10_000_000
)

const rbacDataPattern = "rbac-data-<N>"

func init() {
	registerFamily(family{
		Prefix:  "rbac-data-",
		Pattern: rbacDataPattern,
		Description: fmt.Sprintf("the rbac policy over N users (%d to %d), as data in Rego, entities in Cedar and tuples in OpenFGA; 500 resources and rbac's roles at every N",
			MinDataUsers, MaxDataUsers),
		Build: buildRBACData,
	})
}

func buildRBACData(name string, seed int64, inputs int) (*Workload, error) {
	users, err := sizeOf(name, strings.TrimPrefix(name, "rbac-data-"), rbacDataPattern, MinDataUsers, MaxDataUsers)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x726264617461)) // "rbdata"
	userName := func(i int) string { return fmt.Sprintf("user-%07d", i) }
	d := &RBACData{
		Users:     make(map[string]RBACUser, users),
		Roles:     rbacRoles(),
		Resources: map[string]map[string]RBACResource{},
	}
	for i := range users {
		u := RBACUser{Roles: []string{ordinaryRoles[r.IntN(len(ordinaryRoles))]}}
		if r.IntN(3) == 0 {
			if second := ordinaryRoles[r.IntN(len(ordinaryRoles))]; second != u.Roles[0] {
				u.Roles = append(u.Roles, second)
			}
		}
		if r.IntN(50) == 0 {
			u.Roles = append(u.Roles, "admin")
		}
		u.Suspended = r.IntN(20) == 0
		d.Users[userName(i)] = u
	}
	var all []RBACResourceRef
	for _, t := range rbacTypes {
		d.Resources[t.name] = map[string]RBACResource{}
		for i := range t.count {
			ref := RBACResourceRef{Type: t.name, ID: fmt.Sprintf("%s-%04d", t.prefix, i)}
			d.Resources[t.name][ref.ID] = RBACResource{Owner: userName(r.IntN(users)), Confidential: r.IntN(7) == 0}
			all = append(all, ref)
		}
	}

	w := &Workload{
		Name: name,
		Description: fmt.Sprintf("the rbac policy over %d users (data in Rego, entities in Cedar, tuples in OpenFGA), %d resources",
			users, len(all)),
		Scale: &Scale{Family: "rbac-data", Param: "users", N: users},
		Model: d,
	}
	for range inputs {
		var in RBACInput
		in.Resource = all[r.IntN(len(all))]
		switch p := r.IntN(100); {
		case p < 30:
			// The caller's own resource: its owner is whoever the data says, at any N.
			in.User = d.Resources[in.Resource.Type][in.Resource.ID].Owner
		case p < 34:
			in.User = userName(users + r.IntN(100)) // someone the directory does not know
		default:
			in.User = userName(r.IntN(users))
		}
		if r.IntN(25) == 0 {
			in.Resource = unknownResource(r)
		}
		in.Action = rbacAction(r)
		w.Inputs = append(w.Inputs, rbacDecided(d, in))
	}
	w.Relationships = rbacWorld(d, w.Inputs)
	return w, nil
}
