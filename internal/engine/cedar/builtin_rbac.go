package cedar

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

//go:embed policies/rbac.cedar
var rbacPolicy []byte

//go:embed policies/rbac.cedarschema
var rbacSchema []byte

// rbacTypes names the Cedar entity type of each rbac resource type.
var rbacTypes = map[string]string{
	"document": "Document", "folder": "Folder", "report": "Report", "dataset": "Dataset",
}

// rbacVersion writes the rbac data as Cedar entities, with the roles table turned into one
// permit per role and resource type.
func rbacVersion(d *workload.RBACData) builtin {
	var es []entity
	roles := make([]string, 0, len(d.Roles))
	for role := range d.Roles {
		roles = append(roles, role)
		es = append(es, entity{UID: uid{"Role", role}, Attrs: map[string]any{}, Parents: []uid{}})
	}
	sort.Strings(roles)
	for name, u := range d.Users {
		es = append(es, rbacUser(name, u))
	}
	for typ, byID := range d.Resources {
		for id, res := range byID {
			es = append(es, entity{
				UID:     uid{rbacTypes[typ], id},
				Attrs:   map[string]any{"owner": ref("User", res.Owner), "confidential": res.Confidential},
				Parents: []uid{},
			})
		}
	}
	sortEntities(es)
	return builtin{
		files: &Files{
			Policies: []workload.File{
				{Name: "rbac.cedar", Content: rbacPolicy},
				{Name: "rbac-roles.cedar", Content: []byte(rbacGrants(d.Roles))},
			},
			Schema:   &workload.File{Name: "rbac.cedarschema", Content: rbacSchema},
			Entities: mustJSON(es),
		},
		request: requestOf(rbacRequest),
	}
}

// rbacGrants is the rbac roles table as Cedar policies: one permit per role and resource type.
func rbacGrants(table map[string]map[string][]string) string {
	roles := make([]string, 0, len(table))
	for role := range table {
		roles = append(roles, role)
	}
	sort.Strings(roles)
	var grants strings.Builder
	grants.WriteString("// Generated from the rbac roles table: one permit per role and resource type.\n")
	for _, role := range roles {
		types := make([]string, 0, len(table[role]))
		for typ := range table[role] {
			types = append(types, typ)
		}
		sort.Strings(types)
		for _, typ := range types {
			var actions []string
			for _, a := range table[role][typ] {
				actions = append(actions, "Action::"+quote(a))
			}
			fmt.Fprintf(&grants, "\n@id(%s)\npermit (principal in Role::%s, action in [%s], resource is %s);\n",
				quote("role-"+role+"-"+typ), quote(role), strings.Join(actions, ", "), rbacTypes[typ])
		}
	}
	return grants.String()
}

// rbacUser is a user's entity: its roles are its parents.
func rbacUser(name string, u workload.RBACUser) entity {
	parents := []uid{}
	for _, r := range u.Roles {
		parents = append(parents, uid{"Role", r})
	}
	return entity{UID: uid{"User", name}, Attrs: map[string]any{"suspended": u.Suspended}, Parents: parents}
}

// rbacRequest is the Cedar request for one rbac input. A resource type the schema does not
// know keeps its Rego name, so Cedar sees an unknown entity and denies, as Rego does.
func rbacRequest(in workload.RBACInput) []byte {
	typ, ok := rbacTypes[in.Resource.Type]
	if !ok {
		typ = in.Resource.Type
	}
	return mustJSON(request{
		Principal: uid{"User", in.User},
		Action:    action(in.Action),
		Resource:  uid{typ, in.Resource.ID},
		Context:   map[string]any{},
	})
}
