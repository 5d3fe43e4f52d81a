package opa

import "github.com/authzbench/authzbench/internal/workload"

// The data documents of the app families' Rego versions (gdrive-N, github-N, tinytodo-N):
// each world written as its policy reads it, under data.<family>.

// gdriveData writes the world as data.gdrive: the group and folder graphs as graph.reachable
// reads them, and each folder's and document's owner and lists.
func gdriveData(w *workload.GdriveWorld) map[string]any {
	ids := func(gs []workload.GdriveGrantee) []string {
		out := make([]string, 0, len(gs))
		for _, g := range gs {
			out = append(out, g.ID())
		}
		return out
	}
	userGroups, groupParents, folderParents := map[string][]string{}, map[string][]string{}, map[string][]string{}
	folders, docs := map[string]any{}, map[string]any{}
	for u, gs := range w.UserGroups {
		if len(gs) > 0 {
			userGroups[workload.GdriveUser(u)] = mapped(gs, workload.GdriveGroup)
		}
	}
	for g, ps := range w.GroupParents {
		groupParents[workload.GdriveGroup(g)] = mapped(ps, workload.GdriveGroup)
	}
	for i, f := range w.Folders {
		folderParents[workload.GdriveFolder(i)] = []string{}
		if f.Parent >= 0 {
			folderParents[workload.GdriveFolder(i)] = []string{workload.GdriveFolder(f.Parent)}
		}
		folders[workload.GdriveFolder(i)] = map[string]any{"owner": workload.GdriveUser(f.Owner), "viewers": ids(f.Viewers), "editors": ids(f.Editors)}
	}
	for i, d := range w.Docs {
		docs[workload.GdriveDoc(i)] = map[string]any{"folder": workload.GdriveFolder(d.Parent), "owner": workload.GdriveUser(d.Owner), "public": d.Public,
			"editors_can_share": d.EditorsCanShare, "viewers": ids(d.Viewers), "editors": ids(d.Editors)}
	}
	return map[string]any{
		"user_groups": userGroups, "group_parents": groupParents, "folder_parents": folderParents,
		"folders": folders, "docs": docs,
	}
}

// githubData writes the world as data.github.
func githubData(w *workload.GithubWorld) map[string]any {
	userTeams, teamParents := map[string][]string{}, map[string][]string{}
	orgs, repos := map[string]any{}, map[string]any{}
	for u, ts := range w.UserTeams {
		if len(ts) > 0 {
			userTeams[workload.GithubUser(u)] = mapped(ts, workload.GithubTeamID)
		}
	}
	for t, tm := range w.Teams {
		teamParents[workload.GithubTeamID(t)] = []string{}
		if tm.Parent >= 0 {
			teamParents[workload.GithubTeamID(t)] = []string{workload.GithubTeamID(tm.Parent)}
		}
	}
	for o, org := range w.Orgs {
		base := "none"
		if org.Base > 0 {
			base = ghRoles[org.Base-1]
		}
		orgs[workload.GithubOrgID(o)] = map[string]any{"owners": mapped(org.Owners, workload.GithubUser), "members": mapped(org.Members, workload.GithubUser), "base": base}
	}
	for i, repo := range w.Repos {
		collaborators, teams := map[string]string{}, map[string]string{}
		for u, l := range repo.Collaborators {
			collaborators[workload.GithubUser(u)] = ghRoles[l-1]
		}
		for t, l := range repo.Teams {
			teams[workload.GithubTeamID(t)] = ghRoles[l-1]
		}
		doc := map[string]any{"public": repo.Public, "archived": repo.Archived, "collaborators": collaborators, "teams": teams}
		if repo.Org >= 0 {
			doc["org"] = workload.GithubOrgID(repo.Org)
		} else {
			doc["owner"] = workload.GithubUser(repo.Owner)
		}
		repos[workload.GithubRepoID(i)] = doc
	}
	return map[string]any{
		"user_teams": userTeams, "team_parents": teamParents, "orgs": orgs, "repos": repos,
	}
}

// tinytodoData writes the world as data.tinytodo.
func tinytodoData(w *workload.TinytodoWorld) map[string]any {
	users, teamParents, lists := map[string]any{}, map[string][]string{}, map[string]any{}
	for u, level := range w.JobLevel {
		users[workload.TinytodoUser(u)] = map[string]any{"job_level": level, "teams": mapped(w.UserTeams[u], workload.TinytodoTeam)}
	}
	for t, p := range w.TeamParents {
		teamParents[workload.TinytodoTeam(t)] = []string{}
		if p >= 0 {
			teamParents[workload.TinytodoTeam(t)] = []string{workload.TinytodoTeam(p)}
		}
	}
	for l, list := range w.Lists {
		lists[workload.TinytodoListID(l)] = map[string]any{"owner": workload.TinytodoUser(list.Owner), "readers": ttIDs(list.Readers), "editors": ttIDs(list.Editors)}
	}
	return map[string]any{"users": users, "team_parents": teamParents, "lists": lists}
}

// mapped names each index of idx.
func mapped(idx []int, name func(int) string) []string {
	out := make([]string, 0, len(idx))
	for _, i := range idx {
		out = append(out, name(i))
	}
	return out
}

// ghRoles are the repository roles github.rego compares, weakest first: a role's index plus one
// is its level (workload.GithubWorld's).
var ghRoles = []string{"read", "triage", "write", "maintain", "admin"}

func ttIDs(gs []workload.TinytodoGrantee) []string {
	out := make([]string, 0, len(gs))
	for _, g := range gs {
		out = append(out, g.ID())
	}
	return out
}
