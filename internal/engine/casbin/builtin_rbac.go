package casbin

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/authzbench/authzbench/internal/workload"
)

// nopModel allows every request without reading a policy line: Casbin's floor, its cost per
// Enforce (the request read, the matcher evaluated once, the effect merged) and nothing more.
const nopModel = `# nop in Casbin: a matcher that is always true and no policy to walk, the floor of each mode.
[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, obj, act

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = true
`

var nopFamily = builtinFamily{
	requests: eachInput(func(in workload.Input) ([]byte, error) {
		var q rbacRequest
		if err := json.Unmarshal(in.JSON, &q); err != nil {
			return nil, err
		}
		return requestJSON(q.User, q.Resource.ID, q.Action)
	}),
	files: func(*workload.Workload) (Files, error) {
		return Files{ModelName: "nop.conf", Model: nopModel, PolicyName: "nop.csv"}, nil
	},
}

// rbacModel is the rbac policy in Casbin, as its RBAC models are written: the roles' grants are
// p rules, walked by the matcher; what Rego looks up in data are role links, each a lookup of
// the role manager: g, a user's roles, and "active" for a user the directory holds who is not
// suspended; g2, a resource's owner; g3, a resource's type, and "confidential".
const rbacModel = `# rbac in Casbin, written by authzbench from the workload's data.
[request_definition]
r = sub, typ, obj, act

[policy_definition]
p = sub, typ, act

[role_definition]
g = _, _
g2 = _, _
g3 = _, _

[policy_effect]
e = some(where (p.eft == allow))

# A known, active user acting on a known resource that is not a confidential one being shared,
# when an admin, its owner reading or writing it, or granted the action by a role.
[matchers]
m = g(r.sub, "active") && g3(r.obj, r.typ) && !(r.act == "share" && g3(r.obj, "confidential")) && \
    (g(r.sub, "admin") || g2(r.obj, r.sub) && (r.act == "read" || r.act == "write") || g(r.sub, p.sub) && r.typ == p.typ && r.act == p.act)
`

// rbacData is the rbac workloads' data document (data.rbac), as the workload writes it.
type rbacData struct {
	Users map[string]struct {
		Roles     []string `json:"roles"`
		Suspended bool     `json:"suspended"`
	} `json:"users"`
	Roles     map[string]map[string][]string `json:"roles"`
	Resources map[string]map[string]struct {
		Owner        string `json:"owner"`
		Confidential bool   `json:"confidential"`
	} `json:"resources"`
}

// rbacRequest is the rbac and nop workloads' input document.
type rbacRequest struct {
	User     string `json:"user"`
	Action   string `json:"action"`
	Resource struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"resource"`
}

var rbacFamily = builtinFamily{
	style: "casbin",
	requests: eachInput(func(in workload.Input) ([]byte, error) {
		var q rbacRequest
		if err := json.Unmarshal(in.JSON, &q); err != nil {
			return nil, err
		}
		return requestJSON(q.User, q.Resource.Type, q.Resource.ID, q.Action)
	}),
	files: rbacFiles,
}

// rbacFiles writes the rbac policy from the workload's data.
func rbacFiles(w *workload.Workload) (Files, error) {
	var d rbacData
	if err := fromModel(w, &d); err != nil {
		return Files{}, fmt.Errorf("read the rbac data: %w", err)
	}
	return rbacFilesOf(d)
}

// rbacFilesOf writes the rbac policy from rbac's data d.
func rbacFilesOf(d rbacData) (Files, error) {
	var p policyWriter
	for _, role := range sortedKeys(d.Roles) {
		for _, typ := range sortedKeys(d.Roles[role]) {
			for _, act := range d.Roles[role][typ] {
				p.line("p", role, typ, act)
			}
		}
	}
	for _, user := range sortedKeys(d.Users) {
		u := d.Users[user]
		for _, role := range u.Roles {
			p.line("g", user, role)
		}
		if !u.Suspended {
			p.line("g", user, "active")
		}
	}
	// The matcher names a resource by its id alone, with its type beside it: the ids of the
	// workload's types never meet (doc-, fld-, ...), and g3 holds the type of each.
	typeOf := map[string]string{}
	for _, typ := range sortedKeys(d.Resources) {
		for _, id := range sortedKeys(d.Resources[typ]) {
			if other, dup := typeOf[id]; dup {
				return Files{}, fmt.Errorf("resource id %s is both a %s and a %s; the Casbin version names a resource by its id", id, other, typ)
			}
			typeOf[id] = typ
			r := d.Resources[typ][id]
			p.line("g2", id, r.Owner)
			p.line("g3", id, typ)
			if r.Confidential {
				p.line("g3", id, "confidential")
			}
		}
	}
	if _, ok := d.Roles["active"]; ok {
		return Files{}, fmt.Errorf(`a role is called "active", which the Casbin version's role links reserve for a user who is not suspended`)
	}
	return Files{ModelName: "rbac.conf", Model: rbacModel, PolicyName: "rbac.csv", Policy: p.String()}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
