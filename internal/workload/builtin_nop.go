package workload

import (
	"fmt"
	"math/rand/v2"
)

func init() {
	register(Spec{
		Name:        "nop",
		Description: "allow is always true: the floor of each mode (transport + engine fixed cost + harness)",
		Build:       buildNop,
	})
}

// Nop is what nop's reference model decides over: nothing, it allows every input.
type Nop struct{}

// NopInput is a nop input as its reference model reads it (it reads none of it): a user doing
// an action to a document.
type NopInput struct{ User, Action, Document string }

func buildNop(seed int64, n int) (*Workload, error) {
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	w := &Workload{
		Name:          "nop",
		Description:   builtins["nop"].Description,
		IgnoresInput:  true,
		Relationships: &RelationshipWorld{Family: "nop"},
		Model:         &Nop{},
	}
	// The inputs look like the rbac ones so the request size, and the cost of parsing it,
	// matches a small real request rather than an empty object.
	for i := range n {
		user := fmt.Sprintf("user-%03d", r.IntN(200))
		act := []string{"read", "write", "delete"}[r.IntN(3)]
		doc := fmt.Sprintf("doc-%04d", i)
		in := map[string]any{
			"user":     user,
			"action":   act,
			"resource": map[string]any{"type": "document", "id": doc},
		}
		// One relationship per document lets anyone do anything to it: the least a relationship
		// check can do, one relationship read.
		document := Obj("document", doc)
		w.Relationships.Relationships = append(w.Relationships.Relationships, Relate(document, "anyone", Any("user")))
		w.Relationships.Checks = append(w.Relationships.Checks,
			RelationshipCheck{Subject: Obj("user", user), Permission: "can_" + act, Resource: document})
		w.Inputs = append(w.Inputs, Input{JSON: mustJSON(in), Expect: ExpectAllow, Reason: "allow: nop",
			Model: NopInput{User: user, Action: act, Document: doc}})
	}
	return w, nil
}
