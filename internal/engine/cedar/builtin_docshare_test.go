package cedar

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/workload"
)

// Every docshare size's Cedar version decides its inputs as the reference model does, and is
// among the workloads Cedar runs.
func TestDocshareAgrees(t *testing.T) {
	names := workload.NamesWhere(Engine.Written)
	for _, n := range docshareSizes {
		name := fmt.Sprintf("docshare-%d", n)
		t.Run(name, func(t *testing.T) {
			if !slices.Contains(names, name) {
				t.Errorf("%s is not among the workloads with a Cedar version, %v", name, names)
			}
			checkAgainstModel(t, builtinOrFail(t, name))
		})
	}
}

// docshareSizes are the docshare workloads' sizes, entities per request.
var docshareSizes = []int{5, 10, 20, 50}

// Every request carries exactly N distinct entities, the same ones in Rego and in Cedar,
// including its principal and resource, and no entity store is loaded.
func TestDocshareRequestsCarryNEntities(t *testing.T) {
	for _, n := range docshareSizes {
		w := builtinOrFail(t, fmt.Sprintf("docshare-%d", n))
		if w.Data != nil || filesOf(w).Entities != nil {
			t.Errorf("%s: data %q, Cedar entities %q; want none, requests carry their entities", w.Name, w.Data, filesOf(w).Entities)
		}
		for i, in := range w.Inputs {
			var rego struct {
				Principal, Resource string
				Entities            map[string]json.RawMessage
			}
			if err := json.Unmarshal(in.JSON, &rego); err != nil {
				t.Fatal(err)
			}
			var ced struct {
				Principal, Resource uid
				Entities            []entity
			}
			if err := json.Unmarshal(Engine.Request(in), &ced); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, e := range ced.Entities {
				keys = append(keys, e.UID.Type+"::"+e.UID.ID)
			}
			slices.Sort(keys)
			keys = slices.Compact(keys)
			regoKeys := make([]string, 0, len(rego.Entities))
			for k := range rego.Entities {
				regoKeys = append(regoKeys, k)
			}
			slices.Sort(regoKeys)
			switch {
			case len(rego.Entities) != n || len(ced.Entities) != n || len(keys) != n:
				t.Fatalf("%s input %d: %d Rego entities, %d Cedar entities (%d distinct); want %d",
					w.Name, i, len(rego.Entities), len(ced.Entities), len(keys), n)
			case !slices.Equal(keys, regoKeys):
				t.Fatalf("%s input %d: Rego carries %v, Cedar %v", w.Name, i, regoKeys, keys)
			case rego.Entities[rego.Principal] == nil || rego.Entities[rego.Resource] == nil:
				t.Fatalf("%s input %d does not carry its principal and resource", w.Name, i)
			case rego.Principal != ced.Principal.Type+"::"+ced.Principal.ID || rego.Resource != ced.Resource.Type+"::"+ced.Resource.ID:
				t.Fatalf("%s input %d: Rego asks about %s on %s, Cedar about %v on %v", w.Name, i,
					rego.Principal, rego.Resource, ced.Principal, ced.Resource)
			}
		}
	}
}

// The entities the requests carry conform to the schema: the engine validates the store, not
// the entities a request brings, so load them all as a store once to check them.
func TestDocshareEntitiesMatchSchema(t *testing.T) {
	w := builtinOrFail(t, "docshare-50")
	seen := map[uid]bool{}
	var all []json.RawMessage
	for _, in := range w.Inputs {
		var req struct{ Entities []json.RawMessage }
		if err := json.Unmarshal(Engine.Request(in), &req); err != nil {
			t.Fatal(err)
		}
		for _, raw := range req.Entities {
			var e entity
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			if !seen[e.UID] {
				seen[e.UID] = true
				all = append(all, raw)
			}
		}
	}
	_, err := cedarengine.New(
		[]cedarengine.Source{{Name: "docshare.cedar", Text: docsharePolicy}},
		&cedarengine.Source{Name: "entities.json", Text: mustJSON(all)},
		&cedarengine.Source{Name: "docshare.cedarschema", Text: docshareSchema})
	if err != nil {
		t.Fatalf("%d distinct entities carried by the requests: %v", len(all), err)
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
func docshareHandWorld() *workload.DocshareWorld {
	acl := func(viewerUsers, viewerGroups, editorUsers, editorGroups []int) workload.DocshareACL {
		return workload.DocshareACL{ViewerUsers: viewerUsers, ViewerGroups: viewerGroups, EditorUsers: editorUsers, EditorGroups: editorGroups}
	}
	none := []int{}
	empty := acl(none, none, none, none)
	folder := func(parent, depth int, a workload.DocshareACL) workload.DocshareFolder {
		return workload.DocshareFolder{Parent: parent, Depth: depth, ACL: a}
	}
	return &workload.DocshareWorld{
		UserGroups:   [][]int{none, {2}, none, {1}, {2}, none, none, {3}},
		GroupParents: [][]int{none, {0}, {1}, none},
		Folders: []workload.DocshareFolder{
			workload.DocshareArchive: folder(-1, 1, empty),
			1:                        folder(-1, 1, acl(none, none, none, []int{0})),
			2:                        folder(1, 2, empty),
			3:                        folder(2, 3, acl([]int{5}, none, none, none)),
			4:                        folder(3, 4, empty),
			5:                        folder(workload.DocshareArchive, 2, empty),
		},
		Docs: []workload.DocshareDoc{
			{Folder: 4, Owner: 0, Sharable: true, Blocked: []int{4}, ACL: empty},
			{Folder: 2, Owner: 0, Public: true, Blocked: none, ACL: acl(none, none, []int{2}, none)},
			{Folder: 5, Owner: 0, Sharable: true, Blocked: none, ACL: acl(none, []int{1}, none, none)},
		},
	}
}

// docshare's hand-written cases (the workload's own TestDocshareDecide checks the model and OPA
// on them) decide in Cedar as in the reference model.
func TestDocshareHandCases(t *testing.T) {
	world := docshareHandWorld()
	req := world.Request
	tests := []handCase[workload.DocshareRequest]{
		{"owner views", req(0, "view", 0), true},
		{"owner shares", req(0, "share", 0), true},
		{"owner deletes", req(0, "delete", 1), true},
		{"owner deletes an archived document", req(0, "delete", 2), true},
		{"archived documents are read-only even for their owner", req(0, "edit", 2), false},
		{"archived documents are never shared", req(0, "share", 2), false},
		{"archive forbids before the viewer list answers", req(3, "edit", 2), false},
		{"viewer group on the document", req(3, "view", 2), true},
		{"nested group member of a viewer group", req(1, "view", 2), true},
		{"editor through nested groups on a folder four levels up", req(1, "edit", 0), true},
		{"editors may view", req(1, "view", 0), true},
		{"editors share a sharable document", req(1, "share", 0), true},
		{"editors may not delete", req(1, "delete", 0), false},
		{"blocked editor may do nothing", req(4, "view", 0), false},
		{"blocked editor may not edit", req(4, "edit", 0), false},
		{"viewer named on a folder above", req(5, "view", 0), true},
		{"viewer may not edit", req(5, "edit", 0), false},
		{"viewer may not share", req(5, "share", 0), false},
		{"stranger sees nothing", req(6, "view", 0), false},
		{"stranger edits nothing", req(6, "edit", 0), false},
		{"an unrelated group grants nothing", req(7, "view", 0), false},
		{"anyone views a public document", req(6, "view", 1), true},
		{"public does not mean editable", req(6, "edit", 1), false},
		{"direct editor edits", req(2, "edit", 1), true},
		{"editor may not share an unsharable document", req(2, "share", 1), false},
		{"group editor on a folder above edits", req(3, "edit", 1), true},
		{"group editor may not share an unsharable document", req(3, "share", 1), false},
		{"stranger may not delete", req(6, "delete", 1), false},
	}
	w := &workload.Workload{Name: "docshare (hand cases)", Model: world}
	if err := addBuiltin(w); err != nil {
		t.Fatal(err)
	}
	checkHandCases(t, w, tests, docshareRequest, func(q workload.DocshareRequest) bool {
		var user, doc int
		fmt.Sscanf(q.Principal().ID+" "+q.Resource().ID, "user-%d doc-%d", &user, &doc) //nolint:errcheck // ids the world wrote
		allow, _ := world.Decide(user, q.Action(), doc)
		return allow
	})
}
