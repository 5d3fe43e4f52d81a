package openfga

import (
	"context"
	"fmt"
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

// Each application's OpenFGA version decides its generated inputs as the reference model does,
// from the smallest world to a large one, in OpenFGA's own server in this process, and is its
// series' openfga style.
func TestAppsDecideAsTheirReferenceModel(t *testing.T) {
	for _, app := range []string{"gdrive", "github", "tinytodo"} {
		for _, n := range []int{workload.MinAppSize, 200} {
			name := fmt.Sprintf("%s-%d", app, n)
			t.Run(name, func(t *testing.T) {
				w, err := workload.Builtin(name)
				if err != nil {
					t.Fatal(err)
				}
				if s := w.Scale.Series(Name); s != app+"/openfga" {
					t.Errorf("series %q, want %s/openfga", s, app)
				}
				checkAgainstModel(t, w)
			})
		}
	}
}

// checkAgainstModel loads w's OpenFGA version into OpenFGA's server in this process, as the
// openfga targets do, and fails the test for every check whose decision differs from the one
// the reference model expects.
func checkAgainstModel(t *testing.T, w *workload.Workload) {
	t.Helper()
	if len(w.Inputs) == 0 {
		t.Fatalf("%s: no inputs", w.Name)
	}
	l, err := Load(context.Background(), nil, w)
	if err != nil {
		t.Fatalf("%s: %v", w.Name, err)
	}
	defer l.Engine.Close()
	const maxReported = 20
	wrong := 0
	for i, req := range l.Requests {
		allow, err := l.Engine.Check(context.Background(), req)
		in := w.Inputs[i]
		if err == nil && allow == (in.Expect == workload.ExpectAllow) {
			continue
		}
		wrong++
		if wrong <= maxReported {
			t.Errorf("%s check %d: %s: OpenFGA allow %v (error %v); the model expects %s (%s)",
				w.Name, i+1, Registered.Request(in), allow, err, in.Expect, in.Reason)
		}
	}
	if wrong > maxReported {
		t.Errorf("%s: %d of %d checks wrong, only the first %d shown", w.Name, wrong, len(w.Inputs), maxReported)
	}
}

// handCase is a hand-written request and the decision worked out for it by hand.
type handCase struct {
	name  string
	in    workload.AppRequest
	allow bool
}

// checkHandCases asks OpenFGA each case in a hand-written world, written by the family's own
// relationships and checks, as its generated workloads are.
func checkHandCases(t *testing.T, family string, rels []workload.Relationship, check func(workload.AppRequest) workload.RelationshipCheck, cases []handCase) {
	t.Helper()
	w := &workload.Workload{Name: family + " (hand cases)", Relationships: &workload.RelationshipWorld{Family: family, Relationships: rels}}
	for _, tc := range cases {
		expect := workload.ExpectDeny
		if tc.allow {
			expect = workload.ExpectAllow
		}
		w.Inputs = append(w.Inputs, workload.Input{Expect: expect, Reason: tc.name})
		w.Relationships.Checks = append(w.Relationships.Checks, check(tc.in))
	}
	if err := addBuiltin(w); err != nil {
		t.Fatal(err)
	}
	checkAgainstModel(t, w)
}

func appRequest(user, act, resource string) workload.AppRequest {
	return workload.AppRequest{User: user, Action: act, Resource: resource}
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

// gdrive's hand-written cases (the workload's own TestGdriveDecide checks the reference model on
// them) decide in OpenFGA as worked out by hand.
func TestGdriveHandCases(t *testing.T) {
	q := func(u int, act string, d int) workload.AppRequest {
		return appRequest(workload.GdriveUser(u), act, workload.GdriveDoc(d))
	}
	checkHandCases(t, "gdrive", gdriveHandWorld().Relationships(), workload.GdriveCheck, []handCase{
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

// github's hand-written cases (the workload's own TestGithubDecide checks the reference model on
// them) decide in OpenFGA as worked out by hand.
func TestGithubHandCases(t *testing.T) {
	q := func(u int, act string, r int) workload.AppRequest {
		return appRequest(workload.GithubUser(u), act, workload.GithubRepoID(r))
	}
	checkHandCases(t, "github", githubHandWorld().Relationships(), workload.GithubCheck, []handCase{
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

// tinytodo's hand-written cases (the workload's own TestTinytodoDecide checks the reference
// model on them) decide in OpenFGA as worked out by hand.
func TestTinytodoHandCases(t *testing.T) {
	q := func(u int, act string, l int) workload.AppRequest {
		return appRequest(workload.TinytodoUser(u), act, workload.TinytodoListID(l))
	}
	checkHandCases(t, "tinytodo", tinytodoHandWorld().Relationships(), workload.TinytodoCheck, []handCase{
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
	})
}
