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

// BenchmarkSDKDecisionLogging sets OPA's SDK with decision logging off, to the console (encoded,
// then discarded) and to a healthy log service inside authzbench (OPA's size buffer, its default
// upload delays) side by side, one decision of each in turn: what OPA's decision logger costs
// inside each decision. Ratios to logging off are reported, not asserted.
//
//	go test ./internal/engine/opa -run XXX -bench '^BenchmarkSDKDecisionLogging' -benchtime 2s -count 3
func BenchmarkSDKDecisionLogging(b *testing.B) {
	for _, name := range []string{"nop", "rbac"} {
		b.Run(name, func(b *testing.B) {
			w, err := workload.Builtin(name)
			if err != nil {
				b.Fatal(err)
			}
			common := kinds.Common{TempDir: b.TempDir()}
			modes := []DecisionLogConfig{{}, {DecisionLogs: logsConsole}, {DecisionLogs: logsService}}
			deciders := make([]kinds.Decider, len(modes))
			for k, m := range modes {
				tg := &sdkTarget{common: common, cfg: &SDKConfig{m}}
				if err := tg.Start(context.Background(), w); err != nil {
					b.Fatal(err)
				}
				defer tg.Stop(context.Background())
				deciders[k] = tg.Worker()
			}
			ctx := context.Background()
			spent := make([]time.Duration, len(modes))
			n := len(w.Inputs)
			base := time.Now()
			for i := 0; b.Loop(); i++ {
				for k, d := range deciders {
					start := time.Since(base)
					out := d.Decide(ctx, i%n)
					spent[k] += time.Since(base) - start
					if verify.Classify(w.Inputs[i%n].Expect, out) != verify.OK {
						b.Fatalf("input %d: wrong decision: %+v", i%n+1, out)
					}
				}
			}
			ops := float64(b.N)
			b.ReportMetric(float64(spent[0].Nanoseconds())/ops, "off-ns/decision")
			b.ReportMetric(float64(spent[1].Nanoseconds())/ops, "console-ns/decision")
			b.ReportMetric(float64(spent[2].Nanoseconds())/ops, "service-ns/decision")
			b.ReportMetric(float64(spent[1])/float64(spent[0]), "console/off")
			b.ReportMetric(float64(spent[2])/float64(spent[0]), "service/off")
		})
	}
}
