# rbac-opt: the rbac policy rewritten from its profile (authzbench profile --workload rbac), the
# same decisions on the same requests. What changed, and why:
#
# - Lookup tables in data instead of walks: the profile's hottest line was the walk over the
#   user's roles to the actions each grants ("input.action in data.rbac.roles[role][type]",
#   an array scan per role). Here each user carries what their roles grant, as an object
#   can[type][action], computed once when the data is written: one lookup per decision.
# - Objects for membership: "admin" in user.roles scanned the roles array; the user record
#   carries admin: true instead, and the owner's actions are an object.
# - Early rejection: the cheapest, most frequent grant (the role table) is tried before the
#   owner comparison.
package authzbench.rbac_opt

default allow := false

allow if {
	user := data.rbac_opt.users[input.user]
	not user.suspended
	resource := data.rbac_opt.resources[input.resource.type][input.resource.id]
	not forbidden(resource)
	granted(user, resource)
}

# Confidential resources are never shared, not even by their owner or an admin.
forbidden(resource) if {
	input.action == "share"
	resource.confidential
}

granted(user, _) if user.can[input.resource.type][input.action]

granted(user, _) if user.admin

granted(_, resource) if {
	owner_actions[input.action]
	resource.owner == input.user
}

owner_actions := {"read": true, "write": true}
