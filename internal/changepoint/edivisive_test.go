package changepoint

import (
	"math/rand/v2"
	"testing"
)

// series draws commits points of reps observations each, normal around level(i) with sd.
func series(commits, reps int, sd float64, level func(i int) float64, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][]float64, commits)
	for i := range out {
		for range reps {
			out[i] = append(out[i], level(i)+rng.NormFloat64()*sd)
		}
	}
	return out
}

func TestFindStep(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		pts := series(40, 3, 30, func(i int) float64 {
			if i >= 20 {
				return 1150
			}
			return 1000
		}, seed)
		got := Find(pts, Options{Seed: 7})
		if len(got) != 1 || got[0].Point != 20 {
			t.Fatalf("seed %d: splits %+v, want one at point 20", seed, got)
		}
		if got[0].P >= 0.05 {
			t.Errorf("seed %d: p %.3f, want < 0.05", seed, got[0].P)
		}
	}
}

func TestFindTwoSteps(t *testing.T) {
	pts := series(45, 3, 20, func(i int) float64 {
		switch {
		case i >= 30:
			return 900
		case i >= 15:
			return 1200
		}
		return 1000
	}, 3)
	got := Find(pts, Options{Seed: 1})
	if len(got) != 2 || got[0].Point != 15 || got[1].Point != 30 {
		t.Fatalf("splits %+v, want at 15 and 30", got)
	}
}

func TestFindNothingInAA(t *testing.T) {
	flagged := 0
	for seed := uint64(1); seed <= 10; seed++ {
		pts := series(40, 3, 30, func(int) float64 { return 1000 }, seed)
		if got := Find(pts, Options{Seed: seed}); len(got) > 0 {
			flagged++
			t.Logf("seed %d: %+v", seed, got)
		}
	}
	// At alpha 0.05, an A/A series is flagged about once in twenty: more than two of ten is a
	// test that does not hold its level.
	if flagged > 2 {
		t.Fatalf("%d of 10 A/A series flagged", flagged)
	}
}

func TestFindReproducible(t *testing.T) {
	pts := series(30, 2, 50, func(i int) float64 { return 1000 + float64(i/15)*60 }, 9)
	a, b := Find(pts, Options{Seed: 42}), Find(pts, Options{Seed: 42})
	if len(a) != len(b) {
		t.Fatalf("two runs differ: %+v, %+v", a, b)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("two runs differ: %+v, %+v", a, b)
		}
	}
}

func TestFindTooShort(t *testing.T) {
	pts := series(5, 3, 1, func(i int) float64 { return float64(i * 100) }, 1)
	if got := Find(pts, Options{MinPoints: 3}); len(got) != 0 {
		t.Fatalf("5 points with at least 3 a side: %+v, want none", got)
	}
}

func TestRelativeChange(t *testing.T) {
	before := []float64{100, 102, 98, 101, 99, 100}
	after := []float64{115, 116, 114, 115, 117, 113}
	c, ci, ok := RelativeChange(before, after, 1)
	if !ok || c < 0.14 || c > 0.16 {
		t.Fatalf("change %v ok %v, want about +0.15", c, ok)
	}
	if !(ci[0] <= c && c <= ci[1]) || ci[0] < 0.10 || ci[1] > 0.20 {
		t.Fatalf("interval %v around %v", ci, c)
	}
	if _, _, ok := RelativeChange([]float64{0, 0}, after, 1); ok {
		t.Fatal("a change from 0 has no relative size")
	}
}
