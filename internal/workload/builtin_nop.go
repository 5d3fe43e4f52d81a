package workload

import (
	"bytes"
	"fmt"
	"math/rand/v2"
)

// nopOpenFGAModel allows every user every action on a document through one wildcard tuple per
// document: the least an OpenFGA Check can do, one tuple read.
const nopOpenFGAModel = `model
  schema 1.1

type user

type document
  relations
    define anyone: [user:*]
    define can_read: anyone
    define can_write: anyone
    define can_delete: anyone
`

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
		Name:         "nop",
		Description:  builtins["nop"].Description,
		IgnoresInput: true,
		OpenFGA:      &OpenFGA{Model: nopOpenFGAModel},
		Model:        &Nop{},
	}
	var tuples bytes.Buffer
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
		check := map[string]string{"user": "user:" + user, "relation": "can_" + act, "object": "document:" + doc}
		tuples.Write(mustJSON(map[string]string{"user": "user:*", "relation": "anyone", "object": "document:" + doc}))
		tuples.WriteByte('\n')
		w.Inputs = append(w.Inputs, Input{JSON: mustJSON(in), Expect: ExpectAllow, Reason: "allow: nop", OpenFGA: mustJSON(check),
			Model: NopInput{User: user, Action: act, Document: doc}})
	}
	w.OpenFGA.Tuples = tuples.Bytes()
	return w, nil
}
