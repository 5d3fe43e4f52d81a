package workload

import (
	"fmt"
	"sort"
	"strings"
)

// Helpers that write Cedar's JSON forms for the built-in workloads' Cedar versions.

// cedarUID is an entity reference in the implicit form requests and entity headers use.
type cedarUID struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// cedarRef is an entity reference inside attributes or context, where Cedar's JSON needs the
// explicit form to tell it from a record.
func cedarRef(typ, id string) map[string]cedarUID {
	return map[string]cedarUID{"__entity": {Type: typ, ID: id}}
}

// cedarEntity is one entity of an entities document.
type cedarEntity struct {
	UID     cedarUID       `json:"uid"`
	Attrs   map[string]any `json:"attrs"`
	Parents []cedarUID     `json:"parents"`
}

// cedarRequest is a request document as the cedar targets read it.
type cedarRequest struct {
	Principal cedarUID       `json:"principal"`
	Action    cedarUID       `json:"action"`
	Resource  cedarUID       `json:"resource"`
	Context   map[string]any `json:"context"`
	Entities  []cedarEntity  `json:"entities,omitempty"`
}

func action(id string) cedarUID { return cedarUID{Type: "Action", ID: id} }

// sortEntities orders entities by type then id, so generated documents are byte-identical from
// one build to the next whatever order maps were walked in.
func sortEntities(es []cedarEntity) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].UID.Type != es[j].UID.Type {
			return es[i].UID.Type < es[j].UID.Type
		}
		return es[i].UID.ID < es[j].UID.ID
	})
}

// cedarString quotes s as a Cedar string literal. The built-in workloads only put plain
// identifiers here; anything else is a programming error.
func cedarString(s string) string {
	if strings.ContainsAny(s, "\"\\\n") {
		panic(fmt.Sprintf("workload: %q needs escaping in Cedar", s))
	}
	return `"` + s + `"`
}
