package workload

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// Change is one change of a built-in family's world, as its reference model makes it: a JSON
// Patch (RFC 6902) of the workload's data document, and the decisions it sets, by input
// number (0-based), for the inputs whose decision it changes. An engine's package turns it into
// its own write (engine.Writer): OPA applies the patch to its data as it is; an engine whose
// data is of another form writes what the patch means in it.
type Change struct {
	Patch json.RawMessage
	Sets  map[int]bool
	// What says what the change does, for messages: "revoke editor from u-0007".
	What string
	// Writes and Deletes are the change as relationships, for a family whose world is
	// relationships too (changes_rel.go): what a relationship engine writes and deletes.
	Writes, Deletes []Relationship
	// Policy, for a change of the policy itself rather than of the world's data, is the policy
	// after it in the family's terms (RBACPolicy), which an engine writes whole in its own
	// language; Patch is then empty. Changes that make the same policy share one value.
	Policy any
}

// BuiltinChanges is the change stream of a built-in family, n changes long, from its
// reference model: every input's decision after each change is the model's. An error says
// when the workload's family has no stream yet.
func BuiltinChanges(w *Workload, n int) ([]Change, error) {
	if d, ok := w.Model.(*RBACData); ok {
		cs, err := rbacChanges(d, w.Inputs, n)
		return withRBACRelationships(d, cs, err)
	}
	if cs, ok, err := relationshipChanges(w, n); ok {
		return cs, err
	}
	return nil, fmt.Errorf("workload %s has no built-in change stream yet (rbac, rbac-data-N, gdrive-N, github-N and tinytodo-N have one)", w.Name)
}

// rbacChanges revokes and grants back roles: change 2j-1 revokes a role from a user some
// inputs ask about, change 2j grants it back, each flipping the decisions of that user's
// inputs that the role decided.
func rbacChanges(base *RBACData, inputs []Input, n int) ([]Change, error) {
	users := map[string][]int{}
	var order []string
	for i, in := range inputs {
		var q RBACInput
		if err := json.Unmarshal(in.JSON, &q); err != nil {
			return nil, fmt.Errorf("rbac input %d: %w", i+1, err)
		}
		if u, ok := base.Users[q.User]; !ok || len(u.Roles) == 0 {
			continue
		}
		if users[q.User] == nil {
			order = append(order, q.User)
		}
		users[q.User] = append(users[q.User], i)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("no input asks about a user with a role: nothing to grant or revoke")
	}
	sort.Strings(order)
	// Only the users' roles change: a copy of them is the model's state.
	roles := map[string][]string{}
	for name, u := range base.Users {
		roles[name] = slices.Clone(u.Roles)
	}
	model := *base
	decide := func(i int) bool {
		var q RBACInput
		_ = json.Unmarshal(inputs[i].JSON, &q)
		users := make(map[string]RBACUser, 1)
		u := base.Users[q.User]
		u.Roles = roles[q.User]
		users[q.User] = u
		m := model
		m.Users = users
		allow, _ := rbacDecide(&m, q)
		return allow
	}
	changes := make([]Change, 0, n)
	for k := 0; k < n; k++ {
		user := order[(k/2)%len(order)]
		had := base.Users[user].Roles
		role := had[(k/2/len(order))%len(had)]
		what := "revoke " + role + " from " + user
		if k%2 == 0 {
			roles[user] = slices.DeleteFunc(slices.Clone(had), func(r string) bool { return r == role })
		} else {
			roles[user] = slices.Clone(had)
			what = "grant " + role + " to " + user
		}
		patch, err := json.Marshal([]map[string]any{{"op": "replace", "path": "/rbac/users/" + pointerToken(user) + "/roles", "value": roles[user]}})
		if err != nil {
			return nil, err
		}
		sets := map[int]bool{}
		for _, i := range users[user] {
			if inputs[i].Expect != Unverified {
				sets[i] = decide(i)
			}
		}
		changes = append(changes, Change{Patch: patch, Sets: sets, What: what})
	}
	return changes, nil
}

// pointerToken escapes a JSON Pointer token.
func pointerToken(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}
