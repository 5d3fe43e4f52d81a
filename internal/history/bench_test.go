package history

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkIngestAndRead1000: 1,000 result documents (one run, 3 repetitions each) added to a
// new SQLite history, then the series read back over its 1,000 commits and searched for
// changes: the sizes the history's targets name.
func BenchmarkIngestAndRead1000(b *testing.B) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ins []*Input
	for i := range 1000 {
		level := 2000.0
		if i >= 500 {
			level = 2300
		}
		ins = append(ins, inputOf(b, fmt.Sprintf("r%d.json", i), "main",
			docOf(fmt.Sprintf("c%d", i), start.Add(time.Duration(i)*time.Minute), level, level*1.01, level*0.99)))
	}
	ctx := context.Background()
	for b.Loop() {
		st, err := Open(ctx, filepath.Join(b.TempDir(), "h.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		for _, in := range ins {
			if _, err := st.Add(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
		ingest := time.Since(t0)
		t0 = time.Now()
		series, _ := st.Series(ctx)
		points, err := st.Points(ctx, series[0].ID, "main")
		if err != nil || len(points) != 1000 {
			b.Fatalf("%d points, %v", len(points), err)
		}
		read := time.Since(t0)
		t0 = time.Now()
		changes, err := st.Changes(ctx, ChangeOptions{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(ingest.Seconds(), "ingest-s")
		b.ReportMetric(read.Seconds(), "points-s")
		b.ReportMetric(time.Since(t0).Seconds(), "changes-s")
		b.ReportMetric(float64(len(changes)), "changes")
		st.Close()
	}
}
