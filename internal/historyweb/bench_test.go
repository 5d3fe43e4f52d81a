package historyweb

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/history"
	"github.com/authzbench/authzbench/internal/result"
)

// The target: a series page over 1,000 commits in a few seconds on 2 cores. One
// series, 1,000 commits of 3 repetitions, a 15 % step half way. The first request finds the
// changes (the permutation test over every figure); later ones reuse them until something is
// added. Figures in docs/history.md.
func BenchmarkSeriesPage1000(b *testing.B) {
	ctx := context.Background()
	st, err := history.Open(ctx, filepath.Join(b.TempDir(), "h.db"), history.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		level := rbacUS
		if i >= 500 {
			level *= stepBy
		}
		var reps []float64
		for range 3 {
			reps = append(reps, level*(1+noiseRel*rng.NormFloat64()))
		}
		created := start.Add(time.Duration(i) * time.Hour)
		doc := &result.Document{Schema: result.Schema, Created: created,
			Env:  result.Env{CPUModel: "Test CPU", Cores: 2, Kernel: "6.1", Pinning: "none", Commit: fmt.Sprintf("%040d", i)},
			Runs: []result.Run{runOf("opa/server", "rbac", created, reps)}}
		body, _ := json.Marshal(doc)
		in, err := history.ParseInput(fmt.Sprintf("c%d.json", i), body, "main")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.Add(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	srv := httptest.NewServer(Handler(st, Options{Timeout: 10 * time.Minute}))
	defer srv.Close()
	get := func(path string) {
		res, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", path, res.StatusCode)
		}
	}
	first := time.Now()
	get("/series/1")
	firstS := time.Since(first).Seconds()
	b.ResetTimer()
	for range b.N {
		get("/series/1")
	}
	b.ReportMetric(firstS, "s/first-page")
}
