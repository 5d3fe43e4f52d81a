package casbin

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds/kindstest"
	"github.com/authzbench/authzbench/internal/workload"
)

// BenchmarkCasbinInproc shows what the casbin/inproc target adds over a bare loop calling the
// same SyncedEnforcer's Enforce on the same decoded requests: the Decider call, the look at the
// answer, its verification against the expected decision and the clock reads. The issue's
// budget is 5 %. Side by side per workload, so that drift on a shared machine touches both.
//
//	go test ./internal/engine/casbin -run XXX -bench CasbinInproc -benchtime 2000x -count 3 -benchmem
func BenchmarkCasbinInproc(b *testing.B) {
	ws := []*workload.Workload{rbacFilesWorkload(b)}
	for _, name := range []string{"nop", "rbac", "api", "rules-path-100"} {
		w, err := workload.Builtin(name)
		if err != nil {
			b.Fatal(err)
		}
		ws = append(ws, w)
	}
	ctx := context.Background()
	for _, w := range ws {
		t := &casbinInproc{}
		if err := t.Start(ctx, w); err != nil {
			b.Fatal(err)
		}
		l, n := t.loaded, len(w.Inputs)
		// Once round before either side is timed: Casbin compiles the matcher at the first
		// Enforce and remembers each role-link answer (g) from then on, which would otherwise
		// be charged to whichever side ran first.
		for i := range n {
			if _, err := l.Enforcer.Enforce(l.Requests[i]...); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(w.Name+"/bare", func(b *testing.B) {
			reportCPU(b, func() {
				allowed := 0
				for i := 0; b.Loop(); i++ {
					ok, err := l.Enforcer.Enforce(l.Requests[i%n]...)
					if err != nil {
						b.Fatal(err)
					}
					if ok {
						allowed++
					}
				}
				_ = allowed
			})
		})
		b.Run(w.Name+"/target", func(b *testing.B) {
			reportCPU(b, func() { kindstest.TimeDecisions(b, t.Worker(), w.Inputs) })
		})
	}
}

// reportCPU runs a side of the benchmark and reports, beside its wall time, the CPU time this
// process spent per decision (user and system, from getrusage, GC included, which both sides
// pay alike): where other processes share the cores, wall time counts their turns too, and a
// difference of a few percent drowns in it (on a 2-core machine at load 20, ns/op of the same
// loop varied 3-fold between runs).
func reportCPU(b *testing.B, run func()) {
	before := processCPU(b)
	run()
	b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
