// Package kindstest holds what the benchmarks of target kinds share, wherever the kinds live
// (internal/kinds, an engine's own package). It imports nothing of package kinds, so that
// package's own tests can use it too.
package kindstest

import (
	"context"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Decider is a target's decider (kinds.Decider), as the benchmarks call it.
type Decider interface {
	Decide(ctx context.Context, i int) verify.Outcome
}

// TimeDecisions runs d over inputs, round and round, for as long as b asks, timing each
// decision as the closed-loop worker does (two reads of one monotonic base around Decide), so
// ns/op holds the driver's own cost beside the engine's; a wrong decision fails b.
func TimeDecisions(b *testing.B, d Decider, inputs []workload.Input) {
	ctx := context.Background()
	n := len(inputs)
	var sink time.Duration
	base := time.Now()
	for i := 0; b.Loop(); i++ {
		start := time.Since(base)
		out := d.Decide(ctx, i%n)
		sink += time.Since(base) - start
		if verify.Classify(inputs[i%n].Expect, out) != verify.OK {
			b.Fatal("wrong decision")
		}
	}
	_ = sink
}
