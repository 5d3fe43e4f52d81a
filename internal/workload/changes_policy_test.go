package workload

import (
	"slices"
	"testing"
)

// rbac's policy stream: each change's policy is the roles table with one grant withdrawn, then
// the whole table back; every input's decision after each change is the reference model's under
// that change's policy, each change flips some input, and every other change puts every input
// back to its version-0 decision. The withdrawals take turns over the grants that decide some
// input, and the same policy is one value, written once by each engine.
func TestRBACPolicyChanges(t *testing.T) {
	for _, name := range []string{"rbac", "rbac-data-1000"} {
		t.Run(name, func(t *testing.T) {
			w, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			d := w.Model.(*RBACData)
			cs, err := BuiltinPolicyChanges(w, 60)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 60 {
				t.Fatalf("%d changes, want 60", len(cs))
			}
			now := make([]bool, len(w.Inputs))
			for i, in := range w.Inputs {
				now[i] = in.Expect == ExpectAllow
			}
			withdrawn := map[string]bool{}
			policies := map[*RBACPolicy]bool{}
			for k, c := range cs {
				p, ok := c.Policy.(*RBACPolicy)
				if !ok || c.Patch != nil || len(c.Sets) == 0 {
					t.Fatalf("change %d (%s): policy %T, patch %s, %d set: want a policy that flips some input", k+1, c.What, c.Policy, c.Patch, len(c.Sets))
				}
				policies[p] = true
				grants := 0
				for role, byType := range p.Roles {
					for typ, acts := range byType {
						for _, a := range acts {
							grants++
							if !slices.Contains(d.Roles[role][typ], a) {
								t.Fatalf("change %d grants %s's %s on %s, which the workload's table does not", k+1, role, a, typ)
							}
						}
					}
				}
				for i, allow := range c.Sets {
					if allow == now[i] {
						t.Errorf("change %d (%s) sets input %d to %v, which it already was", k+1, c.What, i+1, allow)
					}
					now[i] = allow
				}
				m := *d
				m.Roles = p.Roles
				for i, in := range w.Inputs {
					if in.Expect == Unverified {
						continue
					}
					if want, _ := m.Decide(in.Model.(RBACInput)); now[i] != want {
						t.Fatalf("after change %d (%s), input %d is %v; the model says %v", k+1, c.What, i+1, now[i], want)
					}
				}
				full := 0
				for _, byType := range d.Roles {
					for _, acts := range byType {
						full += len(acts)
					}
				}
				switch {
				case k%2 == 0 && grants != full-1:
					t.Fatalf("change %d (%s) grants %d of %d: want one withdrawn", k+1, c.What, grants, full)
				case k%2 == 1 && grants != full:
					t.Fatalf("change %d (%s) grants %d of %d: want the whole table back", k+1, c.What, grants, full)
				}
				if k%2 == 0 {
					withdrawn[c.What] = true
				}
			}
			if len(withdrawn) < 5 {
				t.Errorf("%d grants withdrawn over 30 withdrawals: want them to take turns", len(withdrawn))
			}
			if len(policies) > len(withdrawn)+1 {
				t.Errorf("%d policy values for %d withdrawals and the whole table: each policy should be one value", len(policies), len(withdrawn))
			}
		})
	}
	if _, err := BuiltinPolicyChanges(&Workload{Name: "nop"}, 1); err == nil {
		t.Error("a family without a policy stream gave one")
	}
}
