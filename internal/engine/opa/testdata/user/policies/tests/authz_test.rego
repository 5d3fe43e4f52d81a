package httpapi.authz_test

test_ann if data.httpapi.authz.allow with input.user as "ann"
