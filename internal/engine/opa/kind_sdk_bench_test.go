package opa

import (
	"context"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// BenchmarkSDKBesidePrepared sets OPA's SDK (opa/sdk: sdk.Decision per request, decision
// logging off) beside opa/inproc's prepared query on the same inputs, one decision of each in
// turn, so that both see the same machine at the same moment: what embedding OPA as Go services
// do costs over the prepared query. The ratio is reported, not asserted; figures go in
// docs/opa-deployed.md.
//
//	go test ./internal/engine/opa -run XXX -bench '^BenchmarkSDKBesidePrepared' -benchtime 2s -count 3
func BenchmarkSDKBesidePrepared(b *testing.B) {
	for _, name := range []string{"nop", "rbac", "api"} {
		b.Run(name, func(b *testing.B) {
			w, err := workload.Builtin(name)
			if err != nil {
				b.Fatal(err)
			}
			common := kinds.Common{TempDir: b.TempDir()}
			prepared, sdk := &inproc{common: common}, &sdkTarget{common: common, cfg: &SDKConfig{}}
			for _, tg := range []kinds.Target{prepared, sdk} {
				if err := tg.Start(context.Background(), w); err != nil {
					b.Fatal(err)
				}
				defer tg.Stop(context.Background())
			}
			ctx := context.Background()
			deciders := [2]kinds.Decider{prepared.Worker(), sdk.Worker()}
			var spent [2]time.Duration
			n := len(w.Inputs)
			base := time.Now()
			for i := 0; b.Loop(); i++ {
				for k, d := range deciders {
					start := time.Since(base)
					out := d.Decide(ctx, i%n)
					spent[k] += time.Since(base) - start
					if verify.Classify(w.Inputs[i%n].Expect, out) != verify.OK {
						b.Fatalf("input %d: wrong decision from %T: %+v", i%n+1, d, out)
					}
				}
			}
			ops := float64(b.N)
			b.ReportMetric(float64(spent[0].Nanoseconds())/ops, "prepared-ns/decision")
			b.ReportMetric(float64(spent[1].Nanoseconds())/ops, "sdk-ns/decision")
			b.ReportMetric(float64(spent[1])/float64(spent[0]), "sdk/prepared")
		})
	}
}
