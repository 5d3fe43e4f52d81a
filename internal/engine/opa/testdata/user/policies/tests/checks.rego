package checks

test_bob if not data.httpapi.authz.allow with input.user as "bob"
