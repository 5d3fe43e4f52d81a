# No default: when no rule matches, allow is undefined, which the caller reads as deny.
package nodefault

allow if input.role == "admin"

allow if {
	input.role == "viewer"
	input.action == "read"
}
