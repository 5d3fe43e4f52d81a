package workload

import (
	"testing"
)

func TestRBACMatchesReferenceModel(t *testing.T) {
	w, err := buildRBAC(DefaultSeed, 500)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "rbac" || w.Description == "" {
		t.Errorf("workload identity: name %q, description %q", w.Name, w.Description)
	}
	reasons := checkInputs(t, w)
	if len(reasons) < 3 {
		t.Errorf("denies come from %d reasons %v; want at least 3", len(reasons), reasons)
	}
}

func TestRBACDecide(t *testing.T) {
	d := &RBACData{
		Users: map[string]RBACUser{
			"ann":  {Roles: []string{"viewer"}},
			"bob":  {Roles: []string{"editor", "analyst"}},
			"cat":  {Roles: []string{"viewer", "admin"}},
			"dan":  {Roles: []string{"manager"}, Suspended: true},
			"eve":  {Roles: []string{"viewer"}},
			"finn": {Roles: nil},
		},
		Roles: map[string]map[string][]string{
			"admin":   {},
			"viewer":  {"document": {"read"}},
			"editor":  {"document": {"read", "write"}},
			"analyst": {"report": {"read"}},
			"manager": {"document": {"read", "write", "delete", "share"}},
		},
		Resources: map[string]map[string]RBACResource{
			"document": {
				"d1": {Owner: "eve"},
				"d2": {Owner: "ann", Confidential: true},
			},
			"report": {"r1": {Owner: "eve"}},
		},
	}
	doc := func(id string) RBACResourceRef { return RBACResourceRef{Type: "document", ID: id} }
	tests := []handCase[RBACInput]{
		{"viewer reads a document", RBACInput{"ann", "read", doc("d1")}, true, "allow: role"},
		{"viewer may not write", RBACInput{"ann", "write", doc("d1")}, false, "deny: no permission"},
		{"second role grants", RBACInput{"bob", "read", RBACResourceRef{"report", "r1"}}, true, "allow: role"},
		{"role on another type does not leak", RBACInput{"ann", "read", RBACResourceRef{"report", "r1"}}, false, "deny: no permission"},
		{"owner writes without a write role", RBACInput{"eve", "write", doc("d1")}, true, "allow: owner"},
		{"owner may not delete without a role", RBACInput{"eve", "delete", doc("d1")}, false, "deny: no permission"},
		{"user without roles owns nothing here", RBACInput{"finn", "read", doc("d1")}, false, "deny: no permission"},
		{"admin deletes anything", RBACInput{"cat", "delete", doc("d1")}, true, "allow: admin"},
		{"suspended manager is denied", RBACInput{"dan", "read", doc("d1")}, false, "deny: suspended"},
		{"unknown user", RBACInput{"zed", "read", doc("d1")}, false, "deny: unknown user"},
		{"unknown resource", RBACInput{"cat", "read", doc("d9")}, false, "deny: unknown resource"},
		{"unknown type", RBACInput{"cat", "read", RBACResourceRef{"printer", "d1"}}, false, "deny: unknown resource"},
		{"confidential is never shared, even by an admin", RBACInput{"cat", "share", doc("d2")}, false, "deny: confidential"},
		{"confidential may still be read by its owner", RBACInput{"ann", "read", doc("d2")}, true, "allow: owner"},
	}
	w := &Workload{Name: "rbac", Model: d}
	checkHandCases(t, w, tests, func(in RBACInput) (bool, string) { return rbacDecide(d, in) })
}
