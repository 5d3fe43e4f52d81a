package workload

import (
	"fmt"
	"math/rand/v2"
)

const nopPolicy = `# nop: the floor. It allows everything, so what is measured is the transport, the engine's
# fixed cost per query and the harness, with no policy work on top.
package authzbench.nop

allow := true
`

func init() {
	register(Spec{
		Name:        "nop",
		Description: "allow is always true: the floor of each mode (transport + engine fixed cost + harness)",
		Build:       buildNop,
	})
}

func buildNop(seed int64, n int) (*Workload, error) {
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	w := &Workload{
		Name:        "nop",
		Description: builtins["nop"].Description,
		Query:       "data.authzbench.nop.allow",
		Policies:    []File{{Name: "nop.rego", Content: []byte(nopPolicy)}},
	}
	// The inputs look like the rbac ones so the request size, and the cost of parsing it,
	// matches a small real request rather than an empty object.
	for i := range n {
		in := map[string]any{
			"user":     fmt.Sprintf("user-%03d", r.IntN(200)),
			"action":   []string{"read", "write", "delete"}[r.IntN(3)],
			"resource": map[string]any{"type": "document", "id": fmt.Sprintf("doc-%04d", i)},
		}
		w.Inputs = append(w.Inputs, Input{JSON: mustJSON(in), Expect: ExpectAllow, Reason: "allow: nop"})
	}
	return w, nil
}
