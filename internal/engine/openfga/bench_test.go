package openfga

import (
	"context"
	"testing"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
)

// BenchmarkCheck holds Engine.Check to a bare loop over OpenFGA's own Server.Check on the same
// prepared requests (issue 24: the in-process target within 5 % of it). Compare the two with
// benchstat; the figures belong in docs/, not in a test.
func BenchmarkCheck(b *testing.B) {
	ctx := context.Background()
	f, err := LoadStore("testdata/store.fga.yaml")
	if err != nil {
		b.Fatal(err)
	}
	e, err := Start(ctx, f)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	reqs := make([]*openfgav1.CheckRequest, len(f.Assertions))
	for i, a := range f.Assertions {
		if reqs[i], err = e.Prepare(a); err != nil {
			b.Fatal(err)
		}
	}
	srv := e.Server()
	b.Run("bare", func(b *testing.B) {
		allowed := 0
		i := 0
		for b.Loop() {
			resp, err := srv.Check(ctx, reqs[i])
			if err != nil {
				b.Fatal(err)
			}
			if resp.GetAllowed() {
				allowed++
			}
			i = (i + 1) % len(reqs)
		}
		_ = allowed
	})
	b.Run("engine", func(b *testing.B) {
		allowed := 0
		i := 0
		for b.Loop() {
			ok, err := e.Check(ctx, reqs[i])
			if err != nil {
				b.Fatal(err)
			}
			if ok {
				allowed++
			}
			i = (i + 1) % len(reqs)
		}
		_ = allowed
	})
}
