package spicedb

import (
	"context"
	"github.com/authzbench/authzbench/internal/kinds/kindstest"
	"path/filepath"
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

// BenchmarkSpiceDBInproc shows what the spicedb/inproc target adds over a bare loop calling
// pkg/embedded's own Check on the same prepared requests: the Decider call, the look at the
// answer against the input's assertion, its verification and the clock reads. The issue's
// budget is 5 %. Every SpiceDB workload is asked (a validation file's today; the built-ins'
// where they have a SpiceDB version).
//
//	go test ./internal/engine/spicedb -run XXX -bench SpiceDBInproc -benchtime 1s -count 3 -benchmem
func BenchmarkSpiceDBInproc(b *testing.B) {
	user, err := workload.FromFiles(workload.UserSpec{Policies: []string{filepath.Join("testdata", "docshare.yaml")}})
	if err != nil {
		b.Fatal(err)
	}
	ws := []*workload.Workload{user}
	for _, name := range []string{"nop", "rbac"} {
		if w, err := workload.Builtin(name); err == nil && Registered.Written(w) {
			ws = append(ws, w)
		}
	}
	ctx := context.Background()
	for _, w := range ws {
		t := &spicedbInproc{}
		if err := t.Start(ctx, w); err != nil {
			b.Fatal(err)
		}
		n := len(w.Inputs)
		b.Run(w.Name+"/bare", func(b *testing.B) {
			perms := t.loaded.Engine.Permissions()
			for i := 0; b.Loop(); i++ {
				if _, err := perms.Check(ctx, t.requests[i%n]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(w.Name+"/target", func(b *testing.B) {
			kindstest.TimeDecisions(b, t.Worker(), w.Inputs)
		})
		t.loaded.Engine.Close()
	}
}
