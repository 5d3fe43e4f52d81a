package workload

import (
	"encoding/json"
	"fmt"
	"slices"
)

// RBACPolicy is a policy change of rbac's family (Change.Policy): the roles table the policy
// grants after it, the whole of it, for an engine to write its whole policy from (OPA: a
// module holding the table; Cedar: one permit per role and resource type; Casbin: one p rule per
// grant). The world's data (users, their roles, resources) is the workload's, unchanged.
type RBACPolicy struct {
	Roles map[string]map[string][]string
}

// BuiltinPolicyChanges is a built-in family's policy-replacement stream, n changes long, from its
// reference model: each change replaces the policy itself, and every input's decision after it
// is the model's under that policy. rbac's (and rbac-data-N's): change 2j-1 withdraws one grant
// of the roles table (a role loses an action on a resource type), change 2j puts the table back
// whole. Only grants whose withdrawal flips some input's decision are withdrawn, in turn. Changes
// that make the same policy share one RBACPolicy, so an engine writes each policy once.
func BuiltinPolicyChanges(w *Workload, n int) ([]Change, error) {
	d, ok := w.Model.(*RBACData)
	if !ok {
		return nil, fmt.Errorf("workload %s has no built-in policy stream yet (rbac and rbac-data-N have one)", w.Name)
	}
	inputs := make([]RBACInput, len(w.Inputs))
	for i, in := range w.Inputs {
		if q, ok := in.Model.(RBACInput); ok {
			inputs[i] = q
		} else if err := json.Unmarshal(in.JSON, &inputs[i]); err != nil {
			return nil, fmt.Errorf("rbac input %d: %w", i+1, err)
		}
	}
	type withdrawal struct {
		policy *RBACPolicy
		sets   map[int]bool // what withdrawing it sets; putting the table back sets the opposite
		what   string
	}
	var kept []withdrawal
	for _, role := range sortedKeysOf(d.Roles) {
		for _, typ := range sortedKeysOf(d.Roles[role]) {
			for _, act := range d.Roles[role][typ] {
				roles := withoutGrant(d.Roles, role, typ, act)
				m := *d
				m.Roles = roles
				sets := map[int]bool{}
				for i, q := range inputs {
					if w.Inputs[i].Expect == Unverified {
						continue
					}
					before, _ := rbacDecide(d, q)
					if after, _ := rbacDecide(&m, q); after != before {
						sets[i] = after
					}
				}
				if len(sets) > 0 {
					kept = append(kept, withdrawal{&RBACPolicy{Roles: roles}, sets, fmt.Sprintf("withdraw %s's %s on %ss", role, act, typ)})
				}
			}
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("workload %s: no grant of its roles table decides any input: a policy change would flip nothing", w.Name)
	}
	whole := &RBACPolicy{Roles: d.Roles}
	changes := make([]Change, 0, n)
	for k := 0; k < n; k++ {
		g := kept[(k/2)%len(kept)]
		if k%2 == 0 {
			changes = append(changes, Change{Sets: g.sets, What: g.what, Policy: g.policy})
			continue
		}
		back := make(map[int]bool, len(g.sets))
		for i, allow := range g.sets {
			back[i] = !allow
		}
		changes = append(changes, Change{Sets: back, What: "put back the whole roles table (" + g.what[len("withdraw "):] + ")", Policy: whole})
	}
	return changes, nil
}

// withoutGrant is a copy of roles with role's act on typ withdrawn; a type left with no action is
// left out, so no engine writes a grant of nothing.
func withoutGrant(roles map[string]map[string][]string, role, typ, act string) map[string]map[string][]string {
	out := make(map[string]map[string][]string, len(roles))
	for r, byType := range roles {
		out[r] = make(map[string][]string, len(byType))
		for t, acts := range byType {
			if r == role && t == typ {
				acts = slices.DeleteFunc(slices.Clone(acts), func(a string) bool { return a == act })
				if len(acts) == 0 {
					continue
				}
			}
			out[r][t] = acts
		}
	}
	return out
}
