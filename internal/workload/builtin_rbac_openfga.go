package workload

import (
	"bytes"
	_ "embed"
)

//go:embed policies/rbac.fga
var rbacOpenFGAModel string

// rbacOpenFGA writes the rbac data as OpenFGA tuples for policies/rbac.fga: every resource
// linked to its kind and owner (and marked if confidential), every user's roles and
// suspension, and the roles table as each kind's grants to roles' assignees.
func rbacOpenFGA(d *RBACData) *OpenFGA {
	var tuples bytes.Buffer
	add := func(object, relation, user string) {
		tuples.Write(mustJSON(map[string]string{"user": user, "relation": relation, "object": object}))
		tuples.WriteByte('\n')
	}
	for _, t := range rbacTypes {
		kind := "kind:" + t.name
		add(kind, "directory", "directory:main")
		add(kind, "admin", "role:admin#assignee")
		for _, role := range sortedKeysOf(d.Roles) {
			for _, action := range d.Roles[role][t.name] {
				add(kind, rbacOpenFGAGrant[action], "role:"+role+"#assignee")
			}
		}
		byID := d.Resources[t.name]
		for _, id := range sortedKeysOf(byID) {
			res := byID[id]
			object := rbacOpenFGAObject(t.name, id)
			add(object, "kind", kind)
			add(object, "owner", "user:"+res.Owner)
			if res.Confidential {
				add(object, "confidential", "user:*")
			}
		}
	}
	for _, name := range sortedKeysOf(d.Users) {
		u := d.Users[name]
		for _, role := range u.Roles {
			add("role:"+role, "assignee", "user:"+name)
		}
		if u.Suspended {
			add("directory:main", "suspended", "user:"+name)
		}
	}
	return &OpenFGA{Model: rbacOpenFGAModel, Tuples: tuples.Bytes()}
}

// rbacOpenFGAGrant is the relation of a kind that grants a role each action.
var rbacOpenFGAGrant = map[string]string{"read": "reader", "write": "writer", "delete": "deleter", "share": "sharer"}

// rbacOpenFGAObject is a resource as an OpenFGA object: one type for all, the Rego type in the
// id, as the data keys them by type and id.
func rbacOpenFGAObject(typ, id string) string { return "resource:" + typ + "-" + id }

// rbacOpenFGACheck is the Check of one rbac input.
func rbacOpenFGACheck(in RBACInput) []byte {
	return mustJSON(map[string]string{"user": "user:" + in.User, "relation": "can_" + in.Action,
		"object": rbacOpenFGAObject(in.Resource.Type, in.Resource.ID)})
}
