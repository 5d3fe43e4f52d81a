package workload

import (
	"bytes"
	_ "embed"
	"fmt"
)

//go:embed policies/docshare.fga
var docshareOpenFGAModel string

// dsMaxContextualTuples is OpenFGA's limit on the contextual tuples of one Check (its API's
// max_items; the openfga engine refuses more with the same number).
const dsMaxContextualTuples = 100

// fgaObject names the entity as an OpenFGA object: "document:doc-0001".
func (r dsRef) fgaObject() string {
	return map[dsKind]string{dsUser: "user", dsGroup: "group", dsFolderKind: "folder", dsDocument: "document"}[r.kind] + ":" + r.id()
}

// fgaTuples writes one entity of the world as the tuples policies/docshare.fga reads: what the
// entity's attributes and parents say, each tuple on the entity's own object except a user's
// and a group's memberships, which are on the group.
func (w *DocshareWorld) fgaTuples(r dsRef) []FGATuple {
	var ts []FGATuple
	grants := func(object string, a *DocshareACL) {
		for _, u := range a.ViewerUsers {
			ts = append(ts, FGATuple{dsRef{dsUser, u}.fgaObject(), "viewer", object})
		}
		for _, g := range a.ViewerGroups {
			ts = append(ts, FGATuple{dsRef{dsGroup, g}.fgaObject() + "#member", "viewer", object})
		}
		for _, u := range a.EditorUsers {
			ts = append(ts, FGATuple{dsRef{dsUser, u}.fgaObject(), "editor", object})
		}
		for _, g := range a.EditorGroups {
			ts = append(ts, FGATuple{dsRef{dsGroup, g}.fgaObject() + "#member", "editor", object})
		}
	}
	object := r.fgaObject()
	switch r.kind {
	case dsUser:
		for _, g := range w.UserGroups[r.idx] {
			ts = append(ts, FGATuple{object, "member", dsRef{dsGroup, g}.fgaObject()})
		}
	case dsGroup:
		for _, p := range w.GroupParents[r.idx] {
			ts = append(ts, FGATuple{object + "#member", "member", dsRef{dsGroup, p}.fgaObject()})
		}
	case dsFolderKind:
		f := &w.Folders[r.idx]
		if f.Parent >= 0 {
			ts = append(ts, FGATuple{dsRef{dsFolderKind, f.Parent}.fgaObject(), "parent", object})
		}
		if r.idx == dsArchive {
			ts = append(ts, FGATuple{"user:*", "archive", object})
		}
		grants(object, &f.ACL)
	case dsDocument:
		d := &w.Docs[r.idx]
		ts = append(ts, FGATuple{dsRef{dsFolderKind, d.Folder}.fgaObject(), "parent", object},
			FGATuple{dsRef{dsUser, d.Owner}.fgaObject(), "owner", object})
		if d.Public {
			ts = append(ts, FGATuple{"user:*", "public", object})
		}
		if d.Sharable {
			ts = append(ts, FGATuple{"user:*", "sharable", object})
		}
		for _, u := range d.Blocked {
			ts = append(ts, FGATuple{dsRef{dsUser, u}.fgaObject(), "blocked", object})
		}
		grants(object, &d.ACL)
	}
	return ts
}

// fgaCheck writes the request as an OpenFGA Check whose contextual tuples are its entities', the
// entities the decision reads first, up to OpenFGA's limit; the tuples beyond it are returned
// to be stored before the clock. relevant is how many of q.entities the decision reads (they
// come first); their tuples must all fit in the Check.
func (q DocshareRequest) fgaCheck(relevant int) (check []byte, stored []FGATuple, err error) {
	var tuples []FGATuple
	needed := 0
	for i, e := range q.entities {
		tuples = append(tuples, q.world.fgaTuples(e)...)
		if i < relevant {
			needed = len(tuples)
		}
	}
	if needed > dsMaxContextualTuples {
		return nil, nil, fmt.Errorf("%s %s %s: the decision reads %d tuples, more than OpenFGA's %d contextual tuples",
			dsRef{dsUser, q.user}.id(), q.action, dsRef{dsDocument, q.doc}.id(), needed, dsMaxContextualTuples)
	}
	carried := tuples[:min(len(tuples), dsMaxContextualTuples)]
	contextual := make([]map[string]string, len(carried))
	for i, t := range carried {
		contextual[i] = map[string]string{"user": t.User, "relation": t.Relation, "object": t.Object}
	}
	check = mustJSON(map[string]any{"user": dsRef{dsUser, q.user}.fgaObject(), "relation": "can_" + q.action,
		"object": dsRef{dsDocument, q.doc}.fgaObject(), "contextual_tuples": contextual})
	return check, tuples[len(carried):], nil
}

// docshareOpenFGA is the OpenFGA version of a docshare workload: its model, and as stored
// tuples the ones no Check could carry, each once, in the order first met.
func docshareOpenFGA(stored []FGATuple, carried, requests int) *OpenFGA {
	var unique []FGATuple
	seen := map[FGATuple]bool{}
	var tuples bytes.Buffer
	for _, t := range stored {
		if seen[t] {
			continue
		}
		seen[t] = true
		unique = append(unique, t)
		tuples.Write(mustJSON(map[string]string{"user": t.User, "relation": t.Relation, "object": t.Object}))
		tuples.WriteByte('\n')
	}
	o := &OpenFGA{Model: docshareOpenFGAModel, Tuples: tuples.Bytes()}
	if len(unique) > 0 {
		o.Differences = fmt.Sprintf("OpenFGA takes at most %d contextual tuples per Check, and %d of the %d requests carry more: "+
			"their first %d (every tuple the decision reads, then the others) go in the Check, and the %d distinct tuples beyond "+
			"them, of entities that request's decision does not read, are written to the store before the clock; Rego and Cedar read every "+
			"entity from the request",
			dsMaxContextualTuples, carried, requests, dsMaxContextualTuples, len(unique))
	}
	return o
}
