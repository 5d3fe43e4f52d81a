package workload

import (
	"testing"
)

func TestRBACMatchesReferenceModel(t *testing.T) {
	w, err := buildRBAC(DefaultSeed, 500)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "rbac" || w.Query != "data.authzbench.rbac.allow" || w.Description == "" {
		t.Errorf("workload identity: name %q, query %q, description %q", w.Name, w.Query, w.Description)
	}
	reasons := checkAgainstOPA(t, w)
	if len(reasons) < 3 {
		t.Errorf("denies come from %d reasons %v; want at least 3", len(reasons), reasons)
	}
}

func TestRBACDecide(t *testing.T) {
	d := &rbacData{
		Users: map[string]rbacUser{
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
		Resources: map[string]map[string]rbacResource{
			"document": {
				"d1": {Owner: "eve"},
				"d2": {Owner: "ann", Confidential: true},
			},
			"report": {"r1": {Owner: "eve"}},
		},
	}
	doc := func(id string) rbacResourceRef { return rbacResourceRef{Type: "document", ID: id} }
	tests := []handCase[rbacInput]{
		{"viewer reads a document", rbacInput{"ann", "read", doc("d1")}, true, "allow: role"},
		{"viewer may not write", rbacInput{"ann", "write", doc("d1")}, false, "deny: no permission"},
		{"second role grants", rbacInput{"bob", "read", rbacResourceRef{"report", "r1"}}, true, "allow: role"},
		{"role on another type does not leak", rbacInput{"ann", "read", rbacResourceRef{"report", "r1"}}, false, "deny: no permission"},
		{"owner writes without a write role", rbacInput{"eve", "write", doc("d1")}, true, "allow: owner"},
		{"owner may not delete without a role", rbacInput{"eve", "delete", doc("d1")}, false, "deny: no permission"},
		{"user without roles owns nothing here", rbacInput{"finn", "read", doc("d1")}, false, "deny: no permission"},
		{"admin deletes anything", rbacInput{"cat", "delete", doc("d1")}, true, "allow: admin"},
		{"suspended manager is denied", rbacInput{"dan", "read", doc("d1")}, false, "deny: suspended"},
		{"unknown user", rbacInput{"zed", "read", doc("d1")}, false, "deny: unknown user"},
		{"unknown resource", rbacInput{"cat", "read", doc("d9")}, false, "deny: unknown resource"},
		{"unknown type", rbacInput{"cat", "read", rbacResourceRef{"printer", "d1"}}, false, "deny: unknown resource"},
		{"confidential is never shared, even by an admin", rbacInput{"cat", "share", doc("d2")}, false, "deny: confidential"},
		{"confidential may still be read by its owner", rbacInput{"ann", "read", doc("d2")}, true, "allow: owner"},
	}
	w := &Workload{
		Name:     "rbac",
		Query:    "data.authzbench.rbac.allow",
		Policies: []File{{Name: "rbac.rego", Content: rbacPolicy}},
		Data:     mustJSON(map[string]any{"rbac": d}),
		Cedar:    rbacCedar(d),
	}
	checkHandCases(t, w, tests, func(in rbacInput) (bool, string) { return rbacDecide(d, in) })
	checkHandCases(t, optimizedOf(t, "rbac-opt", w), tests, func(in rbacInput) (bool, string) { return rbacDecide(d, in) })
	// Cedar's schema names the resource types, so a request for a type it does not know is
	// refused before any policy runs; every other case must decide as in Rego.
	var typed []handCase[rbacInput]
	for _, tc := range tests {
		if _, known := rbacCedarTypes[tc.in.Resource.Type]; known {
			typed = append(typed, tc)
		}
	}
	checkCedarHandCases(t, w, typed, rbacCedarRequest)
}

func TestRBACCedarAgrees(t *testing.T) {
	w, err := buildRBAC(DefaultSeed, 500)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstCedar(t, w)
}
