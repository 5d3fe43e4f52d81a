# rbac: role-based access control with resource ownership. It exercises the lookups most
# authorization policies are made of: a user record, a resource record, and a walk over the
# user's roles to the actions each role grants on the resource's type.
package authzbench.rbac

default allow := false

# A known, active user may act on a known resource when nothing forbids it and some grant
# below applies.
allow if {
	user := data.rbac.users[input.user]
	not user.suspended
	resource := data.rbac.resources[input.resource.type][input.resource.id]
	not forbidden(resource)
	granted(user, resource)
}

# Confidential resources are never shared, not even by their owner or an admin.
forbidden(resource) if {
	input.action == "share"
	resource.confidential
}

# Admins may do anything else.
granted(user, _) if "admin" in user.roles

# Owners may always read and write what they own, whatever their roles.
owner_actions := {"read", "write"}

granted(_, resource) if {
	resource.owner == input.user
	input.action in owner_actions
}

# Otherwise some role of the user must grant the action on the resource's type.
granted(user, _) if {
	some role in user.roles
	input.action in data.rbac.roles[role][input.resource.type]
}
