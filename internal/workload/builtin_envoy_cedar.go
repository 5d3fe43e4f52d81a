package workload

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed policies/envoy.cedarschema
var envoyCedarSchema []byte

// envoyCedarDifferences is what the Cedar version is handed: Cedar has no base64, so it cannot
// read the user out of the Authorization header as the Rego does.
const envoyCedarDifferences = "Cedar is handed the user name decoded from the Basic Authorization header as the principal; Rego splits and base64-decodes the header itself"

// envoyCedar writes the envoy tables as Cedar: users are members of their roles, and each role's
// grants become one permit per role and method, matching path prefixes with `like`.
func envoyCedar(d *envoyData) *Cedar {
	var es []cedarEntity
	roles := make([]string, 0, len(d.RoleGrants))
	for role := range d.RoleGrants {
		roles = append(roles, role)
		es = append(es, cedarEntity{UID: cedarUID{"Role", role}, Attrs: map[string]any{}, Parents: []cedarUID{}})
	}
	sort.Strings(roles)
	for user, rs := range d.UserRoles {
		parents := []cedarUID{}
		for _, r := range rs {
			parents = append(parents, cedarUID{"Role", r})
		}
		es = append(es, cedarEntity{UID: cedarUID{"User", user}, Attrs: map[string]any{}, Parents: parents})
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
				panic("workload: envoy path prefix " + g.PathPrefix + " would be a wildcard in Cedar")
			}
			byMethod[g.Method] = append(byMethod[g.Method], fmt.Sprintf("context.path like %s", cedarString(g.PathPrefix+"*")))
		}
		sort.Strings(methods)
		for _, m := range methods {
			fmt.Fprintf(&p, "\n@id(%s)\npermit (principal in Role::%s, action == Action::%s, resource)\nwhen { %s };\n",
				cedarString("grant-"+role+"-"+m), cedarString(role), cedarString(m), strings.Join(byMethod[m], " || "))
		}
	}
	return &Cedar{
		Policies:    []File{{Name: "envoy.cedar", Content: []byte(p.String())}},
		Schema:      &File{Name: "envoy.cedarschema", Content: envoyCedarSchema},
		Entities:    mustJSON(es),
		Differences: envoyCedarDifferences,
	}
}

// envoyCedarRequest is the Cedar request for one check: the decoded user, the method as the
// action and the path in the context. A user the tables do not know is not in the entity store,
// so no role permits it, as in the Rego.
func envoyCedarRequest(user, method, path, host string) []byte {
	return mustJSON(cedarRequest{
		Principal: cedarUID{"User", user},
		Action:    action(method),
		Resource:  cedarUID{"Service", host},
		Context:   map[string]any{"path": path, "host": host},
	})
}
