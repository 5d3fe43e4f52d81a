package workload

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
)

func init() {
	register(Spec{
		Name:        "rbac",
		Description: "role-based access with ownership: user, role and resource lookups in data (~200 users, ~500 resources)",
		Build:       buildRBAC,
	})
}

// RBACData is what the reference model of rbac and rbac-data-N decides over; its JSON form is
// the family's data document.
type RBACData struct {
	Users map[string]RBACUser `json:"users"`
	// Roles maps a role to the actions it grants per resource type.
	Roles map[string]map[string][]string `json:"roles"`
	// Resources maps a resource type and id to the resource.
	Resources map[string]map[string]RBACResource `json:"resources"`
}

type RBACUser struct {
	Roles     []string `json:"roles"`
	Suspended bool     `json:"suspended"`
}

type RBACResource struct {
	Owner        string `json:"owner"`
	Confidential bool   `json:"confidential"`
}

// RBACInput is one request of the rbac workloads.
type RBACInput struct {
	User     string          `json:"user"`
	Action   string          `json:"action"`
	Resource RBACResourceRef `json:"resource"`
}

type RBACResourceRef struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// rbacOwnerActions are what an owner may do to their own resource without any role.
var rbacOwnerActions = []string{"read", "write"}

// rbacDecide is the reference model of OPA's rbac.rego, written in Go from the same
// specification rather than translated from any engine's version. The reason names the first check that
// decided.
func rbacDecide(d *RBACData, in RBACInput) (allow bool, reason string) {
	user, ok := d.Users[in.User]
	if !ok {
		return false, "deny: unknown user"
	}
	if user.Suspended {
		return false, "deny: suspended"
	}
	res, ok := d.Resources[in.Resource.Type][in.Resource.ID]
	if !ok {
		return false, "deny: unknown resource"
	}
	if in.Action == "share" && res.Confidential {
		return false, "deny: confidential"
	}
	if slices.Contains(user.Roles, "admin") {
		return true, "allow: admin"
	}
	if res.Owner == in.User && slices.Contains(rbacOwnerActions, in.Action) {
		return true, "allow: owner"
	}
	for _, role := range user.Roles {
		if slices.Contains(d.Roles[role][in.Resource.Type], in.Action) {
			return true, "allow: role"
		}
	}
	return false, "deny: no permission"
}

// rbacTypes are the resource types with how many resources of each the data holds, and the
// prefix of their ids.
var rbacTypes = []struct {
	name, prefix string
	count        int
}{
	{"document", "doc", 200},
	{"folder", "fld", 100},
	{"report", "rep", 120},
	{"dataset", "ds", 80},
}

const rbacUsers = 200

// rbacRoles is the role table of the rbac workloads: what each role may do to each kind of
// resource.
func rbacRoles() map[string]map[string][]string {
	return map[string]map[string][]string{
		// admin is granted everything by the policy itself; it needs no table.
		"admin":   {},
		"viewer":  {"document": {"read"}, "folder": {"read"}},
		"editor":  {"document": {"read", "write"}, "folder": {"read", "write"}},
		"analyst": {"report": {"read", "write"}, "dataset": {"read"}},
		"auditor": {"document": {"read"}, "folder": {"read"}, "report": {"read"}, "dataset": {"read"}},
		"manager": {
			"document": {"read", "write", "delete", "share"},
			"folder":   {"read", "write", "delete"},
			"report":   {"read", "share"},
		},
	}
}

// ordinaryRoles are the roles the rbac workloads hand out at random (admin is given apart).
var ordinaryRoles = []string{"viewer", "editor", "analyst", "auditor", "manager"}

func buildRBAC(seed int64, n int) (*Workload, error) {
	r := rand.New(rand.NewPCG(uint64(seed), 0x72626163)) // "rbac"
	d := &RBACData{
		Users:     map[string]RBACUser{},
		Roles:     rbacRoles(),
		Resources: map[string]map[string]RBACResource{},
	}

	userName := func(i int) string { return fmt.Sprintf("user-%03d", i) }
	for i := range rbacUsers {
		u := RBACUser{Roles: []string{ordinaryRoles[r.IntN(len(ordinaryRoles))]}}
		if r.IntN(3) == 0 {
			second := ordinaryRoles[r.IntN(len(ordinaryRoles))]
			if second != u.Roles[0] {
				u.Roles = append(u.Roles, second)
			}
		}
		if r.IntN(50) == 0 {
			u.Roles = append(u.Roles, "admin")
		}
		u.Suspended = r.IntN(20) == 0
		d.Users[userName(i)] = u
	}

	// owned lists, per user, the resources they own, so inputs can exercise the owner rule.
	owned := make([][]RBACResourceRef, rbacUsers)
	var all []RBACResourceRef
	for _, t := range rbacTypes {
		d.Resources[t.name] = map[string]RBACResource{}
		for i := range t.count {
			ref := RBACResourceRef{Type: t.name, ID: fmt.Sprintf("%s-%04d", t.prefix, i)}
			owner := r.IntN(rbacUsers)
			d.Resources[t.name][ref.ID] = RBACResource{
				Owner:        userName(owner),
				Confidential: r.IntN(7) == 0,
			}
			owned[owner] = append(owned[owner], ref)
			all = append(all, ref)
		}
	}

	w := &Workload{
		Name:        "rbac",
		Description: builtins["rbac"].Description,
		Model:       d,
	}
	for range n {
		var in RBACInput
		userIdx := r.IntN(rbacUsers)
		in.User = userName(userIdx)
		if r.IntN(25) == 0 {
			// Someone the directory does not know, numbered past the real users.
			in.User = userName(rbacUsers + r.IntN(100))
		}
		switch p := r.IntN(100); {
		case p < 4:
			in.Resource = unknownResource(r)
		case p < 34 && len(owned[userIdx]) > 0:
			in.Resource = owned[userIdx][r.IntN(len(owned[userIdx]))]
		default:
			in.Resource = all[r.IntN(len(all))]
		}
		in.Action = rbacAction(r)
		w.Inputs = append(w.Inputs, rbacDecided(d, in))
	}
	w.Relationships = rbacWorld(d, w.Inputs)
	return w, nil
}

// rbacAction is a request's action, drawn with the rbac workloads' mix: half reads, a quarter
// writes, then deletes and shares.
func rbacAction(r *rand.Rand) string {
	switch p := r.IntN(100); {
	case p < 50:
		return "read"
	case p < 75:
		return "write"
	case p < 88:
		return "delete"
	default:
		return "share"
	}
}

// unknownResource names a resource of a known type that the data does not hold.
func unknownResource(r *rand.Rand) RBACResourceRef {
	t := rbacTypes[r.IntN(len(rbacTypes))]
	return RBACResourceRef{Type: t.name, ID: fmt.Sprintf("%s-%04d", t.prefix, t.count+r.IntN(1000))}
}

// rbacDecided is in with the decision the reference model gives it, in every engine's form.
func rbacDecided(d *RBACData, in RBACInput) Input {
	allow, reason := rbacDecide(d, in)
	return Input{JSON: mustJSON(in), Expect: expectOf(allow), Reason: reason, Model: in}
}

// Decide is the reference model's decision of in, and the rule that made it.
func (d *RBACData) Decide(in RBACInput) (allow bool, reason string) { return rbacDecide(d, in) }
