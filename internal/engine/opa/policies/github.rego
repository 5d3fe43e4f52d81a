# github: repositories of organisations and users. The world is data (data.github); a request
# names the user, the action and the repository.
#
# A repository role (read < triage < write < maintain < admin) comes from owning the
# repository, owning its organisation (admin), the organisation's base permission for its
# members, a direct grant (collaborators, outside ones included), or a grant to a team the user
# is in, directly or through a team inside it. Anyone may pull a public repository. Each action
# needs a role: pull read, triage triage, push write, merge maintain, manage admin. Archived
# repositories refuse triage, push and merge to everyone.
package authzbench.github

default allow := false

repo := data.github.repos[input.resource]

org := data.github.orgs[repo.org]

levels := {"read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}

needed := {"pull": 1, "triage": 2, "push": 3, "merge": 4, "manage": 5}

# The teams the user is in, directly or through teams inside them.
teams := graph.reachable(data.github.team_parents, object.get(data.github.user_teams, input.user, []))

level contains 5 if repo.owner == input.user

level contains 5 if input.user in org.owners

level contains levels[org.base] if input.user in org.members

level contains levels[repo.collaborators[input.user]]

level contains levels[role] if {
	some team, role in repo.teams
	team in teams
}

level contains 1 if repo.public

archived_refuses if {
	repo.archived
	input.action in {"triage", "push", "merge"}
}

allow if {
	not archived_refuses
	some l in level
	l >= needed[input.action]
}
