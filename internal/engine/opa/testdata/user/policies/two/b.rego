package team.b

allow := false
