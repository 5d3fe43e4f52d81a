package workload

import (
	"fmt"
	"testing"
)

// Hand-written worlds and cases for each app: the reference model must give the decision and
// reason worked out by hand, so a rule every version got wrong the same way still shows up here
// by name (each engine's version is checked against the model in its package).

func handRequest(user, act, resource string) AppRequest {
	return AppRequest{User: user, Action: act, Resource: resource}
}

// gdriveHandWorld:
//
//	groups: g0; g1 in g0
//	users:  u0 owns both documents; u1, u2 in no group; u3 in g1; u4 in no group; u5 owns f0;
//	        u6 owns f1
//	folders: f0 (viewers g0) > f1 (editors u2)
//	doc 0 in f1: private, editors may not share, u1 an editor
//	doc 1 in f0: public, editors may share, group g1 editors
func gdriveHandWorld() *GdriveWorld {
	none := []GdriveGrantee{}
	return &GdriveWorld{
		Users:         7,
		UserGroups:    [][]int{{}, {}, {}, {1}, {}, {}, {}},
		GroupParents:  [][]int{{}, {0}},
		GroupUsers:    [][]int{{}, {3}},
		GroupChildren: [][]int{{1}, {}},
		Folders: []GdriveNode{
			{Parent: -1, Depth: 1, Owner: 5, Viewers: []GdriveGrantee{{Group: true, Idx: 0}}, Editors: none},
			{Parent: 0, Depth: 2, Owner: 6, Viewers: none, Editors: []GdriveGrantee{{Idx: 2}}},
		},
		Docs: []GdriveNode{
			{Parent: 1, Owner: 0, Viewers: none, Editors: []GdriveGrantee{{Idx: 1}}},
			{Parent: 0, Owner: 0, Viewers: none, Editors: []GdriveGrantee{{Group: true, Idx: 1}}, Public: true, EditorsCanShare: true},
		},
	}
}

func TestGdriveDecide(t *testing.T) {
	world := gdriveHandWorld()
	q := func(u int, act string, d int) AppRequest { return handRequest(GdriveUser(u), act, GdriveDoc(d)) }
	tests := []handCase[AppRequest]{
		{"owner deletes", q(0, "delete", 0), true, "allow: owner"},
		{"owner of the folder deletes", q(6, "delete", 0), true, "allow: folder owner"},
		{"owner of a folder two levels up shares", q(5, "share", 0), true, "allow: folder owner"},
		{"owning a folder below grants nothing above", q(6, "write", 1), false, "deny: read only"},
		{"editor writes", q(1, "write", 0), true, "allow: editor"},
		{"editor may not share when editors may not", q(1, "share", 0), false, "deny: sharing restricted"},
		{"editor may not delete", q(1, "delete", 0), false, "deny: not owner"},
		{"editor on the folder writes", q(2, "write", 0), true, "allow: editor"},
		{"nested group viewer two folders up reads", q(3, "read", 0), true, "allow: viewer"},
		{"viewer may not write", q(3, "write", 0), false, "deny: read only"},
		{"group editor shares when editors may", q(3, "share", 1), true, "allow: editor"},
		{"anyone reads a public document", q(4, "read", 1), true, "allow: public"},
		{"public is not writable", q(4, "write", 1), false, "deny: read only"},
		{"public is not deletable", q(4, "delete", 1), false, "deny: not owner"},
		{"stranger reads nothing", q(4, "read", 0), false, "deny: no access"},
		{"stranger deletes nothing", q(4, "delete", 0), false, "deny: no access"},
	}
	w := gdriveWorkload("gdrive (hand cases)", len(world.Docs), world)
	decide := func(r AppRequest) (bool, string) {
		var u, d int
		mustScan(t, r.User, "user-%d", &u)
		mustScan(t, r.Resource, "doc-%d", &d)
		return gdriveDecide(world, u, r.Action, d)
	}
	checkHandCases(t, w, tests, decide)
}

// githubHandWorld:
//
//	org 0: owner u0, members u1 and u2, base permission read
//	teams (org 0): t0; t1 inside t0; u2 in t1
//	repo 0 of org 0: private, team t0 write, u3 (an outsider) maintain
//	repo 1 of u4: public, archived
//	repo 2 of org 0: private, no grants
func githubHandWorld() *GithubWorld {
	return &GithubWorld{
		Users:     6,
		UserTeams: [][]int{{}, {}, {1}, {}, {}, {}},
		Orgs:      []GithubOrg{{Owners: []int{0}, Members: []int{1, 2}, Base: 1}},
		Teams: []GithubTeam{
			{Org: 0, Parent: -1, Depth: 1, Members: []int{}, Children: []int{1}},
			{Org: 0, Parent: 0, Depth: 2, Members: []int{2}},
		},
		Repos: []GithubRepo{
			{Org: 0, Owner: -1, Collaborators: map[int]int{3: 4}, Teams: map[int]int{0: 3}},
			{Org: -1, Owner: 4, Public: true, Archived: true, Collaborators: map[int]int{}, Teams: map[int]int{}},
			{Org: 0, Owner: -1, Collaborators: map[int]int{}, Teams: map[int]int{}},
		},
	}
}

func TestGithubDecide(t *testing.T) {
	world := githubHandWorld()
	q := func(u int, act string, r int) AppRequest { return handRequest(GithubUser(u), act, GithubRepoID(r)) }
	tests := []handCase[AppRequest]{
		{"org owner manages", q(0, "manage", 2), true, "allow: org owner"},
		{"member pulls by the base permission", q(1, "pull", 2), true, "allow: base permission"},
		{"base read does not push", q(1, "push", 2), false, "deny: role too low"},
		{"member of a team inside a writing team pushes", q(2, "push", 0), true, "allow: team"},
		{"write does not merge", q(2, "merge", 0), false, "deny: role too low"},
		{"outside collaborator merges", q(3, "merge", 0), true, "allow: collaborator"},
		{"maintain does not manage", q(3, "manage", 0), false, "deny: role too low"},
		{"outsider sees no private repository", q(3, "pull", 2), false, "deny: no access"},
		{"anyone pulls a public repository", q(5, "pull", 1), true, "allow: public"},
		{"public does not triage", q(5, "triage", 1), false, "deny: archived"},
		{"the owner may not push to an archived repository", q(4, "push", 1), false, "deny: archived"},
		{"the owner manages an archived repository", q(4, "manage", 1), true, "allow: owner"},
		{"stranger", q(5, "pull", 0), false, "deny: no access"},
	}
	w := githubWorkload("github (hand cases)", len(world.Repos), world)
	decide := func(r AppRequest) (bool, string) {
		var u, i int
		mustScan(t, r.User, "user-%d", &u)
		mustScan(t, r.Resource, "repo-%d", &i)
		return githubDecide(world, u, r.Action, i)
	}
	checkHandCases(t, w, tests, decide)
}

// tinytodoHandWorld:
//
//	teams: t0; t1 inside t0; u2 in t1
//	users: u0 (level 3) owns list 0; u1 (level 1, an intern) owns list 1; u3 in no team
//	list 0: editors team t0, readers u3
//	list 1: no one else
func tinytodoHandWorld() *TinytodoWorld {
	return &TinytodoWorld{
		JobLevel:     []int{3, 1, 4, 5},
		UserTeams:    [][]int{{}, {}, {1}, {}},
		TeamParents:  []int{-1, 0},
		TeamUsers:    [][]int{{}, {2}},
		TeamChildren: [][]int{{1}, {}},
		Lists: []TinytodoList{
			{Owner: 0, Readers: []TinytodoGrantee{{Idx: 3}}, Editors: []TinytodoGrantee{{Team: true, Idx: 0}}},
			{Owner: 1, Readers: []TinytodoGrantee{}, Editors: []TinytodoGrantee{}},
		},
	}
}

func TestTinytodoDecide(t *testing.T) {
	world := tinytodoHandWorld()
	q := func(u int, act string, l int) AppRequest { return handRequest(TinytodoUser(u), act, TinytodoListID(l)) }
	tests := []handCase[AppRequest]{
		{"owner deletes", q(0, "delete_list", 0), true, "allow: owner"},
		{"an intern may not delete even their own list", q(1, "delete_list", 1), false, "deny: intern"},
		{"an intern owner updates", q(1, "update_list", 1), true, "allow: owner"},
		{"member of a team inside the editors team creates a task", q(2, "create_task", 0), true, "allow: editor"},
		{"editors read", q(2, "get_list", 0), true, "allow: editor"},
		{"editors may not delete", q(2, "delete_list", 0), false, "deny: not owner"},
		{"reader reads", q(3, "get_list", 0), true, "allow: reader"},
		{"reader may not update a task", q(3, "update_task", 0), false, "deny: read only"},
		{"reader may not delete", q(3, "delete_list", 0), false, "deny: not owner"},
		{"stranger", q(3, "get_list", 1), false, "deny: no access"},
	}
	w := tinytodoWorkload("tinytodo (hand cases)", len(world.Lists), world)
	decide := func(r AppRequest) (bool, string) {
		var u, l int
		mustScan(t, r.User, "user-%d", &u)
		mustScan(t, r.Resource, "list-%d", &l)
		return tinytodoDecide(world, u, r.Action, l)
	}
	checkHandCases(t, w, tests, decide)
}

func mustScan(t *testing.T, s, format string, v *int) {
	t.Helper()
	if _, err := fmt.Sscanf(s, format, v); err != nil {
		t.Fatalf("%q is no %s: %v", s, format, err)
	}
}
