package workload

import (
	"slices"
	"testing"
)

// MarshalJSON writes the request as the Rego input, so hand-written cases (checkHandCases
// encodes them as JSON) encode as generated ones.
func (q DocshareRequest) MarshalJSON() ([]byte, error) { return q.rego(), nil }

func TestDocshareMatchesReferenceModel(t *testing.T) {
	for _, n := range docshareSizes {
		t.Run(docshareName(n), func(t *testing.T) {
			w, err := buildDocshare(n)(DefaultSeed, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if w.Name != docshareName(n) || w.Description == "" {
				t.Errorf("workload identity: name %q, description %q", w.Name, w.Description)
			}
			allows, _, _ := w.Counts()
			if share := float64(allows) / float64(len(w.Inputs)); share < 0.40 || share > 0.60 {
				t.Errorf("%.1f %% of the inputs expect allow; want 40 to 60 %%", 100*share)
			}
			reasons := checkInputs(t, w)
			for _, want := range []string{"deny: blocked", "deny: archived", "deny: not owner",
				"deny: sharing disabled", "deny: read only", "deny: no access"} {
				if reasons[want] == 0 {
					t.Errorf("no input is denied for %q; deny reasons %v", want, reasons)
				}
			}
			allowReasons := map[string]int{}
			for _, in := range w.Inputs {
				if in.Expect == ExpectAllow {
					allowReasons[in.Reason]++
				}
			}
			for _, want := range []string{"allow: owner", "allow: public", "allow: shared", "allow: editor"} {
				if allowReasons[want] == 0 {
					t.Errorf("no input is allowed for %q; allow reasons %v", want, allowReasons)
				}
			}
		})
	}
}

func TestDocshareGeneratedWorldStaysWithinBounds(t *testing.T) {
	for _, seed := range []int64{DefaultSeed, 1, 2, 3} {
		world := newDocshareWorld(newDocshareRand(seed))
		for g := range world.GroupParents {
			if len(world.GroupParents[g]) > 0 && slices.Max(world.GroupParents[g]) >= g {
				t.Fatalf("seed %d: group %d joins a later group; groups must not form cycles", seed, g)
			}
		}
		for d := range world.Docs {
			if depth := len(world.folderChain(d)); depth > dsMaxFolderDepth || depth != world.Folders[world.Docs[d].Folder].Depth {
				// The Cedar policies read the lists of dsMaxFolderDepth folders, no more.
				t.Fatalf("seed %d: document %d is %d folders deep (its folder says %d); the Cedar policies read %d",
					seed, d, depth, world.Folders[world.Docs[d].Folder].Depth, dsMaxFolderDepth)
			}
		}
	}
}

func TestDocshareNamesSortBySize(t *testing.T) {
	names := Names()
	at := func(name string) int {
		i := slices.Index(names, name)
		if i < 0 {
			t.Fatalf("%s is not among %v", name, names)
		}
		return i
	}
	prev := at("risk")
	for _, n := range docshareSizes {
		i := at(docshareName(n))
		if i <= prev {
			t.Errorf("Names() = %v: %s is not after %s", names, docshareName(n), names[prev])
		}
		prev = i
	}
}

// docshareHandWorld is a small world for the hand-written cases:
//
//	groups: g0; g1 in g0; g2 in g1; g3 on its own
//	users:  u0 owns every document; u1 in g2; u2 in no group; u3 in g1; u4 in g2; u5 in no
//	        group; u6 in no group; u7 in g3
//	folders: archive > f5; f1 > f2 > f3 > f4 (four deep)
//	         f1 lists group g0 as editors, f3 lists u5 as a viewer
//	doc 0 in f4: private, sharable, u4 blocked
//	doc 1 in f2: public, not sharable, u2 an editor
//	doc 2 in f5 (archived): private, sharable, group g1 viewers
func docshareHandWorld() *DocshareWorld {
	none := []int{}
	empty := DocshareACL{none, none, none, none}
	folder := func(parent, depth int, acl DocshareACL) DocshareFolder {
		return DocshareFolder{Parent: parent, Depth: depth, ACL: acl}
	}
	return &DocshareWorld{
		UserGroups:   [][]int{none, {2}, none, {1}, {2}, none, none, {3}},
		GroupParents: [][]int{none, {0}, {1}, none},
		Folders: []DocshareFolder{
			dsArchive: folder(-1, 1, empty),
			1:         folder(-1, 1, DocshareACL{none, none, none, []int{0}}),
			2:         folder(1, 2, empty),
			3:         folder(2, 3, DocshareACL{[]int{5}, none, none, none}),
			4:         folder(3, 4, empty),
			5:         folder(dsArchive, 2, empty),
		},
		Docs: []DocshareDoc{
			{Folder: 4, Owner: 0, Sharable: true, Blocked: []int{4}, ACL: empty},
			{Folder: 2, Owner: 0, Public: true, Blocked: none, ACL: DocshareACL{none, none, []int{2}, none}},
			{Folder: 5, Owner: 0, Sharable: true, Blocked: none, ACL: DocshareACL{none, []int{1}, none, none}},
		},
	}
}

func TestDocshareDecide(t *testing.T) {
	world := docshareHandWorld()
	req := world.Request
	tests := []handCase[DocshareRequest]{
		{"owner views", req(0, "view", 0), true, "allow: owner"},
		{"owner shares", req(0, "share", 0), true, "allow: owner"},
		{"owner deletes", req(0, "delete", 1), true, "allow: owner"},
		{"owner deletes an archived document", req(0, "delete", 2), true, "allow: owner"},
		{"archived documents are read-only even for their owner", req(0, "edit", 2), false, "deny: archived"},
		{"archived documents are never shared", req(0, "share", 2), false, "deny: archived"},
		{"archive forbids before the viewer list answers", req(3, "edit", 2), false, "deny: archived"},
		{"viewer group on the document", req(3, "view", 2), true, "allow: shared"},
		{"nested group member of a viewer group", req(1, "view", 2), true, "allow: shared"},
		{"editor through nested groups on a folder four levels up", req(1, "edit", 0), true, "allow: editor"},
		{"editors may view", req(1, "view", 0), true, "allow: shared"},
		{"editors share a sharable document", req(1, "share", 0), true, "allow: editor"},
		{"editors may not delete", req(1, "delete", 0), false, "deny: not owner"},
		{"blocked editor may do nothing", req(4, "view", 0), false, "deny: blocked"},
		{"blocked editor may not edit", req(4, "edit", 0), false, "deny: blocked"},
		{"viewer named on a folder above", req(5, "view", 0), true, "allow: shared"},
		{"viewer may not edit", req(5, "edit", 0), false, "deny: read only"},
		{"viewer may not share", req(5, "share", 0), false, "deny: read only"},
		{"stranger sees nothing", req(6, "view", 0), false, "deny: no access"},
		{"stranger edits nothing", req(6, "edit", 0), false, "deny: no access"},
		{"an unrelated group grants nothing", req(7, "view", 0), false, "deny: no access"},
		{"anyone views a public document", req(6, "view", 1), true, "allow: public"},
		{"public does not mean editable", req(6, "edit", 1), false, "deny: read only"},
		{"direct editor edits", req(2, "edit", 1), true, "allow: editor"},
		{"editor may not share an unsharable document", req(2, "share", 1), false, "deny: sharing disabled"},
		{"group editor on a folder above edits", req(3, "edit", 1), true, "allow: editor"},
		{"group editor may not share an unsharable document", req(3, "share", 1), false, "deny: sharing disabled"},
		{"stranger may not delete", req(6, "delete", 1), false, "deny: not owner"},
	}
	w := docshareWorkload("docshare-5", 5)
	w.Name = "docshare (hand cases)"
	checkHandCases(t, w, tests, func(q DocshareRequest) (bool, string) { return docshareDecide(world, q.user, q.action, q.doc) })
}

// docshare's relationship checks carry every entity of the request as relationships, in the
// order the request carries the entities, and the relationships the decision reads first:
// Reads counts exactly those of the user, its groups, the document and its folders, so that
// an engine that can carry only some of them (OpenFGA's 100 contextual tuples) knows which it
// must carry, and the world stores nothing.
func TestDocshareChecksCarryTheirEntities(t *testing.T) {
	for _, name := range []string{"docshare-5", "docshare-20", "docshare-200"} {
		t.Run(name, func(t *testing.T) {
			w, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			rw := w.Relationships
			if rw == nil || rw.Family != "docshare" || len(rw.Relationships) != 0 || len(rw.Checks) != len(w.Inputs) {
				t.Fatalf("relationship world %+v for %d inputs", rw, len(w.Inputs))
			}
			world := newDocshareWorld(newDocshareRand(DefaultSeed))
			for i, c := range rw.Checks {
				q := w.Inputs[i].Model.(DocshareRequest)
				if c.Subject != (dsRef{dsUser, q.user}).object() || c.Resource != (dsRef{dsDocument, q.doc}).object() || c.Permission != "can_"+q.action {
					t.Fatalf("input %d: %+v asks another request than %s", i, c, w.Inputs[i].JSON)
				}
				var reads, all []Relationship
				for j, e := range q.entities {
					all = append(all, world.relationships(e)...)
					if j < len(world.relevant(q.user, q.doc)) {
						reads = slices.Clone(all)
					}
				}
				if !slices.Equal(c.Carried, all) || c.Reads != len(reads) || !slices.Equal(c.Carried[:c.Reads], reads) {
					t.Fatalf("input %d: carries %d relationships, reads %d; want %d, %d", i, len(c.Carried), c.Reads, len(all), len(reads))
				}
			}
		})
	}
}
