package workload

// object names the entity as a relationship object: "document", "doc-0001".
func (r dsRef) object() Object {
	return Obj(map[dsKind]string{dsUser: "user", dsGroup: "group", dsFolderKind: "folder", dsDocument: "document"}[r.kind], r.id())
}

// relationships writes one entity of the world as relationships: what the entity's attributes
// and parents say, each on the entity's own object except a user's and a group's memberships,
// which are on the group.
func (w *DocshareWorld) relationships(r dsRef) []Relationship {
	var rels []Relationship
	grants := func(object Object, a *DocshareACL) {
		for _, u := range a.ViewerUsers {
			rels = append(rels, Relate(object, "viewer", dsRef{dsUser, u}.object().Subject()))
		}
		for _, g := range a.ViewerGroups {
			rels = append(rels, Relate(object, "viewer", dsRef{dsGroup, g}.object().Set("member")))
		}
		for _, u := range a.EditorUsers {
			rels = append(rels, Relate(object, "editor", dsRef{dsUser, u}.object().Subject()))
		}
		for _, g := range a.EditorGroups {
			rels = append(rels, Relate(object, "editor", dsRef{dsGroup, g}.object().Set("member")))
		}
	}
	object := r.object()
	switch r.kind {
	case dsUser:
		for _, g := range w.UserGroups[r.idx] {
			rels = append(rels, Relate(dsRef{dsGroup, g}.object(), "member", object.Subject()))
		}
	case dsGroup:
		for _, p := range w.GroupParents[r.idx] {
			rels = append(rels, Relate(dsRef{dsGroup, p}.object(), "member", object.Set("member")))
		}
	case dsFolderKind:
		f := &w.Folders[r.idx]
		if f.Parent >= 0 {
			rels = append(rels, Relate(object, "parent", dsRef{dsFolderKind, f.Parent}.object().Subject()))
		}
		if r.idx == dsArchive {
			rels = append(rels, Relate(object, "archive", Any("user")))
		}
		grants(object, &f.ACL)
	case dsDocument:
		d := &w.Docs[r.idx]
		rels = append(rels, Relate(object, "parent", dsRef{dsFolderKind, d.Folder}.object().Subject()),
			Relate(object, "owner", dsRef{dsUser, d.Owner}.object().Subject()))
		if d.Public {
			rels = append(rels, Relate(object, "public", Any("user")))
		}
		if d.Sharable {
			rels = append(rels, Relate(object, "sharable", Any("user")))
		}
		for _, u := range d.Blocked {
			rels = append(rels, Relate(object, "blocked", dsRef{dsUser, u}.object().Subject()))
		}
		grants(object, &d.ACL)
	}
	return rels
}

// check is the request as a relationship check: every entity it carries as relationships it
// carries, those of the entities its decision reads (the first relevant of q.entities) first.
func (q DocshareRequest) check(relevant int) RelationshipCheck {
	c := RelationshipCheck{Subject: dsRef{dsUser, q.user}.object(), Permission: "can_" + q.action, Resource: dsRef{dsDocument, q.doc}.object()}
	for i, e := range q.entities {
		c.Carried = append(c.Carried, q.world.relationships(e)...)
		if i < relevant {
			c.Reads = len(c.Carried)
		}
	}
	return c
}
