package workload

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
)

func init() {
	registerApp(app{
		name:  "tinytodo",
		param: "lists",
		description: "task lists, tinytodo style: owners, readers and editors named directly or through nested teams, " +
			"interns who may not delete lists, get/update/delete list and create/update task",
		build: buildTinytodo,
	})
}

const (
	ttMaxTeamDepth = 3
	// ttSeniorLevel is the job level a user needs to delete a list.
	ttSeniorLevel = 2
)

// ttApp is the one application object the intern relationships hang on.
var ttApp = Obj("application", "tinytodo")

// TinytodoGrantee is a user or a team a list is shared with.
type TinytodoGrantee struct {
	Team bool
	Idx  int
}

// TinytodoList is a task list: its owner, and whom it is shared with.
type TinytodoList struct {
	Owner            int
	Readers, Editors []TinytodoGrantee
}

// TinytodoWorld is what tinytodo-N's reference model decides over: users and their job
// levels, nested teams and lists, by index.
type TinytodoWorld struct {
	JobLevel     []int
	UserTeams    [][]int
	TeamParents  []int // -1 for a top-level team
	TeamUsers    [][]int
	TeamChildren [][]int
	Lists        []TinytodoList
}

func TinytodoUser(i int) string   { return fmt.Sprintf("user-%05d", i) }
func TinytodoTeam(i int) string   { return fmt.Sprintf("team-%04d", i) }
func TinytodoListID(i int) string { return fmt.Sprintf("list-%05d", i) }

// ID is the grantee's id, a user's or a team's.
func (g TinytodoGrantee) ID() string {
	if g.Team {
		return TinytodoTeam(g.Idx)
	}
	return TinytodoUser(g.Idx)
}

func (w *TinytodoWorld) teamsOf(u int) []int {
	return reach(w.UserTeams[u], func(t int) []int {
		if p := w.TeamParents[t]; p >= 0 {
			return []int{p}
		}
		return nil
	})
}

// tinytodoDecide is the reference model of OPA's tinytodo.rego, Cedar's tinytodo.cedar and
// OpenFGA's tinytodo.fga.
func tinytodoDecide(w *TinytodoWorld, u int, act string, l int) (allow bool, reason string) {
	list := &w.Lists[l]
	teams := w.teamsOf(u)
	names := func(gs []TinytodoGrantee) bool {
		return slices.ContainsFunc(gs, func(g TinytodoGrantee) bool {
			if g.Team {
				return slices.Contains(teams, g.Idx)
			}
			return g.Idx == u
		})
	}
	owner, editor, reader := list.Owner == u, names(list.Editors), names(list.Readers)
	switch {
	case owner && act == "delete_list" && w.JobLevel[u] < ttSeniorLevel:
		return false, "deny: intern"
	case owner:
		return true, "allow: owner"
	case act == "delete_list" && (editor || reader):
		return false, "deny: not owner"
	case editor:
		return true, "allow: editor"
	case reader && act == "get_list":
		return true, "allow: reader"
	case reader:
		return false, "deny: read only"
	}
	return false, "deny: no access"
}

func newTinytodoWorld(r *rand.Rand, n int) *TinytodoWorld {
	users, teams := n/2+5, n/10+2
	w := &TinytodoWorld{
		JobLevel:     make([]int, users),
		UserTeams:    make([][]int, users),
		TeamParents:  make([]int, teams),
		TeamUsers:    make([][]int, teams),
		TeamChildren: make([][]int, teams),
		Lists:        make([]TinytodoList, n),
	}
	depth := make([]int, teams)
	for t := range teams {
		w.TeamParents[t], depth[t] = -1, 1
		if t > 0 && r.IntN(2) == 0 {
			if p := r.IntN(t); depth[p] < ttMaxTeamDepth {
				w.TeamParents[t], depth[t] = p, depth[p]+1
				w.TeamChildren[p] = append(w.TeamChildren[p], t)
			}
		}
	}
	for u := range users {
		w.JobLevel[u] = r.IntN(8)
		w.UserTeams[u] = pick(r, r.IntN(3), teams)
		for _, t := range w.UserTeams[u] {
			w.TeamUsers[t] = append(w.TeamUsers[t], u)
		}
	}
	grantees := func(k int) []TinytodoGrantee {
		out := []TinytodoGrantee{}
		for range r.IntN(k + 1) {
			g := TinytodoGrantee{Idx: r.IntN(users)}
			if r.IntN(3) == 0 {
				g = TinytodoGrantee{Team: true, Idx: r.IntN(teams)}
			}
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
		return out
	}
	// Every fifth list belongs to an intern, so the intern rule decides at every N.
	var interns []int
	for u, level := range w.JobLevel {
		if level < ttSeniorLevel {
			interns = append(interns, u)
		}
	}
	for l := range n {
		owner := r.IntN(users)
		if l%5 == 0 && len(interns) > 0 {
			owner = interns[r.IntN(len(interns))]
		}
		w.Lists[l] = TinytodoList{Owner: owner, Readers: grantees(3), Editors: grantees(2)}
	}
	return w
}

// someMember returns a user in team t, directly or through a team inside it.
func (w *TinytodoWorld) someMember(r *rand.Rand, t int) int {
	for range ttMaxTeamDepth + 1 {
		users, children := w.TeamUsers[t], w.TeamChildren[t]
		if len(users)+len(children) == 0 {
			break
		}
		if i := r.IntN(len(users) + len(children)); i < len(users) {
			return users[i]
		} else {
			t = children[i-len(users)]
		}
	}
	return r.IntN(len(w.JobLevel))
}

var tinytodoActions = []weighted{{"get_list", 30}, {"update_list", 15}, {"delete_list", 25}, {"create_task", 15}, {"update_task", 15}}

func (w *TinytodoWorld) request(r *rand.Rand) AppRequest {
	l := r.IntN(len(w.Lists))
	list := &w.Lists[l]
	act := choose(r, tinytodoActions)
	u := r.IntN(len(w.JobLevel))
	switch p := r.IntN(100); {
	case p < 20:
		u = list.Owner
	case p < 75:
		if gs := slices.Concat(list.Readers, list.Editors); len(gs) > 0 {
			g := gs[r.IntN(len(gs))]
			u = g.Idx
			if g.Team {
				u = w.someMember(r, g.Idx)
			}
		}
	}
	allow, reason := tinytodoDecide(w, u, act, l)
	return AppRequest{User: TinytodoUser(u), Action: act, Resource: TinytodoListID(l), allow: allow, reason: reason}
}

func buildTinytodo(name string, n int, seed int64, inputs int) *Workload {
	w := newTinytodoWorld(rand.New(rand.NewPCG(uint64(seed), 0x74746f64)), n) // "ttod"
	r := rand.New(rand.NewPCG(uint64(seed), 0x74746f64_00000000|uint64(n)))
	wl := tinytodoWorkload(name, n, w)
	qs := appInputs(inputs, func() AppRequest { return w.request(r) })
	return appWorkload(wl, &RelationshipWorld{Family: "tinytodo", Relationships: w.Relationships()}, qs, TinytodoCheck)
}

func ttIDs(gs []TinytodoGrantee) []string {
	out := make([]string, 0, len(gs))
	for _, g := range gs {
		out = append(out, g.ID())
	}
	return out
}

// tinytodoWorkload is the workload of world w, without inputs.
func tinytodoWorkload(name string, n int, w *TinytodoWorld) *Workload {
	return &Workload{
		Name: name,
		Description: fmt.Sprintf("tinytodo with %d lists, %d users and %d teams: owners, readers and editors directly or "+
			"through nested teams, interns may not delete; the world as data in Rego, entities in Cedar, tuples in OpenFGA", n, len(w.JobLevel), len(w.TeamParents)),
		Model: w,
	}
}

// Relationships writes the world as relationships: who is an intern (on the one application
// object, since a relationship carries no job level), team memberships and nesting, then each
// list's application, owner, readers and editors.
func (w *TinytodoWorld) Relationships() []Relationship {
	var rels []Relationship
	for u, level := range w.JobLevel {
		if level < ttSeniorLevel {
			rels = append(rels, Relate(ttApp, "intern", Obj("user", TinytodoUser(u)).Subject()))
		}
		for _, t := range w.UserTeams[u] {
			rels = append(rels, Relate(Obj("team", TinytodoTeam(t)), "member", Obj("user", TinytodoUser(u)).Subject()))
		}
	}
	for t, p := range w.TeamParents {
		if p >= 0 {
			rels = append(rels, Relate(Obj("team", TinytodoTeam(p)), "member", Obj("team", TinytodoTeam(t)).Set("member")))
		}
	}
	grantee := func(g TinytodoGrantee) Subject {
		if g.Team {
			return Obj("team", g.ID()).Set("member")
		}
		return Obj("user", g.ID()).Subject()
	}
	for l, list := range w.Lists {
		object := Obj("list", TinytodoListID(l))
		rels = append(rels, Relate(object, "app", ttApp.Subject()), Relate(object, "owner", Obj("user", TinytodoUser(list.Owner)).Subject()))
		for _, g := range list.Readers {
			rels = append(rels, Relate(object, "reader", grantee(g)))
		}
		for _, g := range list.Editors {
			rels = append(rels, Relate(object, "editor", grantee(g)))
		}
	}
	return rels
}

// TinytodoCheck is a tinytodo request as a relationship check.
func TinytodoCheck(q AppRequest) RelationshipCheck {
	return RelationshipCheck{Subject: Obj("user", q.User), Permission: "can_" + q.Action, Resource: Obj("list", q.Resource)}
}

// Decide is the reference model's decision of user u's request to do act to list i, and the
// rule that made it.
func (w *TinytodoWorld) Decide(u int, act string, i int) (allow bool, reason string) {
	return tinytodoDecide(w, u, act, i)
}
