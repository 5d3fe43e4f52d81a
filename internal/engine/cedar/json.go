package cedar

import (
	"fmt"
	"sort"
	"strings"
)

// What writes Cedar's JSON forms for the built-in workloads' Cedar versions.

// uid is an entity reference in the implicit form requests and entity headers use.
type uid struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// ref is an entity reference inside attributes or context, where Cedar's JSON needs the
// explicit form to tell it from a record.
func ref(typ, id string) map[string]uid {
	return map[string]uid{"__entity": {Type: typ, ID: id}}
}

// entity is one entity of an entities document.
type entity struct {
	UID     uid            `json:"uid"`
	Attrs   map[string]any `json:"attrs"`
	Parents []uid          `json:"parents"`
}

// request is a request document as the cedar targets read it.
type request struct {
	Principal uid            `json:"principal"`
	Action    uid            `json:"action"`
	Resource  uid            `json:"resource"`
	Context   map[string]any `json:"context"`
	Entities  []entity       `json:"entities,omitempty"`
}

func action(id string) uid { return uid{Type: "Action", ID: id} }

// sortEntities orders entities by type then id, so generated documents are byte-identical from
// one build to the next whatever order maps were walked in.
func sortEntities(es []entity) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].UID.Type != es[j].UID.Type {
			return es[i].UID.Type < es[j].UID.Type
		}
		return es[i].UID.ID < es[j].UID.ID
	})
}

// quote quotes s as a Cedar string literal. The built-in workloads only put plain identifiers
// here; anything else is a programming error.
func quote(s string) string {
	if strings.ContainsAny(s, "\"\\\n") {
		panic(fmt.Sprintf("cedar: %q needs escaping in Cedar", s))
	}
	return `"` + s + `"`
}
