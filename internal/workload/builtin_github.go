package workload

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
)

//go:embed policies/github.rego
var githubPolicy []byte

//go:embed policies/github.cedar
var githubCedarPolicy []byte

//go:embed policies/github.cedarschema
var githubCedarSchema []byte

//go:embed policies/github.fga
var githubModel []byte

func init() {
	registerApp(app{
		name:  "github",
		param: "repositories",
		description: "repositories, GitHub style: organisations with owners and a base permission, nested teams and outside " +
			"collaborators granted read/triage/write/maintain/admin, public, private and archived repositories, pull/triage/push/merge/manage",
		build: buildGithub,
	})
}

// ghRoles are the repository roles, weakest first: a role's index plus one is its level.
var ghRoles = []string{"read", "triage", "write", "maintain", "admin"}

// ghActions are the actions, each needing the role of the same index.
var ghActions = []string{"pull", "triage", "push", "merge", "manage"}

const ghMaxTeamDepth = 3

type ghOrg struct {
	owners, members []int // members holds the members who are not owners
	base            int   // the base permission's level; 0 for none
}

type ghTeam struct {
	org, parent int // parent -1 for a top-level team
	depth       int
	members     []int // users directly in the team
	children    []int
}

// ghRepo is a repository of an organisation (org >= 0) or of a user (owner >= 0).
type ghRepo struct {
	org, owner       int
	public, archived bool
	collaborators    map[int]int // user → level
	teams            map[int]int // team → level
}

type ghWorld struct {
	users     int
	userTeams [][]int
	orgs      []ghOrg
	teams     []ghTeam
	repos     []ghRepo
}

func ghUser(i int) string   { return fmt.Sprintf("user-%05d", i) }
func ghOrgID(i int) string  { return fmt.Sprintf("org-%03d", i) }
func ghTeamID(i int) string { return fmt.Sprintf("team-%04d", i) }
func ghRepoID(i int) string { return fmt.Sprintf("repo-%05d", i) }

// teamsOf returns the teams user u is in, directly or through teams inside them.
func (w *ghWorld) teamsOf(u int) []int {
	return reach(w.userTeams[u], func(t int) []int {
		if p := w.teams[t].parent; p >= 0 {
			return []int{p}
		}
		return nil
	})
}

// githubDecide is the reference model of policies/github.rego, github.cedar and github.fga.
// The reason names the first grant, in the order below, that suffices.
func githubDecide(w *ghWorld, u int, act string, r int) (allow bool, reason string) {
	repo := &w.repos[r]
	need := slices.Index(ghActions, act) + 1
	if repo.archived && (act == "triage" || act == "push" || act == "merge") {
		return false, "deny: archived"
	}
	type grant struct {
		level  int
		reason string
	}
	var grants []grant
	if repo.owner == u {
		grants = append(grants, grant{5, "allow: owner"})
	}
	if repo.org >= 0 {
		o := &w.orgs[repo.org]
		if slices.Contains(o.owners, u) {
			grants = append(grants, grant{5, "allow: org owner"})
		}
		if slices.Contains(o.members, u) && o.base > 0 {
			grants = append(grants, grant{o.base, "allow: base permission"})
		}
	}
	if l, ok := repo.collaborators[u]; ok {
		grants = append(grants, grant{l, "allow: collaborator"})
	}
	teams := w.teamsOf(u)
	for _, t := range sortedKeys(repo.teams) {
		if slices.Contains(teams, t) {
			grants = append(grants, grant{repo.teams[t], "allow: team"})
		}
	}
	if repo.public {
		grants = append(grants, grant{1, "allow: public"})
	}
	best := 0
	for _, g := range grants {
		best = max(best, g.level)
		if g.level >= need {
			return true, g.reason
		}
	}
	if best > 0 {
		return false, "deny: role too low"
	}
	return false, "deny: no access"
}

func newGithubWorld(r *rand.Rand, n int) *ghWorld {
	users, orgs, teams := n/2+10, n/20+1, n/5+2
	w := &ghWorld{users: users, userTeams: make([][]int, users), orgs: make([]ghOrg, orgs), teams: make([]ghTeam, teams)}
	orgOf := make([]int, users) // the organisation a user belongs to, -1 for none
	for u := range users {
		orgOf[u] = -1
		if r.IntN(4) > 0 {
			orgOf[u] = r.IntN(orgs)
		}
	}
	for o := range orgs {
		w.orgs[o] = ghOrg{owners: []int{}, members: []int{}, base: []int{0, 0, 1, 1, 3}[r.IntN(5)]}
	}
	for u, o := range orgOf {
		switch {
		case o < 0:
		case len(w.orgs[o].owners) == 0 || r.IntN(15) == 0:
			w.orgs[o].owners = append(w.orgs[o].owners, u)
		default:
			w.orgs[o].members = append(w.orgs[o].members, u)
		}
	}
	for t := range teams {
		tm := ghTeam{org: r.IntN(orgs), parent: -1, depth: 1, members: []int{}}
		if t > 0 && r.IntN(2) == 0 {
			if p := r.IntN(t); w.teams[p].depth < ghMaxTeamDepth {
				tm.org, tm.parent, tm.depth = w.teams[p].org, p, w.teams[p].depth+1
				w.teams[p].children = append(w.teams[p].children, t)
			}
		}
		// Members of the team's organisation, and now and then an outsider.
		o := &w.orgs[tm.org]
		people := slices.Concat(o.owners, o.members)
		for range 1 + r.IntN(4) {
			u := r.IntN(users)
			if len(people) > 0 && r.IntN(6) > 0 {
				u = people[r.IntN(len(people))]
			}
			if !slices.Contains(tm.members, u) {
				tm.members = append(tm.members, u)
				w.userTeams[u] = append(w.userTeams[u], t)
			}
		}
		w.teams[t] = tm
	}
	for u := range users {
		if w.userTeams[u] == nil {
			w.userTeams[u] = []int{}
		}
	}
	teamsOf := make([][]int, orgs)
	for t, tm := range w.teams {
		teamsOf[tm.org] = append(teamsOf[tm.org], t)
	}
	w.repos = make([]ghRepo, n)
	for i := range n {
		repo := ghRepo{org: -1, owner: -1, public: r.IntN(10) < 3, archived: r.IntN(10) == 0,
			collaborators: map[int]int{}, teams: map[int]int{}}
		if r.IntN(5) == 0 {
			repo.owner = r.IntN(users)
		} else {
			repo.org = r.IntN(orgs)
			if ts := teamsOf[repo.org]; len(ts) > 0 {
				for range r.IntN(3) {
					repo.teams[ts[r.IntN(len(ts))]] = 1 + r.IntN(5)
				}
			}
		}
		for range r.IntN(3) {
			repo.collaborators[r.IntN(users)] = 1 + r.IntN(5)
		}
		w.repos[i] = repo
	}
	return w
}

// someMember returns a user in team t, directly or through a team inside it.
func (w *ghWorld) someMember(r *rand.Rand, t int) int {
	for range ghMaxTeamDepth + 1 {
		tm := &w.teams[t]
		if len(tm.children) == 0 || r.IntN(2) == 0 {
			if len(tm.members) > 0 {
				return tm.members[r.IntN(len(tm.members))]
			}
		}
		if len(tm.children) == 0 {
			break
		}
		t = tm.children[r.IntN(len(tm.children))]
	}
	return r.IntN(w.users)
}

var githubActionShares = []weighted{{"pull", 30}, {"triage", 15}, {"push", 25}, {"merge", 15}, {"manage", 15}}

func (w *ghWorld) request(r *rand.Rand) appRequest {
	i := r.IntN(len(w.repos))
	repo := &w.repos[i]
	act := choose(r, githubActionShares)
	u := r.IntN(w.users)
	switch p := r.IntN(100); {
	case p < 10:
		if repo.owner >= 0 {
			u = repo.owner
		} else if o := w.orgs[repo.org].owners; len(o) > 0 {
			u = o[r.IntN(len(o))]
		}
	case p < 30:
		if repo.org >= 0 {
			if m := w.orgs[repo.org].members; len(m) > 0 {
				u = m[r.IntN(len(m))]
			}
		}
	case p < 60:
		if ts := sortedKeys(repo.teams); len(ts) > 0 {
			u = w.someMember(r, ts[r.IntN(len(ts))])
		}
	case p < 80:
		if cs := sortedKeys(repo.collaborators); len(cs) > 0 {
			u = cs[r.IntN(len(cs))]
		}
	}
	allow, reason := githubDecide(w, u, act, i)
	return appRequest{User: ghUser(u), Action: act, Resource: ghRepoID(i), allow: allow, reason: reason}
}

func buildGithub(name string, n int, seed int64, inputs int) *appBuilt {
	w := newGithubWorld(rand.New(rand.NewPCG(uint64(seed), 0x67746862)), n) // "gthb"
	r := rand.New(rand.NewPCG(uint64(seed), 0x67746862_00000000|uint64(n)))
	wl := githubWorkload(name, n, w)
	f := &AppFGA{Model: File{Name: "github.fga", Content: githubModel}, Tuples: w.tuples()}
	qs := appInputs(inputs, func() appRequest { return w.request(r) })
	return appWorkload(wl, f, qs, "User", "Repository", func(q appRequest) FGACheck {
		return FGACheck{User: "user:" + q.User, Relation: "can_" + q.Action, Object: "repository:" + q.Resource}
	})
}

// githubWorkload is the workload of world w, without inputs.
func githubWorkload(name string, n int, w *ghWorld) *Workload {
	return &Workload{
		Name: name,
		Description: fmt.Sprintf("github with %d repositories, %d organisations, %d teams and %d users: roles from owners, "+
			"base permissions, nested teams and collaborators, public and archived repositories; the world as data in Rego, entities in Cedar, tuples in OpenFGA",
			n, len(w.orgs), len(w.teams), w.users),
		Query:    "data.authzbench.github.allow",
		Policies: []File{{Name: "github.rego", Content: githubPolicy}},
		Data:     w.rego(),
		Cedar: &Cedar{
			Policies: []File{{Name: "github.cedar", Content: githubCedarPolicy}},
			Schema:   &File{Name: "github.cedarschema", Content: githubCedarSchema},
			Entities: w.cedar(),
			Differences: "Cedar is handed each repository's roles as Role entities, each inside the one below it, with " +
				"collaborators, teams and the organisation's owners and members as their members; the store resolves `in` " +
				"through them, where Rego compares role levels and walks nested teams at each decision",
		},
	}
}

// rego writes the world as data.github.
func (w *ghWorld) rego() []byte {
	userTeams, teamParents := map[string][]string{}, map[string][]string{}
	orgs, repos := map[string]any{}, map[string]any{}
	for u, ts := range w.userTeams {
		if len(ts) > 0 {
			userTeams[ghUser(u)] = mapped(ts, ghTeamID)
		}
	}
	for t, tm := range w.teams {
		teamParents[ghTeamID(t)] = []string{}
		if tm.parent >= 0 {
			teamParents[ghTeamID(t)] = []string{ghTeamID(tm.parent)}
		}
	}
	for o, org := range w.orgs {
		base := "none"
		if org.base > 0 {
			base = ghRoles[org.base-1]
		}
		orgs[ghOrgID(o)] = map[string]any{"owners": mapped(org.owners, ghUser), "members": mapped(org.members, ghUser), "base": base}
	}
	for i, repo := range w.repos {
		collaborators, teams := map[string]string{}, map[string]string{}
		for u, l := range repo.collaborators {
			collaborators[ghUser(u)] = ghRoles[l-1]
		}
		for t, l := range repo.teams {
			teams[ghTeamID(t)] = ghRoles[l-1]
		}
		doc := map[string]any{"public": repo.public, "archived": repo.archived, "collaborators": collaborators, "teams": teams}
		if repo.org >= 0 {
			doc["org"] = ghOrgID(repo.org)
		} else {
			doc["owner"] = ghUser(repo.owner)
		}
		repos[ghRepoID(i)] = doc
	}
	return mustJSON(map[string]any{"github": map[string]any{
		"user_teams": userTeams, "team_parents": teamParents, "orgs": orgs, "repos": repos,
	}})
}

// ghCedarRoles are the attribute names of a repository's roles in Cedar, by level.
var ghCedarRoles = []string{"readers", "triagers", "writers", "maintainers", "admins"}

// cedar writes the world as the entity store: see github.cedarschema for its roles.
func (w *ghWorld) cedar() []byte {
	s := cedarStore{}
	for u := range w.users {
		s.entity("User", ghUser(u))
		for _, t := range w.userTeams[u] {
			s.in("User", ghUser(u), cedarUID{"Team", ghTeamID(t)})
		}
	}
	for t, tm := range w.teams {
		s.entity("Team", ghTeamID(t))
		if tm.parent >= 0 {
			s.in("Team", ghTeamID(t), cedarUID{"Team", ghTeamID(tm.parent)})
		}
	}
	for o, org := range w.orgs {
		s.in("Role", ghOrgID(o)+"/owners", cedarUID{"Role", ghOrgID(o) + "/members"})
		for _, u := range org.owners {
			s.in("User", ghUser(u), cedarUID{"Role", ghOrgID(o) + "/owners"})
		}
		for _, u := range org.members {
			s.in("User", ghUser(u), cedarUID{"Role", ghOrgID(o) + "/members"})
		}
	}
	for i, repo := range w.repos {
		id := ghRepoID(i)
		role := func(level int) cedarUID { return cedarUID{"Role", id + "/" + ghCedarRoles[level-1]} }
		e := s.entity("Repository", id)
		e.Attrs["public"], e.Attrs["archived"] = repo.public, repo.archived
		for l := 1; l <= 5; l++ {
			e.Attrs[ghCedarRoles[l-1]] = cedarRef("Role", id+"/"+ghCedarRoles[l-1])
			if l > 1 {
				s.in("Role", role(l).ID, role(l-1))
			} else {
				s.entity("Role", role(l).ID)
			}
		}
		if repo.owner >= 0 {
			s.in("User", ghUser(repo.owner), role(5))
		} else {
			org := ghOrgID(repo.org)
			s.in("Role", org+"/owners", role(5))
			if base := w.orgs[repo.org].base; base > 0 {
				s.in("Role", org+"/members", role(base))
			}
		}
		for _, u := range sortedKeys(repo.collaborators) {
			s.in("User", ghUser(u), role(repo.collaborators[u]))
		}
		for _, t := range sortedKeys(repo.teams) {
			s.in("Team", ghTeamID(t), role(repo.teams[t]))
		}
	}
	return s.json()
}

// ghFGARoles are the repository relations of github.fga, by level.
var ghFGARoles = []string{"reader", "triager", "writer", "maintainer", "admin"}

// tuples writes the world as OpenFGA tuples for github.fga.
func (w *ghWorld) tuples() []FGATuple {
	var ts []FGATuple
	for u, teams := range w.userTeams {
		for _, t := range teams {
			ts = append(ts, FGATuple{"user:" + ghUser(u), "member", "team:" + ghTeamID(t)})
		}
	}
	for t, tm := range w.teams {
		if tm.parent >= 0 {
			ts = append(ts, FGATuple{"team:" + ghTeamID(t) + "#member", "member", "team:" + ghTeamID(tm.parent)})
		}
	}
	for o, org := range w.orgs {
		for _, u := range org.owners {
			ts = append(ts, FGATuple{"user:" + ghUser(u), "owner", "organization:" + ghOrgID(o)})
		}
		for _, u := range org.members {
			ts = append(ts, FGATuple{"user:" + ghUser(u), "member", "organization:" + ghOrgID(o)})
		}
	}
	for i, repo := range w.repos {
		object := "repository:" + ghRepoID(i)
		if repo.owner >= 0 {
			ts = append(ts, FGATuple{"user:" + ghUser(repo.owner), "admin", object})
		} else {
			org := "organization:" + ghOrgID(repo.org)
			ts = append(ts, FGATuple{org + "#owner", "admin", object})
			if base := w.orgs[repo.org].base; base > 0 {
				ts = append(ts, FGATuple{org + "#member", ghFGARoles[base-1], object})
			}
		}
		for _, u := range sortedKeys(repo.collaborators) {
			ts = append(ts, FGATuple{"user:" + ghUser(u), ghFGARoles[repo.collaborators[u]-1], object})
		}
		for _, t := range sortedKeys(repo.teams) {
			ts = append(ts, FGATuple{"team:" + ghTeamID(t) + "#member", ghFGARoles[repo.teams[t]-1], object})
		}
		if repo.public {
			ts = append(ts, FGATuple{"user:*", "reader", object})
		}
		if repo.archived {
			ts = append(ts, FGATuple{"user:*", "archived", object})
		}
	}
	return ts
}

func sortedKeys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
