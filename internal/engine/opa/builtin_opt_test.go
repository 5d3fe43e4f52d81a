package opa

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

// Each rewritten workload sends the original's inputs, byte for byte, and OPA decides every
// one as the original's reference model expects, on the default seed and on others (other
// data, other inputs), so a rewrite that changes a decision fails here.
func TestOptimizedWorkloadsDecideAsTheOriginals(t *testing.T) {
	for _, pair := range [][2]string{{"rbac-opt", "rbac"}, {"api-opt", "api"}, {"risk-opt", "risk"}} {
		for _, seed := range []int64{workload.DefaultSeed, 1, 2, 3} {
			t.Run(fmt.Sprintf("%s/seed-%d", pair[0], seed), func(t *testing.T) {
				opt, err := workload.BuiltinWith(pair[0], seed, 1000)
				if err != nil {
					t.Fatal(err)
				}
				orig, err := workload.BuiltinWith(pair[1], seed, 1000)
				if err != nil {
					t.Fatal(err)
				}
				if opt.Name != pair[0] || opt.Query == orig.Query || bytes.Equal(opt.Policies[0].Content, orig.Policies[0].Content) || opt.Model != nil {
					t.Errorf("%s: name %q, query %q, its own policy and no model (so no other engine's version) wanted", pair[0], opt.Name, opt.Query)
				}
				if len(opt.Inputs) != len(orig.Inputs) {
					t.Fatalf("%d inputs, the original has %d", len(opt.Inputs), len(orig.Inputs))
				}
				for i := range opt.Inputs {
					if !bytes.Equal(opt.Inputs[i].JSON, orig.Inputs[i].JSON) || opt.Inputs[i].Expect != orig.Inputs[i].Expect {
						t.Fatalf("input %d differs from the original's", i+1)
					}
				}
				checkAgainstModel(t, opt)
			})
		}
	}
}
