package httpapi.authz

default allow := false

allow if input.user == "ann"
