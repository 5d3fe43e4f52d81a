package workload

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
)

// docshareSizes are the numbers of entities each request carries, one built-in per size.
var docshareSizes = []int{5, 10, 20, 50}

func docshareName(n int) string { return fmt.Sprintf("docshare-%d", n) }

func init() {
	for _, n := range docshareSizes {
		register(Spec{Name: docshareName(n), Description: docshareDescription(n), Build: buildDocshare(n)})
	}
	// Any other size, up to every entity of the world in each request.
	registerFamily(family{
		Prefix:  "docshare-",
		Pattern: "docshare-<N>",
		Description: fmt.Sprintf("docshare with N entities carried by each request (%d to %d; %s listed above); in OpenFGA as contextual "+
			"tuples, at most 100 per Check, the rest stored before the clock", dsMinEntities, dsEntities, joinInts(docshareSizes)),
		Build: func(name string, seed int64, inputs int) (*Workload, error) {
			n, err := sizeOf(name, name[len("docshare-"):], "docshare-<N>", dsMinEntities, dsEntities)
			if err != nil {
				return nil, err
			}
			return buildDocshare(n)(seed, inputs)
		},
	})
}

func docshareDescription(n int) string {
	return fmt.Sprintf("document sharing with %d entities carried by each request and no entity store: "+
		"users in nested groups, documents in nested folders whose viewer/editor lists are inherited, "+
		"owner, public, blocked and archive rules; in OpenFGA the entities are contextual tuples", n)
}

// joinInts writes ns as "5, 10, 20, 50".
func joinInts(ns []int) string {
	s := ""
	for i, n := range ns {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(n)
	}
	return s
}

// The world every docshare request is drawn from. Its sizes are fixed; N only decides how much
// of it each request carries.
const (
	dsUsers   = 200
	dsGroups  = 30
	dsFolders = 40 // folder 0 is the archive
	dsDocs    = 300
	// dsMaxFolderDepth bounds folder nesting: a root folder is at depth 1. The Cedar policies
	// read the access lists of this many folders above a document, unrolled.
	dsMaxFolderDepth = 4
	// dsMaxGroupDepth bounds group nesting, so a user's groups fit the smaller requests.
	dsMaxGroupDepth = 3
	// dsArchive is the index of the archive folder.
	dsArchive = 0
	// dsEntities is every entity of the world: the most a request can carry. dsMinEntities is
	// the fewest any decision needs (user, document, folder).
	dsEntities    = dsUsers + dsGroups + dsFolders + dsDocs
	dsMinEntities = 3
)

// DocshareACL are the access lists of a document or folder: users and groups named directly,
// by index.
type DocshareACL struct {
	ViewerUsers, ViewerGroups, EditorUsers, EditorGroups []int
}

// DocshareFolder is a folder: the folder it is in, how deep it lies, and its access lists.
type DocshareFolder struct {
	Parent int // -1 for a root folder
	Depth  int
	ACL    DocshareACL
}

// DocshareDoc is a document: its folder and owner, whether anyone may view it and whether its
// editors may share it, the users blocked from it, and its access lists.
type DocshareDoc struct {
	Folder, Owner    int
	Public, Sharable bool
	Blocked          []int
	ACL              DocshareACL
}

// DocshareWorld is the users, groups, folders and documents of the docshare workloads, what
// their reference model decides over; every request carries the part of it its decision reads.
// Folder DocshareArchive is the archive.
type DocshareWorld struct {
	UserGroups   [][]int // groups each user is a direct member of
	GroupParents [][]int // groups each group is a direct member of
	Folders      []DocshareFolder
	Docs         []DocshareDoc
}

// DocshareArchive is the index of the archive folder.
const DocshareArchive = dsArchive

// dsKind is the entity type of a dsRef.
type dsKind uint8

const (
	dsUser dsKind = iota
	dsGroup
	dsFolderKind
	dsDocument
)

var dsTypeNames = [...]string{dsUser: "User", dsGroup: "Group", dsFolderKind: "Folder", dsDocument: "Document"}

// dsRef names one entity of the world.
type dsRef struct {
	kind dsKind
	idx  int
}

func (r dsRef) typ() string { return dsTypeNames[r.kind] }

func (r dsRef) id() string {
	switch r.kind {
	case dsUser:
		return fmt.Sprintf("user-%03d", r.idx)
	case dsGroup:
		return fmt.Sprintf("group-%02d", r.idx)
	case dsFolderKind:
		if r.idx == dsArchive {
			return "archive"
		}
		return fmt.Sprintf("folder-%02d", r.idx)
	}
	return fmt.Sprintf("doc-%04d", r.idx)
}

// key is the entity's name in the Rego input: "Type::id".
func (r dsRef) key() string { return r.typ() + "::" + r.id() }

// DocshareRequest is one docshare request, as its reference model reads it: who does what to
// which document, and the entities the request carries (Entities).
type DocshareRequest struct {
	world    *DocshareWorld
	user     int
	action   string
	doc      int
	entities []dsRef
}

// memberOf returns the groups user u is in, directly or through nested groups, in the order a
// breadth-first walk finds them.
func (w *DocshareWorld) memberOf(u int) []int {
	var out []int
	queue := slices.Clone(w.UserGroups[u])
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		if slices.Contains(out, g) {
			continue
		}
		out = append(out, g)
		queue = append(queue, w.GroupParents[g]...)
	}
	return out
}

// folderChain returns the folder of document d and every folder above it, innermost first.
func (w *DocshareWorld) folderChain(d int) []int {
	var out []int
	for f := w.Docs[d].Folder; f >= 0; f = w.Folders[f].Parent {
		out = append(out, f)
	}
	return out
}

// docshareDecide is the reference model of OPA's docshare.rego and Cedar's docshare.cedar,
// written in Go from the same specification over the world itself rather than the entities a
// request carries. The reason names the rule that decided.
func docshareDecide(w *DocshareWorld, user int, act string, d int) (allow bool, reason string) {
	doc := &w.Docs[d]
	if slices.Contains(doc.Blocked, user) {
		return false, "deny: blocked"
	}
	chain := w.folderChain(d)
	if (act == "edit" || act == "share") && slices.Contains(chain, dsArchive) {
		return false, "deny: archived"
	}
	if doc.Owner == user {
		return true, "allow: owner"
	}
	if act == "delete" {
		return false, "deny: not owner"
	}
	groups := w.memberOf(user)
	acls := []*DocshareACL{&doc.ACL}
	for _, f := range chain {
		acls = append(acls, &w.Folders[f].ACL)
	}
	named := func(users, grps func(*DocshareACL) []int) bool {
		for _, a := range acls {
			if slices.Contains(users(a), user) {
				return true
			}
			for _, g := range grps(a) {
				if slices.Contains(groups, g) {
					return true
				}
			}
		}
		return false
	}
	editor := named(func(a *DocshareACL) []int { return a.EditorUsers }, func(a *DocshareACL) []int { return a.EditorGroups })
	viewer := named(func(a *DocshareACL) []int { return a.ViewerUsers }, func(a *DocshareACL) []int { return a.ViewerGroups })
	switch act {
	case "view":
		if editor || viewer {
			return true, "allow: shared"
		}
		if doc.Public {
			return true, "allow: public"
		}
		return false, "deny: no access"
	case "edit", "share":
		if editor {
			if act == "edit" || doc.Sharable {
				return true, "allow: editor"
			}
			return false, "deny: sharing disabled"
		}
		if viewer || doc.Public {
			return false, "deny: read only"
		}
		return false, "deny: no access"
	}
	return false, "deny: unknown action"
}

// relevant returns the entities a decision on (user, doc) needs: the user, its groups, the
// document and the folders above it.
func (w *DocshareWorld) relevant(user, d int) []dsRef {
	out := []dsRef{{dsUser, user}}
	for _, g := range w.memberOf(user) {
		out = append(out, dsRef{dsGroup, g})
	}
	out = append(out, dsRef{dsDocument, d})
	for _, f := range w.folderChain(d) {
		out = append(out, dsRef{dsFolderKind, f})
	}
	return out
}

// related returns entities an application would plausibly send along with a request on doc d
// although the decision does not need them: the owner, everyone named on the access and blocked
// lists, the other documents of its folder and the folders inside it.
func (w *DocshareWorld) related(d int) []dsRef {
	doc := &w.Docs[d]
	out := []dsRef{{dsUser, doc.Owner}}
	for _, u := range doc.Blocked {
		out = append(out, dsRef{dsUser, u})
	}
	acls := []*DocshareACL{&doc.ACL}
	for _, f := range w.folderChain(d) {
		acls = append(acls, &w.Folders[f].ACL)
	}
	for _, a := range acls {
		for _, u := range slices.Concat(a.ViewerUsers, a.EditorUsers) {
			out = append(out, dsRef{dsUser, u})
		}
		for _, g := range slices.Concat(a.ViewerGroups, a.EditorGroups) {
			out = append(out, dsRef{dsGroup, g})
		}
	}
	for i := range w.Docs {
		if i != d && w.Docs[i].Folder == doc.Folder {
			out = append(out, dsRef{dsDocument, i})
		}
	}
	for i := range w.Folders {
		if w.Folders[i].Parent == doc.Folder {
			out = append(out, dsRef{dsFolderKind, i})
		}
	}
	return out
}

// dsAttr is one attribute of an entity; value is a bool, a dsRef or a []dsRef (a set).
type dsAttr struct {
	name  string
	value any
}

// entity returns an entity's attributes and parents, in one form both encodings are written
// from.
func (w *DocshareWorld) entity(r dsRef) (attrs []dsAttr, parents []dsRef) {
	refs := func(kind dsKind, idx []int) []dsRef {
		out := make([]dsRef, 0, len(idx))
		for _, i := range idx {
			out = append(out, dsRef{kind, i})
		}
		return out
	}
	aclAttrs := func(a *DocshareACL) []dsAttr {
		return []dsAttr{
			{"viewerUsers", refs(dsUser, a.ViewerUsers)},
			{"viewerGroups", refs(dsGroup, a.ViewerGroups)},
			{"editorUsers", refs(dsUser, a.EditorUsers)},
			{"editorGroups", refs(dsGroup, a.EditorGroups)},
		}
	}
	switch r.kind {
	case dsUser:
		return nil, refs(dsGroup, w.UserGroups[r.idx])
	case dsGroup:
		return nil, refs(dsGroup, w.GroupParents[r.idx])
	case dsFolderKind:
		f := &w.Folders[r.idx]
		parents = []dsRef{}
		if f.Parent >= 0 {
			attrs = append(attrs, dsAttr{"parent", dsRef{dsFolderKind, f.Parent}})
			parents = append(parents, dsRef{dsFolderKind, f.Parent})
		}
		return append(attrs, aclAttrs(&f.ACL)...), parents
	}
	doc := &w.Docs[r.idx]
	folder := dsRef{dsFolderKind, doc.Folder}
	attrs = []dsAttr{
		{"folder", folder},
		{"owner", dsRef{dsUser, doc.Owner}},
		{"public", doc.Public},
		{"sharable", doc.Sharable},
		{"blocked", refs(dsUser, doc.Blocked)},
	}
	return append(attrs, aclAttrs(&doc.ACL)...), []dsRef{folder}
}

// dsRegoInput is the Rego input of one request.
type dsRegoInput struct {
	Principal string                  `json:"principal"`
	Action    string                  `json:"action"`
	Resource  string                  `json:"resource"`
	Entities  map[string]dsRegoEntity `json:"entities"`
}

type dsRegoEntity struct {
	Attrs   map[string]any `json:"attrs"`
	Parents []string       `json:"parents"`
}

// rego writes the request as the Rego input: entities keyed "Type::id", references as
// "Type::id" strings and sets as arrays.
func (q DocshareRequest) rego() []byte {
	in := dsRegoInput{
		Principal: dsRef{dsUser, q.user}.key(),
		Action:    q.action,
		Resource:  dsRef{dsDocument, q.doc}.key(),
		Entities:  map[string]dsRegoEntity{},
	}
	keys := func(rs []dsRef) []string {
		out := make([]string, 0, len(rs))
		for _, r := range rs {
			out = append(out, r.key())
		}
		return out
	}
	for _, r := range q.entities {
		attrs, parents := q.world.entity(r)
		e := dsRegoEntity{Attrs: map[string]any{}, Parents: keys(parents)}
		for _, a := range attrs {
			switch v := a.value.(type) {
			case dsRef:
				e.Attrs[a.name] = v.key()
			case []dsRef:
				e.Attrs[a.name] = keys(v)
			default:
				e.Attrs[a.name] = v
			}
		}
		in.Entities[r.key()] = e
	}
	return mustJSON(in)
}

// DocshareRef names an entity of the world by its type ("User", "Group", "Folder",
// "Document") and id.
type DocshareRef struct{ Type, ID string }

// DocshareEntity is an entity a request carries: its attributes, in the model's order, and the
// entities it is in.
type DocshareEntity struct {
	Ref     DocshareRef
	Attrs   []DocshareAttr
	Parents []DocshareRef
}

// DocshareAttr is one attribute of an entity; Value is a bool, a DocshareRef or a
// []DocshareRef (a set).
type DocshareAttr struct {
	Name  string
	Value any
}

func (r dsRef) ref() DocshareRef { return DocshareRef{r.typ(), r.id()} }

// Principal is the user who asks.
func (q DocshareRequest) Principal() DocshareRef { return dsRef{dsUser, q.user}.ref() }

// Action is what the user asks to do: view, edit, share or delete.
func (q DocshareRequest) Action() string { return q.action }

// Resource is the document asked about.
func (q DocshareRequest) Resource() DocshareRef { return dsRef{dsDocument, q.doc}.ref() }

// Entities are the entities the request carries, in the order it carries them: every one its
// decision reads, padded with others.
func (q DocshareRequest) Entities() []DocshareEntity {
	out := make([]DocshareEntity, 0, len(q.entities))
	for _, r := range q.entities {
		attrs, parents := q.world.entity(r)
		e := DocshareEntity{Ref: r.ref(), Parents: make([]DocshareRef, 0, len(parents))}
		for _, p := range parents {
			e.Parents = append(e.Parents, p.ref())
		}
		for _, a := range attrs {
			v := a.value
			switch x := v.(type) {
			case dsRef:
				v = x.ref()
			case []dsRef:
				set := make([]DocshareRef, 0, len(x))
				for _, y := range x {
					set = append(set, y.ref())
				}
				v = set
			}
			e.Attrs = append(e.Attrs, DocshareAttr{a.name, v})
		}
		out = append(out, e)
	}
	return out
}

// Request is user's request to do action to document doc, carrying the entities its decision
// reads and those related to the document, as a hand-written case asks it.
func (w *DocshareWorld) Request(user int, action string, doc int) DocshareRequest {
	q := DocshareRequest{world: w, user: user, action: action, doc: doc, entities: w.relevant(user, doc)}
	for _, e := range w.related(doc) {
		if !slices.Contains(q.entities, e) {
			q.entities = append(q.entities, e)
		}
	}
	return q
}

// Decide is the reference model's decision of user's request to do action to document doc, and
// the rule that made it.
func (w *DocshareWorld) Decide(user int, action string, doc int) (allow bool, reason string) {
	return docshareDecide(w, user, action, doc)
}

// dsPick returns k distinct values below n, none of them in avoid, in the order drawn.
func dsPick(r *rand.Rand, k, n int, avoid ...int) []int {
	out := make([]int, 0, k)
	for len(out) < k {
		v := r.IntN(n)
		if !slices.Contains(out, v) && !slices.Contains(avoid, v) {
			out = append(out, v)
		}
	}
	return out
}

// newDocshareWorld generates the world from r.
func newDocshareWorld(r *rand.Rand) *DocshareWorld {
	w := &DocshareWorld{
		UserGroups:   make([][]int, dsUsers),
		GroupParents: make([][]int, dsGroups),
		Folders:      make([]DocshareFolder, dsFolders),
		Docs:         make([]DocshareDoc, dsDocs),
	}
	// Groups nest: a group may join one or two earlier groups, keeping every chain of
	// memberships within dsMaxGroupDepth groups.
	groupDepth := make([]int, dsGroups)
	for g := range dsGroups {
		groupDepth[g] = 1
		w.GroupParents[g] = []int{}
		if g == 0 || r.IntN(2) == 0 {
			continue
		}
		k := 1
		if r.IntN(6) == 0 {
			k = 2
		}
		for _, p := range dsPick(r, min(k, g), g) {
			if groupDepth[p] < dsMaxGroupDepth {
				w.GroupParents[g] = append(w.GroupParents[g], p)
				groupDepth[g] = max(groupDepth[g], groupDepth[p]+1)
			}
		}
	}
	for u := range dsUsers {
		k := 0
		switch p := r.IntN(20); {
		case p < 7:
		case p < 16:
			k = 1
		default:
			k = 2
		}
		w.UserGroups[u] = dsPick(r, k, dsGroups)
	}
	acl := func(sparse bool) DocshareACL {
		list := func(n, of int) []int {
			if r.IntN(2) == 0 || (sparse && r.IntN(2) == 0) {
				return []int{}
			}
			return dsPick(r, 1+r.IntN(n), of)
		}
		return DocshareACL{
			ViewerUsers:  list(3, dsUsers),
			ViewerGroups: list(2, dsGroups),
			EditorUsers:  list(2, dsUsers),
			EditorGroups: list(1, dsGroups),
		}
	}
	// The archive and five other root folders; every later folder goes in an earlier one that
	// leaves room for it under dsMaxFolderDepth. Folders high up share with fewer people.
	for f := range dsFolders {
		fo := DocshareFolder{Parent: -1, Depth: 1}
		if f > 5 {
			for {
				p := r.IntN(f)
				if w.Folders[p].Depth < dsMaxFolderDepth {
					fo.Parent, fo.Depth = p, w.Folders[p].Depth+1
					break
				}
			}
		}
		fo.ACL = acl(fo.Depth < 3)
		w.Folders[f] = fo
	}
	for d := range dsDocs {
		doc := DocshareDoc{
			Folder:   r.IntN(dsFolders),
			Owner:    r.IntN(dsUsers),
			Public:   r.IntN(5) == 0,
			Sharable: r.IntN(5) < 3,
			Blocked:  []int{},
		}
		if r.IntN(6) == 0 {
			doc.Blocked = dsPick(r, 1+r.IntN(2), dsUsers, doc.Owner)
		}
		doc.ACL = acl(false)
		w.Docs[d] = doc
	}
	return w
}

// docshareActions are the actions with their share of the requests, in percent.
var docshareActions = []struct {
	name  string
	share int
}{{"view", 40}, {"edit", 25}, {"share", 15}, {"delete", 20}}

// buildDocshare returns the builder of the docshare workload whose requests carry n entities
// each. All sizes draw from the same world; requests are drawn among those whose relevant
// entities fit in n, then padded to n with related entities and then unrelated ones.
func buildDocshare(n int) func(seed int64, count int) (*Workload, error) {
	return func(seed int64, count int) (*Workload, error) {
		if n < dsMinEntities || n > dsEntities {
			return nil, fmt.Errorf("docshare needs %d to %d entities per request, not %d", dsMinEntities, dsEntities, n)
		}
		name := docshareName(n)
		world := newDocshareWorld(newDocshareRand(seed))
		// Each size draws its own requests from the same world.
		r := rand.New(rand.NewPCG(uint64(seed), 0x64736872_00000000|uint64(n)))
		w := docshareWorkload(name, n)
		w.Model = world
		w.Relationships = &RelationshipWorld{Family: "docshare"}
		for range count {
			q, err := world.request(r, n)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			allow, reason := docshareDecide(world, q.user, q.action, q.doc)
			w.Relationships.Checks = append(w.Relationships.Checks, q.check(len(world.relevant(q.user, q.doc))))
			w.Inputs = append(w.Inputs, Input{JSON: q.rego(), Expect: expectOf(allow), Reason: reason, Model: q})
		}
		return w, nil
	}
}

// newDocshareRand is the random source the world is generated from.
func newDocshareRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x64736872)) // "dshr"
}

// docshareWorkload is a docshare workload without inputs. It has no data: every request carries
// its entities.
func docshareWorkload(name string, n int) *Workload {
	return &Workload{
		Name:        name,
		Description: docshareDescription(n),
	}
}

// request draws one request whose relevant entities fit in n and pads it to n entities.
func (w *DocshareWorld) request(r *rand.Rand, n int) (DocshareRequest, error) {
	for range 10000 {
		d := r.IntN(dsDocs)
		doc := &w.Docs[d]
		var act string
		p := r.IntN(100)
		for _, a := range docshareActions {
			if p < a.share {
				act = a.name
				break
			}
			p -= a.share
		}
		fits := func(u int) bool { return 2+len(w.memberOf(u))+len(w.folderChain(d)) <= n }
		var user int
		switch p := r.IntN(100); {
		case p < 20:
			user = doc.Owner
		case p < 25 && len(doc.Blocked) > 0:
			user = doc.Blocked[r.IntN(len(doc.Blocked))]
		case p < 65:
			// Someone the document is shared with, directly or through a group or a folder.
			var named []int
			for u := range dsUsers {
				if u != doc.Owner && fits(u) && w.sharedWith(u, d) {
					named = append(named, u)
				}
			}
			if len(named) == 0 {
				continue
			}
			user = named[r.IntN(len(named))]
		default:
			user = r.IntN(dsUsers)
		}
		if !fits(user) {
			continue
		}
		q := DocshareRequest{world: w, user: user, action: act, doc: d, entities: w.relevant(user, d)}
		has := func(e dsRef) bool { return slices.Contains(q.entities, e) }
		related := w.related(d)
		r.Shuffle(len(related), func(i, j int) { related[i], related[j] = related[j], related[i] })
		for _, e := range related {
			if len(q.entities) == n {
				break
			}
			if !has(e) {
				q.entities = append(q.entities, e)
			}
		}
		for len(q.entities) < n {
			var e dsRef
			switch p := r.IntN(10); {
			case p < 4:
				e = dsRef{dsUser, r.IntN(dsUsers)}
			case p < 6:
				e = dsRef{dsGroup, r.IntN(dsGroups)}
			case p < 7:
				e = dsRef{dsFolderKind, r.IntN(dsFolders)}
			default:
				e = dsRef{dsDocument, r.IntN(dsDocs)}
			}
			if !has(e) {
				q.entities = append(q.entities, e)
			}
		}
		return q, nil
	}
	return DocshareRequest{}, fmt.Errorf("no request fits in %d entities", n)
}

// sharedWith reports whether a viewer or editor list of document d or a folder above it names
// user u or a group u is in.
func (w *DocshareWorld) sharedWith(u, d int) bool {
	groups := w.memberOf(u)
	acls := []*DocshareACL{&w.Docs[d].ACL}
	for _, f := range w.folderChain(d) {
		acls = append(acls, &w.Folders[f].ACL)
	}
	for _, a := range acls {
		if slices.Contains(a.ViewerUsers, u) || slices.Contains(a.EditorUsers, u) {
			return true
		}
		for _, g := range slices.Concat(a.ViewerGroups, a.EditorGroups) {
			if slices.Contains(groups, g) {
				return true
			}
		}
	}
	return false
}
