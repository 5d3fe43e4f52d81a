package cedar

import (
	_ "embed"

	"github.com/authzbench/authzbench/internal/workload"
)

//go:embed policies/docshare.cedar
var docsharePolicy []byte

//go:embed policies/docshare.cedarschema
var docshareSchema []byte

// docshareVersion is docshare-N in Cedar: its policies and schema, and no entity store, since
// every request carries the entities its decision reads.
func docshareVersion() builtin {
	return builtin{
		files: &Files{
			Policies: []workload.File{{Name: "docshare.cedar", Content: docsharePolicy}},
			Schema:   &workload.File{Name: "docshare.cedarschema", Content: docshareSchema},
		},
		request: requestOf(docshareRequest),
	}
}

// docshareRequest writes a docshare request as a Cedar request carrying its entities.
func docshareRequest(q workload.DocshareRequest) []byte {
	id := func(r workload.DocshareRef) uid { return uid{r.Type, r.ID} }
	req := request{
		Principal: id(q.Principal()),
		Action:    action(q.Action()),
		Resource:  id(q.Resource()),
		Context:   map[string]any{},
		Entities:  []entity{},
	}
	for _, r := range q.Entities() {
		e := entity{UID: id(r.Ref), Attrs: map[string]any{}, Parents: make([]uid, 0, len(r.Parents))}
		for _, p := range r.Parents {
			e.Parents = append(e.Parents, id(p))
		}
		for _, a := range r.Attrs {
			switch v := a.Value.(type) {
			case workload.DocshareRef:
				e.Attrs[a.Name] = ref(v.Type, v.ID)
			case []workload.DocshareRef:
				set := make([]any, 0, len(v))
				for _, x := range v {
					set = append(set, ref(x.Type, x.ID))
				}
				e.Attrs[a.Name] = set
			default:
				e.Attrs[a.Name] = v
			}
		}
		req.Entities = append(req.Entities, e)
	}
	return mustJSON(req)
}
