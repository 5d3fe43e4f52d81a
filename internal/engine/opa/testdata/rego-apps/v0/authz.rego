# Rego v0 syntax, as written before OPA 1.0: rule bodies without "if", a partial set without
# "contains", and "=" for the default.
package v0app

default allow = false

allow {
	input.user == "admin"
}

allow {
	input.method == "GET"
	readers[input.user]
}

readers["ann"]

readers["bob"]
