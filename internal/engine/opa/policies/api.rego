# api: authorization of HTTP API calls that carry an HS256 bearer token. It exercises what an
# API gateway policy does per request: verify a JWT, match the method and path against route
# patterns, compare scope sets, rank tiers, check business hours and a rate-limit budget.
#
# The clock is input.now_ns, never time.now_ns(), so every decision is reproducible.
package authzbench.api

default allow := false

# A request is allowed when its token verifies, some route matching it permits the caller,
# and the caller's tier still has budget left in the current window.
allow if {
	claims
	some route in routes
	permitted(route)
	within_budget
}

# claims is the payload of a token whose signature, audience and expiry all verify, issued to
# a subject that has not been revoked; undefined otherwise.
claims := payload if {
	[valid, _, payload] := io.jwt.decode_verify(input.token, {
		"secret": data.api.jwt_secret,
		"aud": data.api.audience,
		"time": input.now_ns,
	})
	valid
	not data.api.revoked[payload.sub]
}

# scopes is the set of scopes the token grants, from its space-separated "scope" claim.
scopes := {s | some s in split(claims.scope, " ")}

# tier is the caller's plan, which sets what it may call and how often.
tier := data.api.tiers[claims.tier]

# routes are the endpoints whose method and path pattern match the request; "*" in a pattern
# stands for exactly one path segment.
routes contains route if {
	some route in data.api.endpoints
	route.method == input.method
	glob.match(route.path, ["/"], input.path)
}

# A route permits the caller when the token has every scope it requires and every
# restriction the route carries is met.
permitted(route) if {
	every required in route.scopes {
		required in scopes
	}
	tier_allows(route)
	hours_allow(route)
	account_allows(route)
}

# Some routes are reserved for higher tiers.
tier_allows(route) if not route.min_tier

tier_allows(route) if tier.rank >= data.api.tiers[route.min_tier].rank

# Some routes are only open during business hours (UTC).
hours_allow(route) if not route.business_hours

hours_allow(route) if {
	route.business_hours
	business_hours
}

business_hours if {
	hours := data.api.business_hours
	time.weekday(input.now_ns) in hours.days
	[hour, _, _] := time.clock(input.now_ns)
	hour >= hours.start_hour
	hour < hours.end_hour
}

# Routes under an account carry its id in one path segment; the caller must belong to that
# account, unless its token may act on any account.
account_allows(route) if not route.account_segment

account_allows(route) if {
	route.account_segment
	split(input.path, "/")[route.account_segment] == claims.acct
}

account_allows(route) if {
	route.account_segment
	"accounts:any" in scopes
}

# The caller's count of requests already made in the window must be below its tier's budget.
within_budget if input.usage.requests_in_window < tier.requests_per_window
