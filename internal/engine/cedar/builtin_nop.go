package cedar

import "github.com/authzbench/authzbench/internal/workload"

const nopPolicy = `// nop in Cedar: one permit that matches every request, the floor of each Cedar mode.
@id("allow-all")
permit (principal, action, resource);
`

const nopSchema = `// Schema of the nop workload's Cedar version.
entity User;
entity Document;
action read, write, delete appliesTo { principal: User, resource: Document, context: {} };

// An Envoy ext_authz check, as authzbench's Cedar ext_authz server maps it: the method is the
// action, the host the resource, the path and host the context.
entity Service;
action GET, PUT, DELETE appliesTo { principal: User, resource: Service, context: { path: String, host: String } };
`

// nopVersion is nop in Cedar: one permit for every request, each naming its user, action and
// document, so the request's size and parse cost match a small real one.
func nopVersion() builtin {
	return builtin{
		files: &Files{
			Policies: []workload.File{{Name: "nop.cedar", Content: []byte(nopPolicy)}},
			Schema:   &workload.File{Name: "nop.cedarschema", Content: []byte(nopSchema)},
		},
		request: requestOf(func(in workload.NopInput) []byte {
			return mustJSON(request{Principal: uid{"User", in.User}, Action: action(in.Action),
				Resource: uid{"Document", in.Document}, Context: map[string]any{}})
		}),
	}
}
