package cedar

import (
	"context"
	"testing"

	cedargo "github.com/cedar-policy/cedar-go"

	"github.com/authzbench/authzbench/internal/kinds/kindstest"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// These benchmarks show what the cedar/inproc target adds over a bare loop of cedar.Authorize
// calls on the same prepared requests: the clock reads, the Decider call and the verification of
// each decision. The issue asks for at most 10 %; figures go in docs/benchmarks.md.
//
//	go test ./internal/engine/cedar -run XXX -bench CedarInproc -benchtime 1s -count 3 -benchmem

func startInproc(b *testing.B, name string) (*inproc, *workload.Workload) {
	b.Helper()
	w, err := workload.Builtin(name)
	if err != nil {
		b.Fatal(err)
	}
	t := &inproc{}
	if err := t.Start(context.Background(), w); err != nil {
		b.Fatal(err)
	}
	return t, w
}

// BenchmarkCedarInproc runs, per workload and side by side so that drift on a shared machine
// touches both alike, the floor (bare: the engine's Decide, which is cedar.Authorize on the
// parsed request and nothing else)
// the target's decider (its Decide and the classification against the expected decision), and
// the target as the load driver uses it (target: the decider between two clock reads).
func BenchmarkCedarInproc(b *testing.B) {
	for _, name := range workload.NamesWhere(Engine.Written) {
		t, w := startInproc(b, name)
		b.Run(name+"/bare", func(b *testing.B) {
			n := len(t.requests)
			allowed := 0
			for i := 0; b.Loop(); i++ {
				r := &t.requests[i%n]
				if d, _ := t.engine.Decide(r); d == cedargo.Allow {
					allowed++
				}
			}
			_ = allowed
		})
		// decider is target without the clock reads: what the target's own code adds, apart
		// from the cost of timing each decision that any latency histogram pays.
		b.Run(name+"/decider", func(b *testing.B) {
			d := t.Worker()
			ctx := context.Background()
			n := len(w.Inputs)
			for i := 0; b.Loop(); i++ {
				if verify.Classify(w.Inputs[i%n].Expect, d.Decide(ctx, i%n)) != verify.OK {
					b.Fatal("wrong decision")
				}
			}
		})
		b.Run(name+"/target", func(b *testing.B) {
			kindstest.TimeDecisions(b, t.Worker(), w.Inputs)
		})
	}
}
