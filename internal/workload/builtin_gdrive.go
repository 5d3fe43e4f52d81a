package workload

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
)

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

// GdriveGrantee is a user or a group named on an access list.
type GdriveGrantee struct {
	Group bool
	Idx   int
}

// GdriveNode is a folder or a document.
type GdriveNode struct {
	Parent           int // the folder it is in; -1 for a root folder
	Depth            int // folders only: 1 for a root folder
	Owner            int
	Viewers, Editors []GdriveGrantee
	// Documents only.
	Public, EditorsCanShare bool
}

// GdriveWorld is what gdrive-N's reference model decides over: users, nested groups, nested
// folders and documents, by index.
type GdriveWorld struct {
	Users         int
	UserGroups    [][]int // groups each user is a direct member of
	GroupParents  [][]int // groups each group is a direct member of
	GroupUsers    [][]int // direct user members of each group
	GroupChildren [][]int // groups directly inside each group
	Folders, Docs []GdriveNode
}

func GdriveUser(i int) string   { return fmt.Sprintf("user-%05d", i) }
func GdriveGroup(i int) string  { return fmt.Sprintf("group-%04d", i) }
func GdriveFolder(i int) string { return fmt.Sprintf("folder-%04d", i) }
func GdriveDoc(i int) string    { return fmt.Sprintf("doc-%05d", i) }

// ID is the grantee's id, a user's or a group's.
func (g GdriveGrantee) ID() string {
	if g.Group {
		return GdriveGroup(g.Idx)
	}
	return GdriveUser(g.Idx)
}

// memberOf returns the groups user u is in, directly or through nested groups.
func (w *GdriveWorld) memberOf(u int) []int {
	return reach(w.UserGroups[u], func(g int) []int { return w.GroupParents[g] })
}

// chain returns the document's own node followed by its folder and every folder above it.
func (w *GdriveWorld) chain(d int) []*GdriveNode {
	out := []*GdriveNode{&w.Docs[d]}
	for f := w.Docs[d].Parent; f >= 0; f = w.Folders[f].Parent {
		out = append(out, &w.Folders[f])
	}
	return out
}

// gdriveDecide is the reference model of OPA's gdrive.rego, Cedar's gdrive.cedar and OpenFGA's
// gdrive.fga, written over the world itself.
func gdriveDecide(w *GdriveWorld, u int, act string, d int) (allow bool, reason string) {
	doc := &w.Docs[d]
	chain := w.chain(d)
	groups := w.memberOf(u)
	names := func(list []GdriveGrantee) bool {
		return slices.ContainsFunc(list, func(g GdriveGrantee) bool {
			if g.Group {
				return slices.Contains(groups, g.Idx)
			}
			return g.Idx == u
		})
	}
	owner := doc.Owner == u
	folderOwner := slices.ContainsFunc(chain[1:], func(f *GdriveNode) bool { return f.Owner == u })
	editor := slices.ContainsFunc(chain, func(n *GdriveNode) bool { return names(n.Editors) })
	viewer := slices.ContainsFunc(chain, func(n *GdriveNode) bool { return names(n.Viewers) })
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
		case doc.Public:
			return true, "allow: public"
		}
	case "write":
		if editor {
			return true, "allow: editor"
		}
	case "share":
		switch {
		case editor && doc.EditorsCanShare:
			return true, "allow: editor"
		case editor:
			return false, "deny: sharing restricted"
		}
	case "delete":
		if editor || viewer || doc.Public {
			return false, "deny: not owner"
		}
		return false, "deny: no access"
	}
	if viewer || doc.Public {
		return false, "deny: read only"
	}
	return false, "deny: no access"
}

func newGdriveWorld(r *rand.Rand, n int) *GdriveWorld {
	users, groups, folders := n/2+5, n/10+2, n/5+2
	w := &GdriveWorld{
		Users:         users,
		UserGroups:    make([][]int, users),
		GroupParents:  make([][]int, groups),
		GroupUsers:    make([][]int, groups),
		GroupChildren: make([][]int, groups),
		Folders:       make([]GdriveNode, folders),
		Docs:          make([]GdriveNode, n),
	}
	// Groups nest: a group may join an earlier one, within gdMaxGroupDepth.
	depth := make([]int, groups)
	for g := range groups {
		depth[g] = 1
		w.GroupParents[g] = []int{}
		if g > 0 && r.IntN(2) == 0 {
			if p := r.IntN(g); depth[p] < gdMaxGroupDepth {
				w.GroupParents[g] = []int{p}
				w.GroupChildren[p] = append(w.GroupChildren[p], g)
				depth[g] = depth[p] + 1
			}
		}
	}
	for u := range users {
		w.UserGroups[u] = pick(r, r.IntN(3), groups)
		for _, g := range w.UserGroups[u] {
			w.GroupUsers[g] = append(w.GroupUsers[g], u)
		}
	}
	grantees := func(k int) []GdriveGrantee {
		out := []GdriveGrantee{}
		for range r.IntN(k + 1) {
			g := GdriveGrantee{Idx: r.IntN(users)}
			if r.IntN(3) == 0 {
				g = GdriveGrantee{Group: true, Idx: r.IntN(groups)}
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
		fo := GdriveNode{Parent: -1, Depth: 1, Owner: r.IntN(users), Viewers: grantees(1), Editors: grantees(1)}
		if f >= roots {
			for {
				if p := r.IntN(f); w.Folders[p].Depth < gdMaxFolderDepth {
					fo.Parent, fo.Depth = p, w.Folders[p].Depth+1
					break
				}
			}
		}
		w.Folders[f] = fo
	}
	for d := range n {
		w.Docs[d] = GdriveNode{Parent: r.IntN(folders), Owner: r.IntN(users), Viewers: grantees(3), Editors: grantees(2),
			Public: r.IntN(6) == 0, EditorsCanShare: r.IntN(2) == 0}
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
func (w *GdriveWorld) someMember(r *rand.Rand, g int) int {
	for range gdMaxGroupDepth + 1 {
		users, children := w.GroupUsers[g], w.GroupChildren[g]
		if len(users)+len(children) == 0 {
			break
		}
		if i := r.IntN(len(users) + len(children)); i < len(users) {
			return users[i]
		} else {
			g = children[i-len(users)]
		}
	}
	return r.IntN(w.Users)
}

// request draws one request: a document, an action and a user likely to matter to it.
func (w *GdriveWorld) request(r *rand.Rand) AppRequest {
	d := r.IntN(len(w.Docs))
	act := choose(r, gdriveActions)
	chain := w.chain(d)
	var u int
	switch p := r.IntN(100); {
	case p < 12:
		u = w.Docs[d].Owner
	case p < 20:
		u = chain[1+r.IntN(len(chain)-1)].Owner
	case p < 70:
		// Someone granted on the document or a folder above it, or in a group that is.
		n := chain[r.IntN(len(chain))]
		list := slices.Concat(n.Viewers, n.Editors)
		if len(list) == 0 {
			u = r.IntN(w.Users)
			break
		}
		g := list[r.IntN(len(list))]
		u = g.Idx
		if g.Group {
			u = w.someMember(r, g.Idx)
		}
	default:
		u = r.IntN(w.Users)
	}
	allow, reason := gdriveDecide(w, u, act, d)
	return AppRequest{User: GdriveUser(u), Action: act, Resource: GdriveDoc(d), allow: allow, reason: reason}
}

func buildGdrive(name string, n int, seed int64, inputs int) *Workload {
	w := newGdriveWorld(rand.New(rand.NewPCG(uint64(seed), 0x67647276)), n) // "gdrv"
	r := rand.New(rand.NewPCG(uint64(seed), 0x67647276_00000000|uint64(n)))
	wl := gdriveWorkload(name, n, w)
	qs := appInputs(inputs, func() AppRequest { return w.request(r) })
	return appWorkload(wl, &RelationshipWorld{Family: "gdrive", Relationships: w.Relationships()}, qs, GdriveCheck)
}

// gdriveWorkload is the workload of world w, without inputs.
func gdriveWorkload(name string, n int, w *GdriveWorld) *Workload {
	return &Workload{
		Name: name,
		Description: fmt.Sprintf("gdrive with %d documents, %d folders, %d users and %d groups: grants inherit down nested folders "+
			"and through nested groups, public links; the world as data in Rego, entities in Cedar, tuples in OpenFGA", n, len(w.Folders), w.Users, len(w.GroupParents)),
		Model: w,
	}
}

// mapped names each index with name.
func mapped(idx []int, name func(int) string) []string {
	out := make([]string, 0, len(idx))
	for _, i := range idx {
		out = append(out, name(i))
	}
	return out
}

// Relationships writes the world as relationships: memberships on the groups, then each
// folder's and document's owner, parent and grants, and a document's public and sharing flags.
func (w *GdriveWorld) Relationships() []Relationship {
	var rels []Relationship
	for u, gs := range w.UserGroups {
		for _, g := range gs {
			rels = append(rels, Relate(Obj("group", GdriveGroup(g)), "member", Obj("user", GdriveUser(u)).Subject()))
		}
	}
	for g, ps := range w.GroupParents {
		for _, p := range ps {
			rels = append(rels, Relate(Obj("group", GdriveGroup(p)), "member", Obj("group", GdriveGroup(g)).Set("member")))
		}
	}
	grantee := func(g GdriveGrantee) Subject {
		if g.Group {
			return Obj("group", g.ID()).Set("member")
		}
		return Obj("user", g.ID()).Subject()
	}
	node := func(object Object, n *GdriveNode) {
		rels = append(rels, Relate(object, "owner", Obj("user", GdriveUser(n.Owner)).Subject()))
		if n.Parent >= 0 {
			rels = append(rels, Relate(object, "parent", Obj("folder", GdriveFolder(n.Parent)).Subject()))
		}
		for _, g := range n.Viewers {
			rels = append(rels, Relate(object, "viewer", grantee(g)))
		}
		for _, g := range n.Editors {
			rels = append(rels, Relate(object, "editor", grantee(g)))
		}
	}
	for i := range w.Folders {
		node(Obj("folder", GdriveFolder(i)), &w.Folders[i])
	}
	for i := range w.Docs {
		object := Obj("document", GdriveDoc(i))
		node(object, &w.Docs[i])
		if w.Docs[i].Public {
			rels = append(rels, Relate(object, "public", Any("user")))
		}
		if w.Docs[i].EditorsCanShare {
			rels = append(rels, Relate(object, "editors_share", Any("user")))
		}
	}
	return rels
}

// GdriveCheck is a gdrive request as a relationship check.
func GdriveCheck(q AppRequest) RelationshipCheck {
	return RelationshipCheck{Subject: Obj("user", q.User), Permission: "can_" + q.Action, Resource: Obj("document", q.Resource)}
}

// Decide is the reference model's decision of user u's request to do act to document i, and the
// rule that made it.
func (w *GdriveWorld) Decide(u int, act string, i int) (allow bool, reason string) {
	return gdriveDecide(w, u, act, i)
}
