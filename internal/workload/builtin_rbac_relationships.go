package workload

// rbacRelationships writes the rbac data as relationships: every resource linked to its kind
// and owner (and marked if confidential), every user's roles and suspension, and the roles
// table as each kind's grants to roles' assignees. A kind's admin and grant relations name the
// role's assignees, so a role's member reaches every kind it is granted through one link.
func rbacRelationships(d *RBACData) []Relationship {
	var rels []Relationship
	directory := Obj("directory", "main")
	for _, t := range rbacTypes {
		kind := Obj("kind", t.name)
		rels = append(rels, Relate(kind, "directory", directory.Subject()),
			Relate(kind, "admin", Obj("role", "admin").Set("assignee")))
		for _, role := range sortedKeysOf(d.Roles) {
			for _, action := range d.Roles[role][t.name] {
				rels = append(rels, Relate(kind, rbacGrant[action], Obj("role", role).Set("assignee")))
			}
		}
		byID := d.Resources[t.name]
		for _, id := range sortedKeysOf(byID) {
			res := byID[id]
			object := rbacObject(t.name, id)
			rels = append(rels, Relate(object, "kind", kind.Subject()), Relate(object, "owner", Obj("user", res.Owner).Subject()))
			if res.Confidential {
				rels = append(rels, Relate(object, "confidential", Any("user")))
			}
		}
	}
	for _, name := range sortedKeysOf(d.Users) {
		u := d.Users[name]
		for _, role := range u.Roles {
			rels = append(rels, Relate(Obj("role", role), "assignee", Obj("user", name).Subject()))
		}
		if u.Suspended {
			rels = append(rels, Relate(directory, "suspended", Obj("user", name).Subject()))
		}
	}
	return rels
}

// rbacGrant is the relation of a kind that grants a role each action.
var rbacGrant = map[string]string{"read": "reader", "write": "writer", "delete": "deleter", "share": "sharer"}

// rbacObject is a resource as an object: one type for all, the Rego type in the id, as the
// data keys them by type and id.
func rbacObject(typ, id string) Object { return Obj("resource", typ+"-"+id) }

// rbacCheck is the relationship check of one rbac input.
func rbacCheck(in RBACInput) RelationshipCheck {
	return RelationshipCheck{Subject: Obj("user", in.User), Permission: "can_" + in.Action,
		Resource: rbacObject(in.Resource.Type, in.Resource.ID)}
}

// rbacWorld is the rbac data and inputs as a relationship world.
func rbacWorld(d *RBACData, inputs []Input) *RelationshipWorld {
	rw := &RelationshipWorld{Family: "rbac", Relationships: rbacRelationships(d)}
	for _, in := range inputs {
		rw.Checks = append(rw.Checks, rbacCheck(in.Model.(RBACInput)))
	}
	return rw
}
