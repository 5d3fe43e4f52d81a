package mixed

allow := true

test_x if allow
