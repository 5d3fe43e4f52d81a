package shared

default allow := false

allow if not deny
