package target

import (
	"context"
	"testing"
	"time"

	"github.com/cedar-policy/cedar-go"

	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// These benchmarks show what the cedar/inproc target adds over a bare loop of cedar.Authorize
// calls on the same prepared requests: the clock reads, the Decider call and the verification of
// each decision. The issue asks for at most 10 %; figures go in docs/benchmarks.md.
//
//	go test ./internal/target -run XXX -bench Cedar -benchtime 2s -count 5

func startCedarInproc(b *testing.B, name string) (*cedarInproc, *workload.Workload) {
	b.Helper()
	w, err := workload.Builtin(name)
	if err != nil {
		b.Fatal(err)
	}
	t := &cedarInproc{opts: Options{TempDir: b.TempDir()}}
	if err := t.Start(context.Background(), w); err != nil {
		b.Fatal(err)
	}
	return t, w
}

// BenchmarkCedarBareAuthorize is the floor: cedar.Authorize on the parsed requests, nothing else.
func BenchmarkCedarBareAuthorize(b *testing.B) {
	for _, name := range workload.CedarNames() {
		b.Run(name, func(b *testing.B) {
			t, _ := startCedarInproc(b, name)
			policies := t.engine.PolicySet()
			n := len(t.requests)
			allowed := 0
			for i := 0; b.Loop(); i++ {
				r := &t.requests[i%n]
				if d, _ := cedar.Authorize(policies, r.EntitiesOf(), r.Request); d == cedar.Allow {
					allowed++
				}
			}
			_ = allowed
		})
	}
}

// BenchmarkCedarTarget is the same decisions as the load driver makes them: two clock reads,
// the target's Decide and the classification against the expected decision.
func BenchmarkCedarTarget(b *testing.B) {
	for _, name := range workload.CedarNames() {
		b.Run(name, func(b *testing.B) {
			t, w := startCedarInproc(b, name)
			d := t.Worker()
			ctx := context.Background()
			n := len(w.Inputs)
			var sink time.Duration
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				out := d.Decide(ctx, i%n)
				sink += time.Since(start)
				if verify.Classify(w.Inputs[i%n].Expect, out) != verify.OK {
					b.Fatal("wrong decision")
				}
			}
			_ = sink
		})
	}
}
