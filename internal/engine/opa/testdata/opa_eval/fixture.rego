package fixture

default allow := false

allow if input.user == "ann"

decision := {"allow": allow, "reasons": [input.user]}
