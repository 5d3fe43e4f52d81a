package workload

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
)

//go:embed policies/docshare.rego
var docsharePolicy []byte

//go:embed policies/docshare.cedar
var docshareCedarPolicy []byte

//go:embed policies/docshare.cedarschema
var docshareCedarSchema []byte

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
			"tuples, at most %d per Check, the rest stored before the clock", dsMinEntities, dsEntities, joinInts(docshareSizes), dsMaxContextualTuples),
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

// dsACL are the access lists of a document or folder: users and groups named directly.
type dsACL struct {
	viewerUsers, viewerGroups, editorUsers, editorGroups []int
}

type dsFolder struct {
	parent int // -1 for a root folder
	depth  int
	acl    dsACL
}

type dsDoc struct {
	folder, owner    int
	public, sharable bool
	blocked          []int
	acl              dsACL
}

// dsWorld is the users, groups, folders and documents of the docshare workload.
type dsWorld struct {
	userGroups   [][]int // groups each user is a direct member of
	groupParents [][]int // groups each group is a direct member of
	folders      []dsFolder
	docs         []dsDoc
}

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

// dsRequest is one docshare request: who does what to which document, and the entities the
// request carries. It encodes to JSON as the Rego input.
type dsRequest struct {
	world    *dsWorld
	user     int
	action   string
	doc      int
	entities []dsRef
}

// memberOf returns the groups user u is in, directly or through nested groups, in the order a
// breadth-first walk finds them.
func (w *dsWorld) memberOf(u int) []int {
	var out []int
	queue := slices.Clone(w.userGroups[u])
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		if slices.Contains(out, g) {
			continue
		}
		out = append(out, g)
		queue = append(queue, w.groupParents[g]...)
	}
	return out
}

// folderChain returns the folder of document d and every folder above it, innermost first.
func (w *dsWorld) folderChain(d int) []int {
	var out []int
	for f := w.docs[d].folder; f >= 0; f = w.folders[f].parent {
		out = append(out, f)
	}
	return out
}

// docshareDecide is the reference model of policies/docshare.rego and docshare.cedar, written
// in Go from the same specification over the world itself rather than the entities a request
// carries. The reason names the rule that decided.
func docshareDecide(w *dsWorld, user int, act string, d int) (allow bool, reason string) {
	doc := &w.docs[d]
	if slices.Contains(doc.blocked, user) {
		return false, "deny: blocked"
	}
	chain := w.folderChain(d)
	if (act == "edit" || act == "share") && slices.Contains(chain, dsArchive) {
		return false, "deny: archived"
	}
	if doc.owner == user {
		return true, "allow: owner"
	}
	if act == "delete" {
		return false, "deny: not owner"
	}
	groups := w.memberOf(user)
	acls := []*dsACL{&doc.acl}
	for _, f := range chain {
		acls = append(acls, &w.folders[f].acl)
	}
	named := func(users, grps func(*dsACL) []int) bool {
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
	editor := named(func(a *dsACL) []int { return a.editorUsers }, func(a *dsACL) []int { return a.editorGroups })
	viewer := named(func(a *dsACL) []int { return a.viewerUsers }, func(a *dsACL) []int { return a.viewerGroups })
	switch act {
	case "view":
		if editor || viewer {
			return true, "allow: shared"
		}
		if doc.public {
			return true, "allow: public"
		}
		return false, "deny: no access"
	case "edit", "share":
		if editor {
			if act == "edit" || doc.sharable {
				return true, "allow: editor"
			}
			return false, "deny: sharing disabled"
		}
		if viewer || doc.public {
			return false, "deny: read only"
		}
		return false, "deny: no access"
	}
	return false, "deny: unknown action"
}

// relevant returns the entities a decision on (user, doc) needs: the user, its groups, the
// document and the folders above it.
func (w *dsWorld) relevant(user, d int) []dsRef {
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
func (w *dsWorld) related(d int) []dsRef {
	doc := &w.docs[d]
	out := []dsRef{{dsUser, doc.owner}}
	for _, u := range doc.blocked {
		out = append(out, dsRef{dsUser, u})
	}
	acls := []*dsACL{&doc.acl}
	for _, f := range w.folderChain(d) {
		acls = append(acls, &w.folders[f].acl)
	}
	for _, a := range acls {
		for _, u := range slices.Concat(a.viewerUsers, a.editorUsers) {
			out = append(out, dsRef{dsUser, u})
		}
		for _, g := range slices.Concat(a.viewerGroups, a.editorGroups) {
			out = append(out, dsRef{dsGroup, g})
		}
	}
	for i := range w.docs {
		if i != d && w.docs[i].folder == doc.folder {
			out = append(out, dsRef{dsDocument, i})
		}
	}
	for i := range w.folders {
		if w.folders[i].parent == doc.folder {
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
func (w *dsWorld) entity(r dsRef) (attrs []dsAttr, parents []dsRef) {
	refs := func(kind dsKind, idx []int) []dsRef {
		out := make([]dsRef, 0, len(idx))
		for _, i := range idx {
			out = append(out, dsRef{kind, i})
		}
		return out
	}
	aclAttrs := func(a *dsACL) []dsAttr {
		return []dsAttr{
			{"viewerUsers", refs(dsUser, a.viewerUsers)},
			{"viewerGroups", refs(dsGroup, a.viewerGroups)},
			{"editorUsers", refs(dsUser, a.editorUsers)},
			{"editorGroups", refs(dsGroup, a.editorGroups)},
		}
	}
	switch r.kind {
	case dsUser:
		return nil, refs(dsGroup, w.userGroups[r.idx])
	case dsGroup:
		return nil, refs(dsGroup, w.groupParents[r.idx])
	case dsFolderKind:
		f := &w.folders[r.idx]
		parents = []dsRef{}
		if f.parent >= 0 {
			attrs = append(attrs, dsAttr{"parent", dsRef{dsFolderKind, f.parent}})
			parents = append(parents, dsRef{dsFolderKind, f.parent})
		}
		return append(attrs, aclAttrs(&f.acl)...), parents
	}
	doc := &w.docs[r.idx]
	folder := dsRef{dsFolderKind, doc.folder}
	attrs = []dsAttr{
		{"folder", folder},
		{"owner", dsRef{dsUser, doc.owner}},
		{"public", doc.public},
		{"sharable", doc.sharable},
		{"blocked", refs(dsUser, doc.blocked)},
	}
	return append(attrs, aclAttrs(&doc.acl)...), []dsRef{folder}
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
func (q dsRequest) rego() []byte {
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

// cedar writes the request as a Cedar request carrying its entities.
func (q dsRequest) cedar() []byte {
	uid := func(r dsRef) cedarUID { return cedarUID{r.typ(), r.id()} }
	req := cedarRequest{
		Principal: uid(dsRef{dsUser, q.user}),
		Action:    action(q.action),
		Resource:  uid(dsRef{dsDocument, q.doc}),
		Context:   map[string]any{},
		Entities:  []cedarEntity{},
	}
	for _, r := range q.entities {
		attrs, parents := q.world.entity(r)
		e := cedarEntity{UID: uid(r), Attrs: map[string]any{}, Parents: make([]cedarUID, 0, len(parents))}
		for _, p := range parents {
			e.Parents = append(e.Parents, uid(p))
		}
		for _, a := range attrs {
			switch v := a.value.(type) {
			case dsRef:
				e.Attrs[a.name] = cedarRef(v.typ(), v.id())
			case []dsRef:
				set := make([]any, 0, len(v))
				for _, x := range v {
					set = append(set, cedarRef(x.typ(), x.id()))
				}
				e.Attrs[a.name] = set
			default:
				e.Attrs[a.name] = v
			}
		}
		req.Entities = append(req.Entities, e)
	}
	return mustJSON(req)
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
func newDocshareWorld(r *rand.Rand) *dsWorld {
	w := &dsWorld{
		userGroups:   make([][]int, dsUsers),
		groupParents: make([][]int, dsGroups),
		folders:      make([]dsFolder, dsFolders),
		docs:         make([]dsDoc, dsDocs),
	}
	// Groups nest: a group may join one or two earlier groups, keeping every chain of
	// memberships within dsMaxGroupDepth groups.
	groupDepth := make([]int, dsGroups)
	for g := range dsGroups {
		groupDepth[g] = 1
		w.groupParents[g] = []int{}
		if g == 0 || r.IntN(2) == 0 {
			continue
		}
		k := 1
		if r.IntN(6) == 0 {
			k = 2
		}
		for _, p := range dsPick(r, min(k, g), g) {
			if groupDepth[p] < dsMaxGroupDepth {
				w.groupParents[g] = append(w.groupParents[g], p)
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
		w.userGroups[u] = dsPick(r, k, dsGroups)
	}
	acl := func(sparse bool) dsACL {
		list := func(n, of int) []int {
			if r.IntN(2) == 0 || (sparse && r.IntN(2) == 0) {
				return []int{}
			}
			return dsPick(r, 1+r.IntN(n), of)
		}
		return dsACL{
			viewerUsers:  list(3, dsUsers),
			viewerGroups: list(2, dsGroups),
			editorUsers:  list(2, dsUsers),
			editorGroups: list(1, dsGroups),
		}
	}
	// The archive and five other root folders; every later folder goes in an earlier one that
	// leaves room for it under dsMaxFolderDepth. Folders high up share with fewer people.
	for f := range dsFolders {
		fo := dsFolder{parent: -1, depth: 1}
		if f > 5 {
			for {
				p := r.IntN(f)
				if w.folders[p].depth < dsMaxFolderDepth {
					fo.parent, fo.depth = p, w.folders[p].depth+1
					break
				}
			}
		}
		fo.acl = acl(fo.depth < 3)
		w.folders[f] = fo
	}
	for d := range dsDocs {
		doc := dsDoc{
			folder:   r.IntN(dsFolders),
			owner:    r.IntN(dsUsers),
			public:   r.IntN(5) == 0,
			sharable: r.IntN(5) < 3,
			blocked:  []int{},
		}
		if r.IntN(6) == 0 {
			doc.blocked = dsPick(r, 1+r.IntN(2), dsUsers, doc.owner)
		}
		doc.acl = acl(false)
		w.docs[d] = doc
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
		var stored []FGATuple
		overflowing := 0
		for range count {
			q, err := world.request(r, n)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			allow, reason := docshareDecide(world, q.user, q.action, q.doc)
			check, beyond, err := q.fgaCheck(len(world.relevant(q.user, q.doc)))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if len(beyond) > 0 {
				overflowing++
				stored = append(stored, beyond...)
			}
			w.Inputs = append(w.Inputs, Input{JSON: q.rego(), Expect: expectOf(allow), Reason: reason, Cedar: q.cedar(), OpenFGA: check})
		}
		w.OpenFGA = docshareOpenFGA(stored, overflowing, count)
		return w, nil
	}
}

// newDocshareRand is the random source the world is generated from.
func newDocshareRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x64736872)) // "dshr"
}

// docshareWorkload is a docshare workload without inputs. It has no data and no Cedar entity
// store: every request carries its entities.
func docshareWorkload(name string, n int) *Workload {
	return &Workload{
		Name:        name,
		Description: docshareDescription(n),
		Query:       "data.authzbench.docshare.allow",
		Policies:    []File{{Name: "docshare.rego", Content: docsharePolicy}},
		Cedar: &Cedar{
			Policies: []File{{Name: "docshare.cedar", Content: docshareCedarPolicy}},
			Schema:   &File{Name: "docshare.cedarschema", Content: docshareCedarSchema},
		},
	}
}

// request draws one request whose relevant entities fit in n and pads it to n entities.
func (w *dsWorld) request(r *rand.Rand, n int) (dsRequest, error) {
	for range 10000 {
		d := r.IntN(dsDocs)
		doc := &w.docs[d]
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
			user = doc.owner
		case p < 25 && len(doc.blocked) > 0:
			user = doc.blocked[r.IntN(len(doc.blocked))]
		case p < 65:
			// Someone the document is shared with, directly or through a group or a folder.
			var named []int
			for u := range dsUsers {
				if u != doc.owner && fits(u) && w.sharedWith(u, d) {
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
		q := dsRequest{world: w, user: user, action: act, doc: d, entities: w.relevant(user, d)}
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
	return dsRequest{}, fmt.Errorf("no request fits in %d entities", n)
}

// sharedWith reports whether a viewer or editor list of document d or a folder above it names
// user u or a group u is in.
func (w *dsWorld) sharedWith(u, d int) bool {
	groups := w.memberOf(u)
	acls := []*dsACL{&w.docs[d].acl}
	for _, f := range w.folderChain(d) {
		acls = append(acls, &w.folders[f].acl)
	}
	for _, a := range acls {
		if slices.Contains(a.viewerUsers, u) || slices.Contains(a.editorUsers, u) {
			return true
		}
		for _, g := range slices.Concat(a.viewerGroups, a.editorGroups) {
			if slices.Contains(groups, g) {
				return true
			}
		}
	}
	return false
}
