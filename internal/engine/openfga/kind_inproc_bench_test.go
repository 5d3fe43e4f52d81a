package openfga

import (
	"context"
	"github.com/authzbench/authzbench/internal/kinds/kindstest"
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

// These benchmarks show what the openfga/inproc target adds over a bare loop calling OpenFGA's
// own Server.Check on the same prepared requests: the Decider call, the verification of each
// decision and the clock reads. The budget is 5 %.
//
//	go test ./internal/engine/openfga -run XXX -bench OpenFGAInproc -benchtime 1s -count 3 -benchmem
func BenchmarkOpenFGAInproc(b *testing.B) {
	for _, name := range []string{"nop", "rbac"} {
		w, err := workload.Builtin(name)
		if err != nil {
			b.Fatal(err)
		}
		t := &openfgaInproc{}
		if err := t.Start(context.Background(), w); err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		n := len(w.Inputs)
		b.Run(name+"/bare", func(b *testing.B) {
			srv := t.engine.Server()
			for i := 0; b.Loop(); i++ {
				if _, err := srv.Check(ctx, t.requests[i%n]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/target", func(b *testing.B) {
			kindstest.TimeDecisions(b, t.Worker(), w.Inputs)
		})
	}
}
