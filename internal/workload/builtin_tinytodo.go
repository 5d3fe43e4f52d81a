package workload

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
)

//go:embed policies/tinytodo.rego
var tinytodoPolicy []byte

//go:embed policies/tinytodo.cedar
var tinytodoCedarPolicy []byte

//go:embed policies/tinytodo.cedarschema
var tinytodoCedarSchema []byte

//go:embed policies/tinytodo.fga
var tinytodoModel []byte

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
	// ttApp is the one application object OpenFGA's intern tuples hang on.
	ttApp = "application:tinytodo"
)

// ttOpenFGADifferences is what the OpenFGA version is handed ready-made.
const ttOpenFGADifferences = "OpenFGA is handed who is an intern (job level below 2) as application#intern tuples, " +
	"since it compares no attributes; Rego and Cedar compare each user's job level at each decision"

// ttGrantee is a user or a team a list is shared with.
type ttGrantee struct {
	team bool
	idx  int
}

type ttList struct {
	owner            int
	readers, editors []ttGrantee
}

type ttWorld struct {
	jobLevel     []int
	userTeams    [][]int
	teamParents  []int // -1 for a top-level team
	teamUsers    [][]int
	teamChildren [][]int
	lists        []ttList
}

func ttUser(i int) string   { return fmt.Sprintf("user-%05d", i) }
func ttTeam(i int) string   { return fmt.Sprintf("team-%04d", i) }
func ttListID(i int) string { return fmt.Sprintf("list-%05d", i) }

func (g ttGrantee) id() string {
	if g.team {
		return ttTeam(g.idx)
	}
	return ttUser(g.idx)
}

func (w *ttWorld) teamsOf(u int) []int {
	return reach(w.userTeams[u], func(t int) []int {
		if p := w.teamParents[t]; p >= 0 {
			return []int{p}
		}
		return nil
	})
}

// tinytodoDecide is the reference model of policies/tinytodo.rego, tinytodo.cedar and
// tinytodo.fga.
func tinytodoDecide(w *ttWorld, u int, act string, l int) (allow bool, reason string) {
	list := &w.lists[l]
	teams := w.teamsOf(u)
	names := func(gs []ttGrantee) bool {
		return slices.ContainsFunc(gs, func(g ttGrantee) bool {
			if g.team {
				return slices.Contains(teams, g.idx)
			}
			return g.idx == u
		})
	}
	owner, editor, reader := list.owner == u, names(list.editors), names(list.readers)
	switch {
	case owner && act == "delete_list" && w.jobLevel[u] < ttSeniorLevel:
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

func newTinytodoWorld(r *rand.Rand, n int) *ttWorld {
	users, teams := n/2+5, n/10+2
	w := &ttWorld{
		jobLevel:     make([]int, users),
		userTeams:    make([][]int, users),
		teamParents:  make([]int, teams),
		teamUsers:    make([][]int, teams),
		teamChildren: make([][]int, teams),
		lists:        make([]ttList, n),
	}
	depth := make([]int, teams)
	for t := range teams {
		w.teamParents[t], depth[t] = -1, 1
		if t > 0 && r.IntN(2) == 0 {
			if p := r.IntN(t); depth[p] < ttMaxTeamDepth {
				w.teamParents[t], depth[t] = p, depth[p]+1
				w.teamChildren[p] = append(w.teamChildren[p], t)
			}
		}
	}
	for u := range users {
		w.jobLevel[u] = r.IntN(8)
		w.userTeams[u] = pick(r, r.IntN(3), teams)
		for _, t := range w.userTeams[u] {
			w.teamUsers[t] = append(w.teamUsers[t], u)
		}
	}
	grantees := func(k int) []ttGrantee {
		out := []ttGrantee{}
		for range r.IntN(k + 1) {
			g := ttGrantee{idx: r.IntN(users)}
			if r.IntN(3) == 0 {
				g = ttGrantee{team: true, idx: r.IntN(teams)}
			}
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
		return out
	}
	// Every fifth list belongs to an intern, so the intern rule decides at every N.
	var interns []int
	for u, level := range w.jobLevel {
		if level < ttSeniorLevel {
			interns = append(interns, u)
		}
	}
	for l := range n {
		owner := r.IntN(users)
		if l%5 == 0 && len(interns) > 0 {
			owner = interns[r.IntN(len(interns))]
		}
		w.lists[l] = ttList{owner: owner, readers: grantees(3), editors: grantees(2)}
	}
	return w
}

// someMember returns a user in team t, directly or through a team inside it.
func (w *ttWorld) someMember(r *rand.Rand, t int) int {
	for range ttMaxTeamDepth + 1 {
		users, children := w.teamUsers[t], w.teamChildren[t]
		if len(users)+len(children) == 0 {
			break
		}
		if i := r.IntN(len(users) + len(children)); i < len(users) {
			return users[i]
		} else {
			t = children[i-len(users)]
		}
	}
	return r.IntN(len(w.jobLevel))
}

var tinytodoActions = []weighted{{"get_list", 30}, {"update_list", 15}, {"delete_list", 25}, {"create_task", 15}, {"update_task", 15}}

func (w *ttWorld) request(r *rand.Rand) appRequest {
	l := r.IntN(len(w.lists))
	list := &w.lists[l]
	act := choose(r, tinytodoActions)
	u := r.IntN(len(w.jobLevel))
	switch p := r.IntN(100); {
	case p < 20:
		u = list.owner
	case p < 75:
		if gs := slices.Concat(list.readers, list.editors); len(gs) > 0 {
			g := gs[r.IntN(len(gs))]
			u = g.idx
			if g.team {
				u = w.someMember(r, g.idx)
			}
		}
	}
	allow, reason := tinytodoDecide(w, u, act, l)
	return appRequest{User: ttUser(u), Action: act, Resource: ttListID(l), allow: allow, reason: reason}
}

func buildTinytodo(name string, n int, seed int64, inputs int) *appBuilt {
	w := newTinytodoWorld(rand.New(rand.NewPCG(uint64(seed), 0x74746f64)), n) // "ttod"
	r := rand.New(rand.NewPCG(uint64(seed), 0x74746f64_00000000|uint64(n)))
	wl := tinytodoWorkload(name, n, w)
	f := &AppFGA{Model: File{Name: "tinytodo.fga", Content: tinytodoModel}, Tuples: w.tuples(), Differences: ttOpenFGADifferences}
	qs := appInputs(inputs, func() appRequest { return w.request(r) })
	return appWorkload(wl, f, qs, "User", "List", func(q appRequest) FGACheck {
		return FGACheck{User: "user:" + q.User, Relation: "can_" + q.Action, Object: "list:" + q.Resource}
	})
}

func ttIDs(gs []ttGrantee) []string {
	out := make([]string, 0, len(gs))
	for _, g := range gs {
		out = append(out, g.id())
	}
	return out
}

// tinytodoWorkload is the workload of world w, without inputs.
func tinytodoWorkload(name string, n int, w *ttWorld) *Workload {
	return &Workload{
		Name: name,
		Description: fmt.Sprintf("tinytodo with %d lists, %d users and %d teams: owners, readers and editors directly or "+
			"through nested teams, interns may not delete; the world as data in Rego, entities in Cedar, tuples in OpenFGA", n, len(w.jobLevel), len(w.teamParents)),
		Query:    "data.authzbench.tinytodo.allow",
		Policies: []File{{Name: "tinytodo.rego", Content: tinytodoPolicy}},
		Data:     w.rego(),
		Cedar: &Cedar{
			Policies: []File{{Name: "tinytodo.cedar", Content: tinytodoCedarPolicy}},
			Schema:   &File{Name: "tinytodo.cedarschema", Content: tinytodoCedarSchema},
			Entities: w.cedar(),
			Differences: "Cedar is handed each list's readers and editors as teams of their own (editors inside readers) " +
				"whose members are the users and teams the list is shared with; the store resolves `in` through them, " +
				"where Rego walks the nested teams at each decision",
		},
	}
}

// rego writes the world as data.tinytodo.
func (w *ttWorld) rego() []byte {
	users, teamParents, lists := map[string]any{}, map[string][]string{}, map[string]any{}
	for u, level := range w.jobLevel {
		users[ttUser(u)] = map[string]any{"job_level": level, "teams": mapped(w.userTeams[u], ttTeam)}
	}
	for t, p := range w.teamParents {
		teamParents[ttTeam(t)] = []string{}
		if p >= 0 {
			teamParents[ttTeam(t)] = []string{ttTeam(p)}
		}
	}
	for l, list := range w.lists {
		lists[ttListID(l)] = map[string]any{"owner": ttUser(list.owner), "readers": ttIDs(list.readers), "editors": ttIDs(list.editors)}
	}
	return mustJSON(map[string]any{"tinytodo": map[string]any{"users": users, "team_parents": teamParents, "lists": lists}})
}

// cedar writes the world as the entity store: see tinytodo.cedarschema for the lists' teams.
func (w *ttWorld) cedar() []byte {
	s := cedarStore{}
	for u, level := range w.jobLevel {
		s.entity("User", ttUser(u)).Attrs["jobLevel"] = level
		for _, t := range w.userTeams[u] {
			s.in("User", ttUser(u), cedarUID{"Team", ttTeam(t)})
		}
	}
	for t, p := range w.teamParents {
		s.entity("Team", ttTeam(t))
		if p >= 0 {
			s.in("Team", ttTeam(t), cedarUID{"Team", ttTeam(p)})
		}
	}
	grant := func(g ttGrantee, team string) {
		typ := "User"
		if g.team {
			typ = "Team"
		}
		s.in(typ, g.id(), cedarUID{"Team", team})
	}
	for l, list := range w.lists {
		id := ttListID(l)
		s.in("Team", id+"/editors", cedarUID{"Team", id + "/readers"})
		s.entity("Team", id+"/readers")
		for _, g := range list.readers {
			grant(g, id+"/readers")
		}
		for _, g := range list.editors {
			grant(g, id+"/editors")
		}
		e := s.entity("List", id)
		e.Attrs["owner"] = cedarRef("User", ttUser(list.owner))
		e.Attrs["readers"] = cedarRef("Team", id+"/readers")
		e.Attrs["editors"] = cedarRef("Team", id+"/editors")
	}
	return s.json()
}

// tuples writes the world as OpenFGA tuples for tinytodo.fga.
func (w *ttWorld) tuples() []FGATuple {
	var ts []FGATuple
	for u, level := range w.jobLevel {
		if level < ttSeniorLevel {
			ts = append(ts, FGATuple{"user:" + ttUser(u), "intern", ttApp})
		}
		for _, t := range w.userTeams[u] {
			ts = append(ts, FGATuple{"user:" + ttUser(u), "member", "team:" + ttTeam(t)})
		}
	}
	for t, p := range w.teamParents {
		if p >= 0 {
			ts = append(ts, FGATuple{"team:" + ttTeam(t) + "#member", "member", "team:" + ttTeam(p)})
		}
	}
	grantee := func(g ttGrantee) string {
		if g.team {
			return "team:" + g.id() + "#member"
		}
		return "user:" + g.id()
	}
	for l, list := range w.lists {
		object := "list:" + ttListID(l)
		ts = append(ts, FGATuple{ttApp, "app", object}, FGATuple{"user:" + ttUser(list.owner), "owner", object})
		for _, g := range list.readers {
			ts = append(ts, FGATuple{grantee(g), "reader", object})
		}
		for _, g := range list.editors {
			ts = append(ts, FGATuple{grantee(g), "editor", object})
		}
	}
	return ts
}
