package target

import (
	"context"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// These benchmarks show what the opa/inproc target adds over a bare loop of OPA evaluations:
// the clock reads and the verification of each decision. Figures go in docs/benchmarks.md.
//
//	go test ./internal/target -run XXX -bench '^BenchmarkInproc' -benchtime 3s

func startInproc(b *testing.B, name string) (*opaInproc, *workload.Workload) {
	b.Helper()
	w, err := workload.Builtin(name)
	if err != nil {
		b.Fatal(err)
	}
	t := &opaInproc{opts: Options{TempDir: b.TempDir()}}
	if err := t.Start(context.Background(), w); err != nil {
		b.Fatal(err)
	}
	return t, w
}

// BenchmarkInprocBareEval is the floor: PreparedEvalQuery.Eval on pre-parsed inputs, nothing else.
func BenchmarkInprocBareEval(b *testing.B) {
	for _, name := range []string{"nop", "rbac", "api"} {
		b.Run(name, func(b *testing.B) {
			t, _ := startInproc(b, name)
			ctx := context.Background()
			n := len(t.inputs)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				rs, err := t.query.Eval(ctx, rego.EvalParsedInput(t.inputs[i%n]))
				if err != nil || len(rs) == 0 {
					b.Fatal("eval failed", err)
				}
			}
		})
	}
}

// BenchmarkInprocTarget is the same evaluations as the load driver runs them: two clock reads,
// the decision read from the result, and its classification.
func BenchmarkInprocTarget(b *testing.B) {
	for _, name := range []string{"nop", "rbac", "api"} {
		b.Run(name, func(b *testing.B) {
			t, w := startInproc(b, name)
			d := t.Worker()
			ctx := context.Background()
			n := len(w.Inputs)
			var sink time.Duration
			base := time.Now() // timed as the closed-loop worker times it
			for i := 0; b.Loop(); i++ {
				start := time.Since(base)
				out := d.Decide(ctx, i%n)
				sink += time.Since(base) - start
				if verify.Classify(w.Inputs[i%n].Expect, out) != verify.OK {
					b.Fatal("wrong decision")
				}
			}
			_ = sink
		})
	}
}

// BenchmarkInprocOPABenchMethod times the same evaluations the way `opa bench` does: the
// benchmark timer is started and stopped around every evaluation. Each StartTimer/StopTimer
// reads runtime memory statistics (a stop-the-world), which leaves caches cold and inflates
// ns/op for evaluations of tens of microseconds; compare with BenchmarkInprocBareEval.
func BenchmarkInprocOPABenchMethod(b *testing.B) {
	for _, name := range []string{"nop", "rbac", "api"} {
		b.Run(name, func(b *testing.B) {
			t, _ := startInproc(b, name)
			ctx := context.Background()
			n := len(t.inputs)
			b.ResetTimer()
			for i := range b.N {
				b.StartTimer()
				rs, err := t.query.Eval(ctx, rego.EvalParsedInput(t.inputs[i%n]))
				b.StopTimer()
				if err != nil || len(rs) == 0 {
					b.Fatal("eval failed", err)
				}
			}
		})
	}
}
