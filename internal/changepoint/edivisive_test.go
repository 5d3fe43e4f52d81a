package changepoint

import (
	"math"
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

// naiveStatistic is Q̂ at a split, straight from its definition: the oracle bestSplit's
// incremental sums must agree with.
func naiveStatistic(x []float64, split int) float64 {
	a, b := x[:split], x[split:]
	var cross, wa, wb float64
	for _, u := range a {
		for _, v := range b {
			cross += math.Abs(u - v)
		}
	}
	for i := range a {
		for j := i + 1; j < len(a); j++ {
			wa += math.Abs(a[i] - a[j])
		}
	}
	for i := range b {
		for j := i + 1; j < len(b); j++ {
			wb += math.Abs(b[i] - b[j])
		}
	}
	m, n := float64(len(a)), float64(len(b))
	e := 2 * cross / (m * n)
	if m > 1 {
		e -= wa / (m * (m - 1) / 2)
	}
	if n > 1 {
		e -= wb / (n * (n - 1) / 2)
	}
	return m * n / (m + n) * e
}

func TestBestSplitMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for trial := range 20 {
		points := series(12, 1+trial%3, 10, func(i int) float64 { return float64(i%5) * 7 }, uint64(trial))
		// ties too: rounded values
		for _, p := range points {
			for j := range p {
				p[j] = math.Round(p[j] + rng.NormFloat64())
			}
		}
		var values []float64
		starts := []int{0}
		for _, p := range points {
			values = append(values, p...)
			starts = append(starts, len(values))
		}
		at, stat := bestSplit(values, starts, 2, 11, 2)
		best, bestAt := math.Inf(-1), -1
		for p := 4; p <= 9; p++ {
			if q := naiveStatistic(values[starts[2]:starts[11]], starts[p]-starts[2]); q > best {
				best, bestAt = q, p
			}
		}
		if at != bestAt || math.Abs(stat-best) > 1e-9*math.Max(1, math.Abs(best)) {
			t.Fatalf("trial %d: bestSplit %d (%.6f), definition %d (%.6f)", trial, at, stat, bestAt, best)
		}
	}
}

// BenchmarkFind1000Commits: a series of 1,000 commits of 3 repetitions with one step, the size
// the history's targets name.
func BenchmarkFind1000Commits(b *testing.B) {
	pts := series(1000, 3, 30, func(i int) float64 { return 1000 + float64(i/500)*150 }, 1)
	for b.Loop() {
		Find(pts, Options{Seed: 1})
	}
}
