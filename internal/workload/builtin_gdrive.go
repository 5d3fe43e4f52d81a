package workload

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
)

//go:embed policies/gdrive.rego
var gdrivePolicy []byte

//go:embed policies/gdrive.cedar
var gdriveCedarPolicy []byte

//go:embed policies/gdrive.cedarschema
var gdriveCedarSchema []byte

//go:embed policies/gdrive.fga
var gdriveModel []byte

func init() {
	registerApp(app{
		name:  "gdrive",
		param: "documents",
		description: "document sharing, Google Drive style: owners, editors and viewers of documents in nested folders " +
			"whose grants inherit down, nested groups as grantees, public links, read/write/share/delete",
		build: buildGdrive,
	})
}

// The world of gdrive-<N> grows with N documents: a user per two documents, a group per ten,
// a folder per five.
const (
	gdMaxFolderDepth = 5
	gdMaxGroupDepth  = 4
)

// gdGrantee is a user or a group named on an access list.
type gdGrantee struct {
	group bool
	idx   int
}

// gdNode is a folder or a document.
type gdNode struct {
	parent           int // the folder it is in; -1 for a root folder
	depth            int // folders only: 1 for a root folder
	owner            int
	viewers, editors []gdGrantee
	// Documents only.
	public, editorsCanShare bool
}

type gdWorld struct {
	users         int
	userGroups    [][]int // groups each user is a direct member of
	groupParents  [][]int // groups each group is a direct member of
	groupUsers    [][]int // direct user members of each group
	groupChildren [][]int // groups directly inside each group
	folders, docs []gdNode
}

func gdUser(i int) string   { return fmt.Sprintf("user-%05d", i) }
func gdGroup(i int) string  { return fmt.Sprintf("group-%04d", i) }
func gdFolder(i int) string { return fmt.Sprintf("folder-%04d", i) }
func gdDoc(i int) string    { return fmt.Sprintf("doc-%05d", i) }

func (g gdGrantee) id() string {
	if g.group {
		return gdGroup(g.idx)
	}
	return gdUser(g.idx)
}

// memberOf returns the groups user u is in, directly or through nested groups.
func (w *gdWorld) memberOf(u int) []int {
	return reach(w.userGroups[u], func(g int) []int { return w.groupParents[g] })
}

// chain returns the document's own node followed by its folder and every folder above it.
func (w *gdWorld) chain(d int) []*gdNode {
	out := []*gdNode{&w.docs[d]}
	for f := w.docs[d].parent; f >= 0; f = w.folders[f].parent {
		out = append(out, &w.folders[f])
	}
	return out
}

// gdriveDecide is the reference model of policies/gdrive.rego, gdrive.cedar and gdrive.fga,
// written over the world itself.
func gdriveDecide(w *gdWorld, u int, act string, d int) (allow bool, reason string) {
	doc := &w.docs[d]
	chain := w.chain(d)
	groups := w.memberOf(u)
	names := func(list []gdGrantee) bool {
		return slices.ContainsFunc(list, func(g gdGrantee) bool {
			if g.group {
				return slices.Contains(groups, g.idx)
			}
			return g.idx == u
		})
	}
	owner := doc.owner == u
	folderOwner := slices.ContainsFunc(chain[1:], func(f *gdNode) bool { return f.owner == u })
	editor := slices.ContainsFunc(chain, func(n *gdNode) bool { return names(n.editors) })
	viewer := slices.ContainsFunc(chain, func(n *gdNode) bool { return names(n.viewers) })
	switch {
	case owner:
		return true, "allow: owner"
	case folderOwner:
		return true, "allow: folder owner"
	}
	switch act {
	case "read":
		switch {
		case editor:
			return true, "allow: editor"
		case viewer:
			return true, "allow: viewer"
		case doc.public:
			return true, "allow: public"
		}
	case "write":
		if editor {
			return true, "allow: editor"
		}
	case "share":
		switch {
		case editor && doc.editorsCanShare:
			return true, "allow: editor"
		case editor:
			return false, "deny: sharing restricted"
		}
	case "delete":
		if editor || viewer || doc.public {
			return false, "deny: not owner"
		}
		return false, "deny: no access"
	}
	if viewer || doc.public {
		return false, "deny: read only"
	}
	return false, "deny: no access"
}

func newGdriveWorld(r *rand.Rand, n int) *gdWorld {
	users, groups, folders := n/2+5, n/10+2, n/5+2
	w := &gdWorld{
		users:         users,
		userGroups:    make([][]int, users),
		groupParents:  make([][]int, groups),
		groupUsers:    make([][]int, groups),
		groupChildren: make([][]int, groups),
		folders:       make([]gdNode, folders),
		docs:          make([]gdNode, n),
	}
	// Groups nest: a group may join an earlier one, within gdMaxGroupDepth.
	depth := make([]int, groups)
	for g := range groups {
		depth[g] = 1
		w.groupParents[g] = []int{}
		if g > 0 && r.IntN(2) == 0 {
			if p := r.IntN(g); depth[p] < gdMaxGroupDepth {
				w.groupParents[g] = []int{p}
				w.groupChildren[p] = append(w.groupChildren[p], g)
				depth[g] = depth[p] + 1
			}
		}
	}
	for u := range users {
		w.userGroups[u] = pick(r, r.IntN(3), groups)
		for _, g := range w.userGroups[u] {
			w.groupUsers[g] = append(w.groupUsers[g], u)
		}
	}
	grantees := func(k int) []gdGrantee {
		out := []gdGrantee{}
		for range r.IntN(k + 1) {
			g := gdGrantee{idx: r.IntN(users)}
			if r.IntN(3) == 0 {
				g = gdGrantee{group: true, idx: r.IntN(groups)}
			}
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
		return out
	}
	// A root folder per eight; every later folder goes in an earlier one with room below it.
	roots := max(1, folders/8)
	for f := range folders {
		fo := gdNode{parent: -1, depth: 1, owner: r.IntN(users), viewers: grantees(1), editors: grantees(1)}
		if f >= roots {
			for {
				if p := r.IntN(f); w.folders[p].depth < gdMaxFolderDepth {
					fo.parent, fo.depth = p, w.folders[p].depth+1
					break
				}
			}
		}
		w.folders[f] = fo
	}
	for d := range n {
		w.docs[d] = gdNode{parent: r.IntN(folders), owner: r.IntN(users), viewers: grantees(3), editors: grantees(2),
			public: r.IntN(6) == 0, editorsCanShare: r.IntN(2) == 0}
	}
	return w
}

// gdriveActions are the actions with their share of the requests, in percent.
var gdriveActions = []weighted{{"read", 35}, {"write", 25}, {"share", 20}, {"delete", 20}}

// weighted is a choice with its share in percent.
type weighted struct {
	name  string
	share int
}

func choose(r *rand.Rand, ws []weighted) string {
	p := r.IntN(100)
	for _, w := range ws {
		if p < w.share {
			return w.name
		}
		p -= w.share
	}
	return ws[len(ws)-1].name
}

// someMember returns a user in group g, directly or through groups inside it, or a random user
// when the group has nobody.
func (w *gdWorld) someMember(r *rand.Rand, g int) int {
	for range gdMaxGroupDepth + 1 {
		users, children := w.groupUsers[g], w.groupChildren[g]
		if len(users)+len(children) == 0 {
			break
		}
		if i := r.IntN(len(users) + len(children)); i < len(users) {
			return users[i]
		} else {
			g = children[i-len(users)]
		}
	}
	return r.IntN(w.users)
}

// request draws one request: a document, an action and a user likely to matter to it.
func (w *gdWorld) request(r *rand.Rand) appRequest {
	d := r.IntN(len(w.docs))
	act := choose(r, gdriveActions)
	chain := w.chain(d)
	var u int
	switch p := r.IntN(100); {
	case p < 12:
		u = w.docs[d].owner
	case p < 20:
		u = chain[1+r.IntN(len(chain)-1)].owner
	case p < 70:
		// Someone granted on the document or a folder above it, or in a group that is.
		n := chain[r.IntN(len(chain))]
		list := slices.Concat(n.viewers, n.editors)
		if len(list) == 0 {
			u = r.IntN(w.users)
			break
		}
		g := list[r.IntN(len(list))]
		u = g.idx
		if g.group {
			u = w.someMember(r, g.idx)
		}
	default:
		u = r.IntN(w.users)
	}
	allow, reason := gdriveDecide(w, u, act, d)
	return appRequest{User: gdUser(u), Action: act, Resource: gdDoc(d), allow: allow, reason: reason}
}

func buildGdrive(name string, n int, seed int64, inputs int) *appBuilt {
	w := newGdriveWorld(rand.New(rand.NewPCG(uint64(seed), 0x67647276)), n) // "gdrv"
	r := rand.New(rand.NewPCG(uint64(seed), 0x67647276_00000000|uint64(n)))
	wl := gdriveWorkload(name, n, w)
	f := &AppFGA{Model: File{Name: "gdrive.fga", Content: gdriveModel}, Tuples: w.tuples()}
	qs := appInputs(inputs, func() appRequest { return w.request(r) })
	return appWorkload(wl, f, qs, "User", "Document", func(q appRequest) FGACheck {
		return FGACheck{User: "user:" + q.User, Relation: "can_" + q.Action, Object: "document:" + q.Resource}
	})
}

// gdriveWorkload is the workload of world w, without inputs.
func gdriveWorkload(name string, n int, w *gdWorld) *Workload {
	return &Workload{
		Name: name,
		Description: fmt.Sprintf("gdrive with %d documents, %d folders, %d users and %d groups: grants inherit down nested folders "+
			"and through nested groups, public links; the world as data in Rego, entities in Cedar, tuples in OpenFGA", n, len(w.folders), w.users, len(w.groupParents)),
		Query:    "data.authzbench.gdrive.allow",
		Policies: []File{{Name: "gdrive.rego", Content: gdrivePolicy}},
		Data:     w.rego(),
		Cedar: &Cedar{
			Policies: []File{{Name: "gdrive.cedar", Content: gdriveCedarPolicy}},
			Schema:   &File{Name: "gdrive.cedarschema", Content: gdriveCedarSchema},
			Entities: w.cedar(),
			Differences: "Cedar is handed each document's and folder's access lists as Role entities whose parents carry " +
				"the inheritance (a folder's viewers role is in the viewers role of everything in the folder); the store " +
				"resolves `in` through them, where Rego walks the folders and groups at each decision",
		},
	}
}

// rego writes the world as data.gdrive: the group and folder graphs as graph.reachable reads
// them, and each folder's and document's owner and lists.
func (w *gdWorld) rego() []byte {
	ids := func(gs []gdGrantee) []string {
		out := make([]string, 0, len(gs))
		for _, g := range gs {
			out = append(out, g.id())
		}
		return out
	}
	userGroups, groupParents, folderParents := map[string][]string{}, map[string][]string{}, map[string][]string{}
	folders, docs := map[string]any{}, map[string]any{}
	for u, gs := range w.userGroups {
		if len(gs) > 0 {
			userGroups[gdUser(u)] = mapped(gs, gdGroup)
		}
	}
	for g, ps := range w.groupParents {
		groupParents[gdGroup(g)] = mapped(ps, gdGroup)
	}
	for i, f := range w.folders {
		folderParents[gdFolder(i)] = []string{}
		if f.parent >= 0 {
			folderParents[gdFolder(i)] = []string{gdFolder(f.parent)}
		}
		folders[gdFolder(i)] = map[string]any{"owner": gdUser(f.owner), "viewers": ids(f.viewers), "editors": ids(f.editors)}
	}
	for i, d := range w.docs {
		docs[gdDoc(i)] = map[string]any{"folder": gdFolder(d.parent), "owner": gdUser(d.owner), "public": d.public,
			"editors_can_share": d.editorsCanShare, "viewers": ids(d.viewers), "editors": ids(d.editors)}
	}
	return mustJSON(map[string]any{"gdrive": map[string]any{
		"user_groups": userGroups, "group_parents": groupParents, "folder_parents": folderParents,
		"folders": folders, "docs": docs,
	}})
}

// mapped names each index with name.
func mapped(idx []int, name func(int) string) []string {
	out := make([]string, 0, len(idx))
	for _, i := range idx {
		out = append(out, name(i))
	}
	return out
}

// cedar writes the world as the entity store: see gdrive.cedarschema for its roles.
func (w *gdWorld) cedar() []byte {
	s := cedarStore{}
	role := func(node, list string) cedarUID { return cedarUID{"Role", node + "/" + list} }
	for u := range w.users {
		s.entity("User", gdUser(u))
		for _, g := range w.userGroups[u] {
			s.in("User", gdUser(u), cedarUID{"Group", gdGroup(g)})
		}
	}
	for g := range w.groupParents {
		s.entity("Group", gdGroup(g))
		for _, p := range w.groupParents[g] {
			s.in("Group", gdGroup(g), cedarUID{"Group", gdGroup(p)})
		}
	}
	node := func(typ, id string, n *gdNode) {
		s.in("Role", id+"/managers", role(id, "editors"))
		s.in("Role", id+"/editors", role(id, "viewers"))
		s.entity("Role", id+"/viewers")
		s.in("User", gdUser(n.owner), role(id, "managers"))
		for _, acl := range []struct {
			list string
			gs   []gdGrantee
		}{{"viewers", n.viewers}, {"editors", n.editors}} {
			for _, g := range acl.gs {
				typ := "User"
				if g.group {
					typ = "Group"
				}
				s.in(typ, g.id(), role(id, acl.list))
			}
		}
		if n.parent >= 0 {
			folder := gdFolder(n.parent)
			s.in(typ, id, cedarUID{"Folder", folder})
			for _, list := range []string{"managers", "editors", "viewers"} {
				s.in("Role", folder+"/"+list, role(id, list))
			}
		}
	}
	for i := range w.folders {
		s.entity("Folder", gdFolder(i))
		node("Folder", gdFolder(i), &w.folders[i])
	}
	for i := range w.docs {
		id := gdDoc(i)
		node("Document", id, &w.docs[i])
		e := s.entity("Document", id)
		e.Attrs["public"] = w.docs[i].public
		e.Attrs["editorsCanShare"] = w.docs[i].editorsCanShare
		for _, list := range []string{"managers", "editors", "viewers"} {
			e.Attrs[list] = cedarRef("Role", id+"/"+list)
		}
	}
	return s.json()
}

// tuples writes the world as OpenFGA tuples for gdrive.fga.
func (w *gdWorld) tuples() []FGATuple {
	var ts []FGATuple
	for u, gs := range w.userGroups {
		for _, g := range gs {
			ts = append(ts, FGATuple{"user:" + gdUser(u), "member", "group:" + gdGroup(g)})
		}
	}
	for g, ps := range w.groupParents {
		for _, p := range ps {
			ts = append(ts, FGATuple{"group:" + gdGroup(g) + "#member", "member", "group:" + gdGroup(p)})
		}
	}
	grantee := func(g gdGrantee) string {
		if g.group {
			return "group:" + g.id() + "#member"
		}
		return "user:" + g.id()
	}
	node := func(object string, n *gdNode) {
		ts = append(ts, FGATuple{"user:" + gdUser(n.owner), "owner", object})
		if n.parent >= 0 {
			ts = append(ts, FGATuple{"folder:" + gdFolder(n.parent), "parent", object})
		}
		for _, g := range n.viewers {
			ts = append(ts, FGATuple{grantee(g), "viewer", object})
		}
		for _, g := range n.editors {
			ts = append(ts, FGATuple{grantee(g), "editor", object})
		}
	}
	for i := range w.folders {
		node("folder:"+gdFolder(i), &w.folders[i])
	}
	for i := range w.docs {
		object := "document:" + gdDoc(i)
		node(object, &w.docs[i])
		if w.docs[i].public {
			ts = append(ts, FGATuple{"user:*", "public", object})
		}
		if w.docs[i].editorsCanShare {
			ts = append(ts, FGATuple{"user:*", "editors_share", object})
		}
	}
	return ts
}
