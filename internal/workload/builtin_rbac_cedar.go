package workload

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed policies/rbac.cedar
var rbacCedarPolicy []byte

//go:embed policies/rbac.cedarschema
var rbacCedarSchema []byte

// rbacCedarTypes names the Cedar entity type of each rbac resource type.
var rbacCedarTypes = map[string]string{
	"document": "Document", "folder": "Folder", "report": "Report", "dataset": "Dataset",
}

// rbacCedar writes the rbac data as Cedar entities, with the roles table turned into one permit
// per role and resource type.
func rbacCedar(d *rbacData) *Cedar {
	var es []cedarEntity
	roles := make([]string, 0, len(d.Roles))
	for role := range d.Roles {
		roles = append(roles, role)
		es = append(es, cedarEntity{UID: cedarUID{"Role", role}, Attrs: map[string]any{}, Parents: []cedarUID{}})
	}
	sort.Strings(roles)
	for name, u := range d.Users {
		parents := []cedarUID{}
		for _, r := range u.Roles {
			parents = append(parents, cedarUID{"Role", r})
		}
		es = append(es, cedarEntity{UID: cedarUID{"User", name}, Attrs: map[string]any{"suspended": u.Suspended}, Parents: parents})
	}
	for typ, byID := range d.Resources {
		for id, res := range byID {
			es = append(es, cedarEntity{
				UID:     cedarUID{rbacCedarTypes[typ], id},
				Attrs:   map[string]any{"owner": cedarRef("User", res.Owner), "confidential": res.Confidential},
				Parents: []cedarUID{},
			})
		}
	}
	sortEntities(es)

	var grants strings.Builder
	grants.WriteString("// Generated from the rbac roles table: one permit per role and resource type.\n")
	for _, role := range roles {
		types := make([]string, 0, len(d.Roles[role]))
		for typ := range d.Roles[role] {
			types = append(types, typ)
		}
		sort.Strings(types)
		for _, typ := range types {
			var actions []string
			for _, a := range d.Roles[role][typ] {
				actions = append(actions, "Action::"+cedarString(a))
			}
			fmt.Fprintf(&grants, "\n@id(%s)\npermit (principal in Role::%s, action in [%s], resource is %s);\n",
				cedarString("role-"+role+"-"+typ), cedarString(role), strings.Join(actions, ", "), rbacCedarTypes[typ])
		}
	}
	return &Cedar{
		Policies: []File{
			{Name: "rbac.cedar", Content: rbacCedarPolicy},
			{Name: "rbac-roles.cedar", Content: []byte(grants.String())},
		},
		Schema:   &File{Name: "rbac.cedarschema", Content: rbacCedarSchema},
		Entities: mustJSON(es),
	}
}

// rbacCedarRequest is the Cedar request for one rbac input. A resource type the schema does not
// know keeps its Rego name, so Cedar sees an unknown entity and denies, as Rego does.
func rbacCedarRequest(in rbacInput) []byte {
	typ, ok := rbacCedarTypes[in.Resource.Type]
	if !ok {
		typ = in.Resource.Type
	}
	return mustJSON(cedarRequest{
		Principal: cedarUID{"User", in.User},
		Action:    action(in.Action),
		Resource:  cedarUID{typ, in.Resource.ID},
		Context:   map[string]any{},
	})
}
