package workload

import (
	_ "embed"
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

func init() {
	register(Spec{
		Name:        "envoy",
		Description: "Envoy ext_authz-shaped input: basic-auth user, roles, method and path-prefix grants",
		Build:       buildEnvoy,
	})
}

// EnvoyGrant is a method a role may call on every path under a prefix.
type EnvoyGrant struct {
	Method     string `json:"method"`
	PathPrefix string `json:"path_prefix"`
}

// EnvoyData is what the envoy workload's reference model decides over: users' roles and the
// roles' grants.
type EnvoyData struct {
	UserRoles  map[string][]string     `json:"user_roles"`
	RoleGrants map[string][]EnvoyGrant `json:"role_grants"`
}

var envoyTables = EnvoyData{
	UserRoles: map[string][]string{
		"ann": {"viewer"}, "ben": {"editor"}, "cat": {"viewer", "billing"}, "dan": {"admin"}, "eve": {},
	},
	RoleGrants: map[string][]EnvoyGrant{
		"viewer":  {{"GET", "/people"}, {"GET", "/orders"}},
		"editor":  {{"GET", "/people"}, {"POST", "/people"}, {"PUT", "/people/"}},
		"billing": {{"GET", "/invoices"}, {"POST", "/invoices"}},
		"admin":   {{"GET", "/"}, {"POST", "/"}, {"PUT", "/"}, {"DELETE", "/"}},
	},
}

// envoyDecide is the reference model: the user's roles must grant the method on a prefix of
// the path.
func envoyDecide(d *EnvoyData, user, method, path string) (bool, string) {
	roles, ok := d.UserRoles[user]
	if !ok {
		return false, "deny: unknown user"
	}
	for _, role := range roles {
		for _, g := range d.RoleGrants[role] {
			if g.Method == method && strings.HasPrefix(path, g.PathPrefix) {
				return true, "allow: " + role
			}
		}
	}
	if len(roles) == 0 {
		return false, "deny: no roles"
	}
	return false, "deny: not granted"
}

// EnvoyInput is an envoy check as its reference model reads it: the user of its Basic
// Authorization header, decoded, and the method, path and host of the request.
type EnvoyInput struct{ User, Method, Path, Host string }

// Decide is the reference model's decision of in, and the rule that made it.
func (d *EnvoyData) Decide(in EnvoyInput) (allow bool, reason string) {
	return envoyDecide(d, in.User, in.Method, in.Path)
}

func buildEnvoy(seed int64, n int) (*Workload, error) {
	r := rand.New(rand.NewPCG(uint64(seed), 0x656e766f79))
	d := envoyTables
	w := &Workload{
		Name:        "envoy",
		Description: builtins["envoy"].Description,
		Model:       &d,
	}
	users := []string{"ann", "ann", "ben", "ben", "cat", "cat", "dan", "dan", "eve", "zed"}
	methods := []string{"GET", "GET", "GET", "GET", "POST", "PUT", "DELETE"}
	paths := []string{"/people", "/people/42", "/orders", "/orders/7", "/invoices", "/invoices/3", "/admin/users"}
	for range n {
		user, method, path := users[r.IntN(len(users))], methods[r.IntN(len(methods))], paths[r.IntN(len(paths))]
		auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":password"))
		in := map[string]any{"attributes": map[string]any{
			"source": map[string]any{"address": map[string]any{"socketAddress": map[string]any{"address": "10.0.0.7", "portValue": 53210}}},
			"request": map[string]any{"http": map[string]any{
				"id": "req", "method": method, "path": path, "host": "app.example", "protocol": "HTTP/1.1",
				"headers": map[string]any{":authority": "app.example", ":method": method, ":path": path, "authorization": auth,
					"user-agent": "curl/8.5.0", "x-request-id": "7f1c9a"},
			}},
		}}
		allow, reason := envoyDecide(&d, user, method, path)
		w.Inputs = append(w.Inputs, Input{JSON: mustJSON(in), Expect: expectOf(allow), Reason: reason,
			Model: EnvoyInput{User: user, Method: method, Path: path, Host: "app.example"}})
	}
	return w, nil
}
