# envoy: role-based access for an Envoy ext_authz check, on the request Envoy forwards.
#
# The input has the shape of Envoy's CheckRequest as OPA-Envoy presents it:
# input.attributes.request.http.{method, path, headers}. The caller is named by HTTP basic
# authentication; data maps users to roles and roles to the (method, path prefix) pairs they
# may use. Query: data.authzbench.envoy.allow.
package authzbench.envoy

default allow := false

http := input.attributes.request.http

# The user named in "Authorization: Basic base64(user:password)".
user := name if {
	[scheme, encoded] := split(http.headers.authorization, " ")
	lower(scheme) == "basic"
	[name, _] := split(base64.decode(encoded), ":")
}

allow if {
	some role in data.envoy.user_roles[user]
	some grant in data.envoy.role_grants[role]
	grant.method == http.method
	startswith(http.path, grant.path_prefix)
}
