package cedar

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

//go:embed policies/envoy.cedarschema
var envoySchema []byte

// envoyDifferences is what the Cedar version is handed: Cedar has no base64, so it cannot
// read the user out of the Authorization header as the Rego does.
const envoyDifferences = "Cedar is handed the user name decoded from the Basic Authorization header as the principal; Rego splits and base64-decodes the header itself"

// envoyVersion writes the envoy tables as Cedar: users are members of their roles, and each
// role's grants become one permit per role and method, matching path prefixes with `like`.
func envoyVersion(d *workload.EnvoyData) builtin {
	var es []entity
	roles := make([]string, 0, len(d.RoleGrants))
	for role := range d.RoleGrants {
		roles = append(roles, role)
		es = append(es, entity{UID: uid{"Role", role}, Attrs: map[string]any{}, Parents: []uid{}})
	}
	sort.Strings(roles)
	for user, rs := range d.UserRoles {
		parents := []uid{}
		for _, r := range rs {
			parents = append(parents, uid{"Role", r})
		}
		es = append(es, entity{UID: uid{"User", user}, Attrs: map[string]any{}, Parents: parents})
	}
	sortEntities(es)

	var p strings.Builder
	p.WriteString("// Generated from the envoy grants table: one permit per role and method; a grant's path\n")
	p.WriteString("// prefix is a `like` pattern ending in *.\n")
	for _, role := range roles {
		byMethod := map[string][]string{}
		var methods []string
		for _, g := range d.RoleGrants[role] {
			if _, seen := byMethod[g.Method]; !seen {
				methods = append(methods, g.Method)
			}
			if strings.Contains(g.PathPrefix, "*") {
				panic("cedar: envoy path prefix " + g.PathPrefix + " would be a wildcard in Cedar")
			}
			byMethod[g.Method] = append(byMethod[g.Method], fmt.Sprintf("context.path like %s", quote(g.PathPrefix+"*")))
		}
		sort.Strings(methods)
		for _, m := range methods {
			fmt.Fprintf(&p, "\n@id(%s)\npermit (principal in Role::%s, action == Action::%s, resource)\nwhen { %s };\n",
				quote("grant-"+role+"-"+m), quote(role), quote(m), strings.Join(byMethod[m], " || "))
		}
	}
	return builtin{
		files: &Files{
			Policies: []workload.File{{Name: "envoy.cedar", Content: []byte(p.String())}},
			Schema:   &workload.File{Name: "envoy.cedarschema", Content: envoySchema},
			Entities: mustJSON(es),
		},
		differences: envoyDifferences,
		request:     requestOf(func(in workload.EnvoyInput) []byte { return envoyRequest(in.User, in.Method, in.Path, in.Host) }),
	}
}

// envoyRequest is the Cedar request for one check: the decoded user, the method as the
// action and the path in the context. A user the tables do not know is not in the entity store,
// so no role permits it, as in the Rego.
func envoyRequest(user, method, path, host string) []byte {
	return mustJSON(request{
		Principal: uid{"User", user},
		Action:    action(method),
		Resource:  uid{"Service", host},
		Context:   map[string]any{"path": path, "host": host},
	})
}
