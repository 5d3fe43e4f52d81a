package cedar

import (
	_ "embed"
	"slices"

	"github.com/authzbench/authzbench/internal/workload"
)

// The applications of the Cedar paper's kind (gdrive-N, github-N, tinytodo-N): the world as an
// entity store, each application's roles and lists as entities of their own that the store
// resolves `in` through, and each request naming only who does what to which object.

//go:embed policies/gdrive.cedar
var gdrivePolicy []byte

//go:embed policies/gdrive.cedarschema
var gdriveSchema []byte

//go:embed policies/github.cedar
var githubPolicy []byte

//go:embed policies/github.cedarschema
var githubSchema []byte

//go:embed policies/tinytodo.cedar
var tinytodoPolicy []byte

//go:embed policies/tinytodo.cedarschema
var tinytodoSchema []byte

// appVersion is an application's Cedar version: its policies, schema and the world as an
// entity store, each request naming the principal (a User) and the resource, of type resource.
func appVersion(app, resource string, entities []byte, differences string, policy, schema []byte) builtin {
	return builtin{
		files: &Files{
			Policies: []workload.File{{Name: app + ".cedar", Content: policy}},
			Schema:   &workload.File{Name: app + ".cedarschema", Content: schema},
			Entities: entities,
		},
		differences: differences,
		request:     requestOf(appRequestOf(resource)),
	}
}

// appRequestOf writes an application's request for Cedar: the user as a User, the object as a
// resource of type resource, and no context.
func appRequestOf(resource string) func(workload.AppRequest) []byte {
	return func(q workload.AppRequest) []byte {
		return mustJSON(request{
			Principal: uid{"User", q.User},
			Action:    action(q.Action),
			Resource:  uid{resource, q.Resource},
			Context:   map[string]any{},
		})
	}
}

// What each application's Cedar version is handed that Rego computes, for the ‡ rows.
const (
	gdriveDifferences = "Cedar is handed each document's and folder's access lists as Role entities whose parents carry " +
		"the inheritance (a folder's viewers role is in the viewers role of everything in the folder); the store " +
		"resolves `in` through them, where Rego walks the folders and groups at each decision"

	githubDifferences = "Cedar is handed each repository's roles as Role entities, each inside the one below it, with " +
		"collaborators, teams and the organisation's owners and members as their members; the store resolves `in` " +
		"through them, where Rego compares role levels and walks nested teams at each decision"

	tinytodoDifferences = "Cedar is handed each list's readers and editors as teams of their own (editors inside readers) " +
		"whose members are the users and teams the list is shared with; the store resolves `in` through them, " +
		"where Rego walks the nested teams at each decision"
)

// store collects entities by uid, so a world's writer can add parents as it meets them.
type store map[uid]*entity

func (s store) entity(typ, id string) *entity {
	u := uid{typ, id}
	e := s[u]
	if e == nil {
		e = &entity{UID: u, Attrs: map[string]any{}, Parents: []uid{}}
		s[u] = e
	}
	return e
}

// in makes entity (typ, id) a member of parent.
func (s store) in(typ, id string, parent uid) {
	e := s.entity(typ, id)
	if !slices.Contains(e.Parents, parent) {
		e.Parents = append(e.Parents, parent)
	}
}

func (s store) json() []byte {
	es := make([]entity, 0, len(s))
	for _, e := range s {
		es = append(es, *e)
	}
	sortEntities(es)
	return mustJSON(es)
}

// sortedKeys are m's keys, ascending, so a store written from a map is the same every time.
func sortedKeys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// gdriveEntities writes the world as the entity store: see gdrive.cedarschema for its roles.
func gdriveEntities(w *workload.GdriveWorld) []byte {
	s := store{}
	role := func(node, list string) uid { return uid{"Role", node + "/" + list} }
	for u := range w.Users {
		s.entity("User", workload.GdriveUser(u))
		for _, g := range w.UserGroups[u] {
			s.in("User", workload.GdriveUser(u), uid{"Group", workload.GdriveGroup(g)})
		}
	}
	for g := range w.GroupParents {
		s.entity("Group", workload.GdriveGroup(g))
		for _, p := range w.GroupParents[g] {
			s.in("Group", workload.GdriveGroup(g), uid{"Group", workload.GdriveGroup(p)})
		}
	}
	node := func(typ, id string, n *workload.GdriveNode) {
		s.in("Role", id+"/managers", role(id, "editors"))
		s.in("Role", id+"/editors", role(id, "viewers"))
		s.entity("Role", id+"/viewers")
		s.in("User", workload.GdriveUser(n.Owner), role(id, "managers"))
		for _, acl := range []struct {
			list string
			gs   []workload.GdriveGrantee
		}{{"viewers", n.Viewers}, {"editors", n.Editors}} {
			for _, g := range acl.gs {
				typ := "User"
				if g.Group {
					typ = "Group"
				}
				s.in(typ, g.ID(), role(id, acl.list))
			}
		}
		if n.Parent >= 0 {
			folder := workload.GdriveFolder(n.Parent)
			s.in(typ, id, uid{"Folder", folder})
			for _, list := range []string{"managers", "editors", "viewers"} {
				s.in("Role", folder+"/"+list, role(id, list))
			}
		}
	}
	for i := range w.Folders {
		s.entity("Folder", workload.GdriveFolder(i))
		node("Folder", workload.GdriveFolder(i), &w.Folders[i])
	}
	for i := range w.Docs {
		id := workload.GdriveDoc(i)
		node("Document", id, &w.Docs[i])
		e := s.entity("Document", id)
		e.Attrs["public"] = w.Docs[i].Public
		e.Attrs["editorsCanShare"] = w.Docs[i].EditorsCanShare
		for _, list := range []string{"managers", "editors", "viewers"} {
			e.Attrs[list] = ref("Role", id+"/"+list)
		}
	}
	return s.json()
}

// githubRoles are the attribute names of a repository's roles in Cedar, by level.
var githubRoles = []string{"readers", "triagers", "writers", "maintainers", "admins"}

// githubEntities writes the world as the entity store: see github.cedarschema for its roles.
func githubEntities(w *workload.GithubWorld) []byte {
	s := store{}
	for u := range w.Users {
		s.entity("User", workload.GithubUser(u))
		for _, t := range w.UserTeams[u] {
			s.in("User", workload.GithubUser(u), uid{"Team", workload.GithubTeamID(t)})
		}
	}
	for t, tm := range w.Teams {
		s.entity("Team", workload.GithubTeamID(t))
		if tm.Parent >= 0 {
			s.in("Team", workload.GithubTeamID(t), uid{"Team", workload.GithubTeamID(tm.Parent)})
		}
	}
	for o, org := range w.Orgs {
		s.in("Role", workload.GithubOrgID(o)+"/owners", uid{"Role", workload.GithubOrgID(o) + "/members"})
		for _, u := range org.Owners {
			s.in("User", workload.GithubUser(u), uid{"Role", workload.GithubOrgID(o) + "/owners"})
		}
		for _, u := range org.Members {
			s.in("User", workload.GithubUser(u), uid{"Role", workload.GithubOrgID(o) + "/members"})
		}
	}
	for i, repo := range w.Repos {
		id := workload.GithubRepoID(i)
		role := func(level int) uid { return uid{"Role", id + "/" + githubRoles[level-1]} }
		e := s.entity("Repository", id)
		e.Attrs["public"], e.Attrs["archived"] = repo.Public, repo.Archived
		for l := 1; l <= 5; l++ {
			e.Attrs[githubRoles[l-1]] = ref("Role", id+"/"+githubRoles[l-1])
			if l > 1 {
				s.in("Role", role(l).ID, role(l-1))
			} else {
				s.entity("Role", role(l).ID)
			}
		}
		if repo.Owner >= 0 {
			s.in("User", workload.GithubUser(repo.Owner), role(5))
		} else {
			org := workload.GithubOrgID(repo.Org)
			s.in("Role", org+"/owners", role(5))
			if base := w.Orgs[repo.Org].Base; base > 0 {
				s.in("Role", org+"/members", role(base))
			}
		}
		for _, u := range sortedKeys(repo.Collaborators) {
			s.in("User", workload.GithubUser(u), role(repo.Collaborators[u]))
		}
		for _, t := range sortedKeys(repo.Teams) {
			s.in("Team", workload.GithubTeamID(t), role(repo.Teams[t]))
		}
	}
	return s.json()
}

// tinytodoEntities writes the world as the entity store: see tinytodo.cedarschema for the lists' teams.
func tinytodoEntities(w *workload.TinytodoWorld) []byte {
	s := store{}
	for u, level := range w.JobLevel {
		s.entity("User", workload.TinytodoUser(u)).Attrs["jobLevel"] = level
		for _, t := range w.UserTeams[u] {
			s.in("User", workload.TinytodoUser(u), uid{"Team", workload.TinytodoTeam(t)})
		}
	}
	for t, p := range w.TeamParents {
		s.entity("Team", workload.TinytodoTeam(t))
		if p >= 0 {
			s.in("Team", workload.TinytodoTeam(t), uid{"Team", workload.TinytodoTeam(p)})
		}
	}
	grant := func(g workload.TinytodoGrantee, team string) {
		typ := "User"
		if g.Team {
			typ = "Team"
		}
		s.in(typ, g.ID(), uid{"Team", team})
	}
	for l, list := range w.Lists {
		id := workload.TinytodoListID(l)
		s.in("Team", id+"/editors", uid{"Team", id + "/readers"})
		s.entity("Team", id+"/readers")
		for _, g := range list.Readers {
			grant(g, id+"/readers")
		}
		for _, g := range list.Editors {
			grant(g, id+"/editors")
		}
		e := s.entity("List", id)
		e.Attrs["owner"] = ref("User", workload.TinytodoUser(list.Owner))
		e.Attrs["readers"] = ref("Team", id+"/readers")
		e.Attrs["editors"] = ref("Team", id+"/editors")
	}
	return s.json()
}
