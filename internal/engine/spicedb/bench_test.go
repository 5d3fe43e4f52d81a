package spicedb

import (
	"context"
	"testing"

	"github.com/authzed/spicedb/pkg/embedded"
)

// BenchmarkCheck compares a bare loop over pkg/embedded's Check with Engine.Check on the same
// prepared requests: the engine adds a look at the answer and nothing else. Only the docshare
// fixture's decided checks are asked (a conditional one is a failure path).
func BenchmarkCheck(b *testing.B) {
	f, err := LoadValidationFile("testdata/docshare.yaml")
	if err != nil {
		b.Fatal(err)
	}
	e, err := Start(context.Background(), f)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	var reqs []embedded.CheckRequest
	for _, a := range f.Assertions {
		if a.Expect != ExpectConditional {
			reqs = append(reqs, e.Prepare(a))
		}
	}
	ctx := context.Background()
	b.Run("bare", func(b *testing.B) {
		perms := e.Permissions()
		i := 0
		for b.Loop() {
			if _, err := perms.Check(ctx, reqs[i%len(reqs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("engine", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := e.Check(ctx, reqs[i%len(reqs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
