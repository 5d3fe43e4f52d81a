package history

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/compare"
)

// A new result 15 % slower than the last 10 commits of main fails a gate on p50 > +10 %; one at
// the same level passes it; a run the history has no series for fails it (never a pass on
// nothing).
func TestWindowGate(t *testing.T) {
	ctx := context.Background()
	s := openT(t, backends()["sqlite"](t))
	ins := stepSeries(t, 2000, 1, 21)[:20]
	addAll(t, s, ins)
	gate, err := compare.ParseGate("p50>+10%,throughput<-10%")
	if err != nil {
		t.Fatal(err)
	}
	at := ins[19].Doc.Created.Add(time.Hour)
	for _, tc := range []struct {
		name    string
		service float64
		pass    bool
	}{{"slower", 2300, false}, {"same", 2000, true}} {
		t.Run(tc.name, func(t *testing.T) {
			doc := docOf("cnew", at, tc.service*1.01, tc.service, tc.service*0.99, tc.service*1.005)
			// Added first, as run --history does before the gate: its own repetitions are not
			// its base.
			if _, err := s.Add(ctx, inputOf(t, "new.json", "pr", doc)); err != nil {
				t.Fatal(err)
			}
			base, err := Window(ctx, s, doc, "main", 10, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(base.Runs) != 1 || len(base.Runs[0].Repetitions) != 30 {
				t.Fatalf("base: %d runs, want 1 of 30 repetitions (10 commits × 3)", len(base.Runs))
			}
			if p50 := base.Runs[0].Summary.LatencyUS.P50; math.Abs(p50-2000) > 100 {
				t.Fatalf("window p50 %v µs from the merged histograms, want about 2000", p50)
			}
			res := compare.Compare("history", base, "new.json", doc, compare.Options{})
			v := gate.Check(res)
			if v.Passed != tc.pass {
				t.Fatalf("gate passed %v, want %v: %+v", v.Passed, tc.pass, v.Failures)
			}
			for _, f := range v.Failures {
				if f.Figure != compare.P50 && f.Figure != compare.Throughput {
					t.Errorf("failed for another reason than the slowdown: %v", f)
				}
			}
		})
	}
	t.Run("no series", func(t *testing.T) {
		doc := docOf("cnew", at, 2000, 2000, 2000, 2000)
		doc.Runs[0].Workload = "api"
		base, err := Window(ctx, s, doc, "main", 10, "")
		if err != nil {
			t.Fatal(err)
		}
		if v := gate.Check(compare.Compare("history", base, "new.json", doc, compare.Options{})); v.Passed {
			t.Fatal("a run with no history passed the gate")
		}
	})
}
