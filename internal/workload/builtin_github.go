package workload

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
)

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

// GithubOrg is an organisation: its owners, its other members, and its base permission.
type GithubOrg struct {
	Owners, Members []int // Members holds the members who are not owners
	Base            int   // the base permission's level; 0 for none
}

// GithubTeam is a team of an organisation, maybe inside another.
type GithubTeam struct {
	Org, Parent int // Parent -1 for a top-level team
	Depth       int
	Members     []int // users directly in the team
	Children    []int
}

// GithubRepo is a repository of an organisation (Org >= 0) or of a user (Owner >= 0).
type GithubRepo struct {
	Org, Owner       int
	Public, Archived bool
	Collaborators    map[int]int // user → level
	Teams            map[int]int // team → level
}

// GithubWorld is what github-N's reference model decides over: users, organisations, nested
// teams and repositories, by index.
type GithubWorld struct {
	Users     int
	UserTeams [][]int
	Orgs      []GithubOrg
	Teams     []GithubTeam
	Repos     []GithubRepo
}

func GithubUser(i int) string   { return fmt.Sprintf("user-%05d", i) }
func GithubOrgID(i int) string  { return fmt.Sprintf("org-%03d", i) }
func GithubTeamID(i int) string { return fmt.Sprintf("team-%04d", i) }
func GithubRepoID(i int) string { return fmt.Sprintf("repo-%05d", i) }

// teamsOf returns the teams user u is in, directly or through teams inside them.
func (w *GithubWorld) teamsOf(u int) []int {
	return reach(w.UserTeams[u], func(t int) []int {
		if p := w.Teams[t].Parent; p >= 0 {
			return []int{p}
		}
		return nil
	})
}

// githubDecide is the reference model of OPA's github.rego, Cedar's github.cedar and OpenFGA's
// github.fga.
// The reason names the first grant, in the order below, that suffices.
func githubDecide(w *GithubWorld, u int, act string, r int) (allow bool, reason string) {
	repo := &w.Repos[r]
	need := slices.Index(ghActions, act) + 1
	if repo.Archived && (act == "triage" || act == "push" || act == "merge") {
		return false, "deny: archived"
	}
	type grant struct {
		level  int
		reason string
	}
	var grants []grant
	if repo.Owner == u {
		grants = append(grants, grant{5, "allow: owner"})
	}
	if repo.Org >= 0 {
		o := &w.Orgs[repo.Org]
		if slices.Contains(o.Owners, u) {
			grants = append(grants, grant{5, "allow: org owner"})
		}
		if slices.Contains(o.Members, u) && o.Base > 0 {
			grants = append(grants, grant{o.Base, "allow: base permission"})
		}
	}
	if l, ok := repo.Collaborators[u]; ok {
		grants = append(grants, grant{l, "allow: collaborator"})
	}
	teams := w.teamsOf(u)
	for _, t := range sortedKeys(repo.Teams) {
		if slices.Contains(teams, t) {
			grants = append(grants, grant{repo.Teams[t], "allow: team"})
		}
	}
	if repo.Public {
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

func newGithubWorld(r *rand.Rand, n int) *GithubWorld {
	users, orgs, teams := n/2+10, n/20+1, n/5+2
	w := &GithubWorld{Users: users, UserTeams: make([][]int, users), Orgs: make([]GithubOrg, orgs), Teams: make([]GithubTeam, teams)}
	orgOf := make([]int, users) // the organisation a user belongs to, -1 for none
	for u := range users {
		orgOf[u] = -1
		if r.IntN(4) > 0 {
			orgOf[u] = r.IntN(orgs)
		}
	}
	for o := range orgs {
		w.Orgs[o] = GithubOrg{Owners: []int{}, Members: []int{}, Base: []int{0, 0, 1, 1, 3}[r.IntN(5)]}
	}
	for u, o := range orgOf {
		switch {
		case o < 0:
		case len(w.Orgs[o].Owners) == 0 || r.IntN(15) == 0:
			w.Orgs[o].Owners = append(w.Orgs[o].Owners, u)
		default:
			w.Orgs[o].Members = append(w.Orgs[o].Members, u)
		}
	}
	for t := range teams {
		tm := GithubTeam{Org: r.IntN(orgs), Parent: -1, Depth: 1, Members: []int{}}
		if t > 0 && r.IntN(2) == 0 {
			if p := r.IntN(t); w.Teams[p].Depth < ghMaxTeamDepth {
				tm.Org, tm.Parent, tm.Depth = w.Teams[p].Org, p, w.Teams[p].Depth+1
				w.Teams[p].Children = append(w.Teams[p].Children, t)
			}
		}
		// Members of the team's organisation, and now and then an outsider.
		o := &w.Orgs[tm.Org]
		people := slices.Concat(o.Owners, o.Members)
		for range 1 + r.IntN(4) {
			u := r.IntN(users)
			if len(people) > 0 && r.IntN(6) > 0 {
				u = people[r.IntN(len(people))]
			}
			if !slices.Contains(tm.Members, u) {
				tm.Members = append(tm.Members, u)
				w.UserTeams[u] = append(w.UserTeams[u], t)
			}
		}
		w.Teams[t] = tm
	}
	for u := range users {
		if w.UserTeams[u] == nil {
			w.UserTeams[u] = []int{}
		}
	}
	teamsOf := make([][]int, orgs)
	for t, tm := range w.Teams {
		teamsOf[tm.Org] = append(teamsOf[tm.Org], t)
	}
	w.Repos = make([]GithubRepo, n)
	for i := range n {
		repo := GithubRepo{Org: -1, Owner: -1, Public: r.IntN(10) < 3, Archived: r.IntN(10) == 0,
			Collaborators: map[int]int{}, Teams: map[int]int{}}
		if r.IntN(5) == 0 {
			repo.Owner = r.IntN(users)
		} else {
			repo.Org = r.IntN(orgs)
			if ts := teamsOf[repo.Org]; len(ts) > 0 {
				for range r.IntN(3) {
					repo.Teams[ts[r.IntN(len(ts))]] = 1 + r.IntN(5)
				}
			}
		}
		for range r.IntN(3) {
			repo.Collaborators[r.IntN(users)] = 1 + r.IntN(5)
		}
		w.Repos[i] = repo
	}
	return w
}

// someMember returns a user in team t, directly or through a team inside it.
func (w *GithubWorld) someMember(r *rand.Rand, t int) int {
	for range ghMaxTeamDepth + 1 {
		tm := &w.Teams[t]
		if len(tm.Children) == 0 || r.IntN(2) == 0 {
			if len(tm.Members) > 0 {
				return tm.Members[r.IntN(len(tm.Members))]
			}
		}
		if len(tm.Children) == 0 {
			break
		}
		t = tm.Children[r.IntN(len(tm.Children))]
	}
	return r.IntN(w.Users)
}

var githubActionShares = []weighted{{"pull", 30}, {"triage", 15}, {"push", 25}, {"merge", 15}, {"manage", 15}}

func (w *GithubWorld) request(r *rand.Rand) AppRequest {
	i := r.IntN(len(w.Repos))
	repo := &w.Repos[i]
	act := choose(r, githubActionShares)
	u := r.IntN(w.Users)
	switch p := r.IntN(100); {
	case p < 10:
		if repo.Owner >= 0 {
			u = repo.Owner
		} else if o := w.Orgs[repo.Org].Owners; len(o) > 0 {
			u = o[r.IntN(len(o))]
		}
	case p < 30:
		if repo.Org >= 0 {
			if m := w.Orgs[repo.Org].Members; len(m) > 0 {
				u = m[r.IntN(len(m))]
			}
		}
	case p < 60:
		if ts := sortedKeys(repo.Teams); len(ts) > 0 {
			u = w.someMember(r, ts[r.IntN(len(ts))])
		}
	case p < 80:
		if cs := sortedKeys(repo.Collaborators); len(cs) > 0 {
			u = cs[r.IntN(len(cs))]
		}
	}
	allow, reason := githubDecide(w, u, act, i)
	return AppRequest{User: GithubUser(u), Action: act, Resource: GithubRepoID(i), allow: allow, reason: reason}
}

func buildGithub(name string, n int, seed int64, inputs int) *Workload {
	w := newGithubWorld(rand.New(rand.NewPCG(uint64(seed), 0x67746862)), n) // "gthb"
	r := rand.New(rand.NewPCG(uint64(seed), 0x67746862_00000000|uint64(n)))
	wl := githubWorkload(name, n, w)
	qs := appInputs(inputs, func() AppRequest { return w.request(r) })
	return appWorkload(wl, &RelationshipWorld{Family: "github", Relationships: w.Relationships()}, qs, GithubCheck)
}

// githubWorkload is the workload of world w, without inputs.
func githubWorkload(name string, n int, w *GithubWorld) *Workload {
	return &Workload{
		Name: name,
		Description: fmt.Sprintf("github with %d repositories, %d organisations, %d teams and %d users: roles from owners, "+
			"base permissions, nested teams and collaborators, public and archived repositories; the world as data in Rego, entities in Cedar, tuples in OpenFGA",
			n, len(w.Orgs), len(w.Teams), w.Users),
		Model: w,
	}
}

// ghRelations are the repository relations, by level.
var ghRelations = []string{"reader", "triager", "writer", "maintainer", "admin"}

// Relationships writes the world as relationships: team memberships and nesting, organisation
// owners and members, then each repository's admin, base permission, collaborators, teams and
// public and archived flags.
func (w *GithubWorld) Relationships() []Relationship {
	var rels []Relationship
	for u, teams := range w.UserTeams {
		for _, t := range teams {
			rels = append(rels, Relate(Obj("team", GithubTeamID(t)), "member", Obj("user", GithubUser(u)).Subject()))
		}
	}
	for t, tm := range w.Teams {
		if tm.Parent >= 0 {
			rels = append(rels, Relate(Obj("team", GithubTeamID(tm.Parent)), "member", Obj("team", GithubTeamID(t)).Set("member")))
		}
	}
	for o, org := range w.Orgs {
		for _, u := range org.Owners {
			rels = append(rels, Relate(Obj("organization", GithubOrgID(o)), "owner", Obj("user", GithubUser(u)).Subject()))
		}
		for _, u := range org.Members {
			rels = append(rels, Relate(Obj("organization", GithubOrgID(o)), "member", Obj("user", GithubUser(u)).Subject()))
		}
	}
	for i, repo := range w.Repos {
		object := Obj("repository", GithubRepoID(i))
		if repo.Owner >= 0 {
			rels = append(rels, Relate(object, "admin", Obj("user", GithubUser(repo.Owner)).Subject()))
		} else {
			org := Obj("organization", GithubOrgID(repo.Org))
			rels = append(rels, Relate(object, "admin", org.Set("owner")))
			if base := w.Orgs[repo.Org].Base; base > 0 {
				rels = append(rels, Relate(object, ghRelations[base-1], org.Set("member")))
			}
		}
		for _, u := range sortedKeys(repo.Collaborators) {
			rels = append(rels, Relate(object, ghRelations[repo.Collaborators[u]-1], Obj("user", GithubUser(u)).Subject()))
		}
		for _, t := range sortedKeys(repo.Teams) {
			rels = append(rels, Relate(object, ghRelations[repo.Teams[t]-1], Obj("team", GithubTeamID(t)).Set("member")))
		}
		if repo.Public {
			rels = append(rels, Relate(object, "reader", Any("user")))
		}
		if repo.Archived {
			rels = append(rels, Relate(object, "archived", Any("user")))
		}
	}
	return rels
}

// GithubCheck is a github request as a relationship check.
func GithubCheck(q AppRequest) RelationshipCheck {
	return RelationshipCheck{Subject: Obj("user", q.User), Permission: "can_" + q.Action, Resource: Obj("repository", q.Resource)}
}

func sortedKeys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Decide is the reference model's decision of user u's request to do act to repository i, and the
// rule that made it.
func (w *GithubWorld) Decide(u int, act string, i int) (allow bool, reason string) {
	return githubDecide(w, u, act, i)
}
