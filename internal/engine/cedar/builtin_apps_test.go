package cedar

import (
	"fmt"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// Each application's Cedar version decides its generated inputs as the reference model does,
// from the smallest world to a large one, and is its series' cedar style.
func TestAppsAgree(t *testing.T) {
	for _, app := range []string{"gdrive", "github", "tinytodo"} {
		for _, n := range []int{workload.MinAppSize, 200} {
			name := fmt.Sprintf("%s-%d", app, n)
			t.Run(name, func(t *testing.T) {
				w := builtinOrFail(t, name)
				if s := w.Scale.Series(Name); s != app+"/cedar" {
					t.Errorf("series %q, want %s/cedar", s, app)
				}
				if Engine.(engine.Handed).Handed(w) == "" {
					t.Error("the Cedar version does not say what it is handed")
				}
				checkAgainstModel(t, w)
			})
		}
	}
}

func appRequest(user, act, resource string) workload.AppRequest {
	return workload.AppRequest{User: user, Action: act, Resource: resource}
}

func mustScan(t *testing.T, s, format string, v *int) {
	t.Helper()
	if _, err := fmt.Sscanf(s, format, v); err != nil {
		t.Fatalf("%q is no %s: %v", s, format, err)
	}
}

// gdriveHandWorld:
//
//	groups: g0; g1 in g0
//	users:  u0 owns both documents; u1, u2 in no group; u3 in g1; u4 in no group; u5 owns f0;
//	        u6 owns f1
//	folders: f0 (viewers g0) > f1 (editors u2)
//	doc 0 in f1: private, editors may not share, u1 an editor
//	doc 1 in f0: public, editors may share, group g1 editors
func gdriveHandWorld() *workload.GdriveWorld {
	none := []workload.GdriveGrantee{}
	return &workload.GdriveWorld{
		Users:         7,
		UserGroups:    [][]int{{}, {}, {}, {1}, {}, {}, {}},
		GroupParents:  [][]int{{}, {0}},
		GroupUsers:    [][]int{{}, {3}},
		GroupChildren: [][]int{{1}, {}},
		Folders: []workload.GdriveNode{
			{Parent: -1, Depth: 1, Owner: 5, Viewers: []workload.GdriveGrantee{{Group: true, Idx: 0}}, Editors: none},
			{Parent: 0, Depth: 2, Owner: 6, Viewers: none, Editors: []workload.GdriveGrantee{{Idx: 2}}},
		},
		Docs: []workload.GdriveNode{
			{Parent: 1, Owner: 0, Viewers: none, Editors: []workload.GdriveGrantee{{Idx: 1}}},
			{Parent: 0, Owner: 0, Viewers: none, Editors: []workload.GdriveGrantee{{Group: true, Idx: 1}}, Public: true, EditorsCanShare: true},
		},
	}
}

// gdrive's hand-written cases (the workload's own TestGdriveDecide checks the model, OPA and OpenFGA on
// them) decide in Cedar as in the reference model.
func TestGdriveHandCases(t *testing.T) {
	world := gdriveHandWorld()
	q := func(u int, act string, d int) workload.AppRequest {
		return appRequest(workload.GdriveUser(u), act, workload.GdriveDoc(d))
	}
	tests := []handCase[workload.AppRequest]{
		{"owner deletes", q(0, "delete", 0), true},
		{"owner of the folder deletes", q(6, "delete", 0), true},
		{"owner of a folder two levels up shares", q(5, "share", 0), true},
		{"owning a folder below grants nothing above", q(6, "write", 1), false},
		{"editor writes", q(1, "write", 0), true},
		{"editor may not share when editors may not", q(1, "share", 0), false},
		{"editor may not delete", q(1, "delete", 0), false},
		{"editor on the folder writes", q(2, "write", 0), true},
		{"nested group viewer two folders up reads", q(3, "read", 0), true},
		{"viewer may not write", q(3, "write", 0), false},
		{"group editor shares when editors may", q(3, "share", 1), true},
		{"anyone reads a public document", q(4, "read", 1), true},
		{"public is not writable", q(4, "write", 1), false},
		{"public is not deletable", q(4, "delete", 1), false},
		{"stranger reads nothing", q(4, "read", 0), false},
		{"stranger deletes nothing", q(4, "delete", 0), false},
	}
	w := &workload.Workload{Name: "gdrive (hand cases)", Model: world}
	if err := addBuiltin(w); err != nil {
		t.Fatal(err)
	}
	checkHandCases(t, w, tests, appRequestOf("Document"), func(r workload.AppRequest) bool {
		var u, i int
		mustScan(t, r.User, "user-%d", &u)
		mustScan(t, r.Resource, "doc-%d", &i)
		allow, _ := world.Decide(u, r.Action, i)
		return allow
	})
}

// githubHandWorld:
//
//	org 0: owner u0, members u1 and u2, base permission read
//	teams (org 0): t0; t1 inside t0; u2 in t1
//	repo 0 of org 0: private, team t0 write, u3 (an outsider) maintain
//	repo 1 of u4: public, archived
//	repo 2 of org 0: private, no grants
func githubHandWorld() *workload.GithubWorld {
	return &workload.GithubWorld{
		Users:     6,
		UserTeams: [][]int{{}, {}, {1}, {}, {}, {}},
		Orgs:      []workload.GithubOrg{{Owners: []int{0}, Members: []int{1, 2}, Base: 1}},
		Teams: []workload.GithubTeam{
			{Org: 0, Parent: -1, Depth: 1, Members: []int{}, Children: []int{1}},
			{Org: 0, Parent: 0, Depth: 2, Members: []int{2}},
		},
		Repos: []workload.GithubRepo{
			{Org: 0, Owner: -1, Collaborators: map[int]int{3: 4}, Teams: map[int]int{0: 3}},
			{Org: -1, Owner: 4, Public: true, Archived: true, Collaborators: map[int]int{}, Teams: map[int]int{}},
			{Org: 0, Owner: -1, Collaborators: map[int]int{}, Teams: map[int]int{}},
		},
	}
}

// github's hand-written cases (the workload's own TestGithubDecide checks the model, OPA and OpenFGA on
// them) decide in Cedar as in the reference model.
func TestGithubHandCases(t *testing.T) {
	world := githubHandWorld()
	q := func(u int, act string, r int) workload.AppRequest {
		return appRequest(workload.GithubUser(u), act, workload.GithubRepoID(r))
	}
	tests := []handCase[workload.AppRequest]{
		{"org owner manages", q(0, "manage", 2), true},
		{"member pulls by the base permission", q(1, "pull", 2), true},
		{"base read does not push", q(1, "push", 2), false},
		{"member of a team inside a writing team pushes", q(2, "push", 0), true},
		{"write does not merge", q(2, "merge", 0), false},
		{"outside collaborator merges", q(3, "merge", 0), true},
		{"maintain does not manage", q(3, "manage", 0), false},
		{"outsider sees no private repository", q(3, "pull", 2), false},
		{"anyone pulls a public repository", q(5, "pull", 1), true},
		{"public does not triage", q(5, "triage", 1), false},
		{"the owner may not push to an archived repository", q(4, "push", 1), false},
		{"the owner manages an archived repository", q(4, "manage", 1), true},
		{"stranger", q(5, "pull", 0), false},
	}
	w := &workload.Workload{Name: "github (hand cases)", Model: world}
	if err := addBuiltin(w); err != nil {
		t.Fatal(err)
	}
	checkHandCases(t, w, tests, appRequestOf("Repository"), func(r workload.AppRequest) bool {
		var u, i int
		mustScan(t, r.User, "user-%d", &u)
		mustScan(t, r.Resource, "repo-%d", &i)
		allow, _ := world.Decide(u, r.Action, i)
		return allow
	})
}

// tinytodoHandWorld:
//
//	teams: t0; t1 inside t0; u2 in t1
//	users: u0 (level 3) owns list 0; u1 (level 1, an intern) owns list 1; u3 in no team
//	list 0: editors team t0, readers u3
//	list 1: no one else
func tinytodoHandWorld() *workload.TinytodoWorld {
	return &workload.TinytodoWorld{
		JobLevel:     []int{3, 1, 4, 5},
		UserTeams:    [][]int{{}, {}, {1}, {}},
		TeamParents:  []int{-1, 0},
		TeamUsers:    [][]int{{}, {2}},
		TeamChildren: [][]int{{1}, {}},
		Lists: []workload.TinytodoList{
			{Owner: 0, Readers: []workload.TinytodoGrantee{{Idx: 3}}, Editors: []workload.TinytodoGrantee{{Team: true, Idx: 0}}},
			{Owner: 1, Readers: []workload.TinytodoGrantee{}, Editors: []workload.TinytodoGrantee{}},
		},
	}
}

// tinytodo's hand-written cases (the workload's own TestTinytodoDecide checks the model, OPA and OpenFGA on
// them) decide in Cedar as in the reference model.
func TestTinytodoHandCases(t *testing.T) {
	world := tinytodoHandWorld()
	q := func(u int, act string, l int) workload.AppRequest {
		return appRequest(workload.TinytodoUser(u), act, workload.TinytodoListID(l))
	}
	tests := []handCase[workload.AppRequest]{
		{"owner deletes", q(0, "delete_list", 0), true},
		{"an intern may not delete even their own list", q(1, "delete_list", 1), false},
		{"an intern owner updates", q(1, "update_list", 1), true},
		{"member of a team inside the editors team creates a task", q(2, "create_task", 0), true},
		{"editors read", q(2, "get_list", 0), true},
		{"editors may not delete", q(2, "delete_list", 0), false},
		{"reader reads", q(3, "get_list", 0), true},
		{"reader may not update a task", q(3, "update_task", 0), false},
		{"reader may not delete", q(3, "delete_list", 0), false},
		{"stranger", q(3, "get_list", 1), false},
	}
	w := &workload.Workload{Name: "tinytodo (hand cases)", Model: world}
	if err := addBuiltin(w); err != nil {
		t.Fatal(err)
	}
	checkHandCases(t, w, tests, appRequestOf("List"), func(r workload.AppRequest) bool {
		var u, i int
		mustScan(t, r.User, "user-%d", &u)
		mustScan(t, r.Resource, "list-%d", &i)
		allow, _ := world.Decide(u, r.Action, i)
		return allow
	})
}
