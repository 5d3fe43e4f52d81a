package team.a

allow := true
