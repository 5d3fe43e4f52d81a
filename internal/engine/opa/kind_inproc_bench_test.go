package opa

import (
	"context"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/kinds/kindstest"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// These benchmarks show what the opa/inproc target adds over a bare loop of OPA evaluations:
// the clock reads and the verification of each decision. Figures go in docs/benchmarks.md.
//
//	go test ./internal/engine/opa -run XXX -bench '^BenchmarkInproc' -benchtime 3s

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
			kindstest.TimeDecisions(b, t.Worker(), w.Inputs)
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

// BenchmarkInprocDeadline is what giving every evaluation a deadline costs, as ratios to the
// evaluation without one (the context watched by the goroutine Eval starts), taken from the
// same loop so that a busy machine slows all three alike: the worker's Decide (a deadline
// checked through an external Cancel), and, for comparison, a context.WithTimeout per decision.
//
//	go test ./internal/engine/opa -run XXX -bench InprocDeadline -benchtime 3s
func BenchmarkInprocDeadline(b *testing.B) {
	for _, name := range []string{"nop", "rbac"} {
		b.Run(name, func(b *testing.B) {
			t, _ := startInproc(b, name)
			t.common.Timeout = 5 * time.Second
			d := t.Worker()
			ctx := context.Background()
			n := len(t.inputs)
			var none, decide, withTimeout time.Duration
			base := time.Now()
			for i := 0; b.Loop(); i++ {
				in := i % n
				start := time.Since(base)
				rs, err := t.query.Eval(ctx, t.inputOpts[in])
				if err != nil || len(rs) == 0 || kinds.DecisionOfValue(rs[0].Expressions[0].Value).Kind != verify.Decided {
					b.Fatal("eval failed", err)
				}
				mid := time.Since(base)
				if d.Decide(ctx, in).Kind != verify.Decided {
					b.Fatal("decide failed")
				}
				mid2 := time.Since(base)
				tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				rs, err = t.query.Eval(tctx, t.inputOpts[in])
				cancel()
				if err != nil || len(rs) == 0 || kinds.DecisionOfValue(rs[0].Expressions[0].Value).Kind != verify.Decided {
					b.Fatal("eval failed", err)
				}
				end := time.Since(base)
				none, decide, withTimeout = none+mid-start, decide+mid2-mid, withTimeout+end-mid2
			}
			b.ReportMetric(float64(decide)/float64(none), "decide/none")
			b.ReportMetric(float64(withTimeout)/float64(none), "withtimeout/none")
		})
	}
}
