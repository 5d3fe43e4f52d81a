// Package changepoint finds where a noisy series changes its distribution: E-divisive means
// (Matteson & James, "A Nonparametric Approach for Multiple Change Point Analysis of
// Multivariate Data", JASA 2014), as Daly et al. use it on performance series (ICPE 2020) and
// Hunter implements it. It knows nothing of benchmarks, commits or figures: it takes a sequence
// of observations grouped in points (a point is one commit's repetitions) and returns the points
// where a new segment begins. Package history applies it to series of results.
package changepoint

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// Options tune the search. The zero value is usable: every field has a default.
type Options struct {
	// MinPoints is the fewest points (commits) a segment may hold; 3 by default. A change needs
	// that many points on each side to be seen at all.
	MinPoints int
	// Alpha is the significance level a split must reach in the permutation test; 0.05 by
	// default.
	Alpha float64
	// Permutations bounds the permutation test; 199 by default (the smallest p-value is then
	// 1/200).
	Permutations int
	// Seed makes the permutations, and so every result, reproducible.
	Seed uint64
}

func (o Options) withDefaults() Options {
	if o.MinPoints <= 0 {
		o.MinPoints = 3
	}
	if o.Alpha <= 0 {
		o.Alpha = 0.05
	}
	if o.Permutations <= 0 {
		o.Permutations = 199
	}
	return o
}

// Split is a change found: the point where a new segment begins, the divergence statistic of the
// split, and its permutation p-value.
type Split struct {
	Point     int
	Statistic float64
	P         float64
}

// Find returns the points where a new segment begins in points (each point's observations, in
// order), in increasing order. It follows Matteson & James's procedure: in each segment found so
// far, the split that maximises the divergence statistic (alpha = 1, the second segment running
// to the end of the segment, as Hunter does); the largest of those is kept when its permutation
// test says p < Alpha, and the search goes on in the segments it leaves; it stops at the first
// split that is not significant. Splits fall only between points, never inside one: a commit's
// repetitions belong together.
func Find(points [][]float64, o Options) []Split {
	o = o.withDefaults()
	var values []float64
	starts := make([]int, len(points)+1) // starts[p] is the first observation of point p
	for i, p := range points {
		starts[i] = len(values)
		values = append(values, p...)
	}
	starts[len(points)] = len(values)
	rng := rand.New(rand.NewPCG(o.Seed, 0x6564697669736976))

	type segment struct{ from, to int } // points [from, to)
	segments := []segment{{0, len(points)}}
	var found []Split
	for {
		best, bestAt, bestStat := -1, 0, 0.0
		for i, s := range segments {
			at, stat := bestSplit(values, starts, s.from, s.to, o.MinPoints)
			if at >= 0 && stat > bestStat {
				best, bestAt, bestStat = i, at, stat
			}
		}
		if best < 0 {
			return found
		}
		s := segments[best]
		p := permutationP(values, starts, s.from, s.to, o, bestStat, rng)
		if p >= o.Alpha {
			return found
		}
		found = insertSorted(found, Split{Point: bestAt, Statistic: bestStat, P: p})
		segments = append(segments[:best], append([]segment{{s.from, bestAt}, {bestAt, s.to}}, segments[best+1:]...)...)
	}
}

func insertSorted(found []Split, s Split) []Split {
	i := 0
	for i < len(found) && found[i].Point < s.Point {
		i++
	}
	return append(found[:i], append([]Split{s}, found[i:]...)...)
}

// permutationP is the share of permutations of the segment's observations whose best split
// diverges at least as much as the one observed (with the observed one counted, so never 0).
func permutationP(values []float64, starts []int, from, to int, o Options, observed float64, rng *rand.Rand) float64 {
	lo, hi := starts[from], starts[to]
	shuffled := append([]float64(nil), values...)
	seg := shuffled[lo:hi]
	atLeast := 1
	for range o.Permutations {
		rng.Shuffle(len(seg), func(i, j int) { seg[i], seg[j] = seg[j], seg[i] })
		if _, stat := bestSplit(shuffled, starts, from, to, o.MinPoints); stat >= observed {
			atLeast++
		}
	}
	return float64(atLeast) / float64(o.Permutations+1)
}

// bestSplit returns the point in (from, to) that maximises the divergence statistic between the
// observations before it and after it within the segment, keeping minPoints points on each side;
// -1 when the segment is too short to split.
//
// The statistic is Matteson & James's Q̂ with alpha = 1:
//
//	Q̂(τ) = mn/(m+n) · [ 2/(mn) Σ|a−b| − 1/C(m,2) Σ|a−a'| − 1/C(n,2) Σ|b−b'| ]
//
// over the m observations a before τ and the n observations b from τ on. The sums move one
// observation at a time from after the split to before it; with alpha = 1 in one dimension,
// the distances from one observation to a set are read from sums over the set's values by
// rank (a Fenwick tree), so a segment of N observations costs O(N log N), not O(N²): a series
// of a thousand commits stays quick under a few hundred permutations.
func bestSplit(values []float64, starts []int, from, to, minPoints int) (int, float64) {
	if to-from < 2*minPoints {
		return -1, 0
	}
	lo, hi := starts[from], starts[to]
	x := values[lo:hi]
	n := len(x)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	rank := make([]int, n) // 1-based rank of each observation
	// allBelow[r] is the sum of the values of ranks 1..r; the pairwise total follows from it.
	allBelow := make([]float64, n+1)
	var total float64
	for r, i := range order {
		rank[i] = r + 1
		allBelow[r+1] = allBelow[r] + x[i]
		total += x[i] * float64(2*r-n+1)
	}
	before := newFenwick(n) // the observations before the split, by rank
	var withinA, cross, sumA float64
	countA := 0
	moved := 0
	bestAt, bestStat := -1, math.Inf(-1)
	for p := from + minPoints; p <= to-minPoints; p++ {
		split := starts[p] - lo
		for ; moved < split; moved++ {
			v, r := x[moved], rank[moved]
			// Distances from v to the observations before the split (A) ...
			cntLess, sumLess := before.prefix(r - 1)
			toA := v*float64(cntLess) - sumLess + (sumA - sumLess) - v*float64(countA-cntLess)
			// ... and to those after it (B), v itself excepted: every observation but A's.
			bLess := float64(r - 1 - cntLess)
			bSumLess := allBelow[r-1] - sumLess
			bMore := float64(n-r) - float64(countA-cntLess)
			bSumMore := allBelow[n] - allBelow[r] - (sumA - sumLess)
			toB := v*bLess - bSumLess + bSumMore - v*bMore
			withinA += toA
			cross += toB - toA
			before.add(r, v)
			sumA += v
			countA++
		}
		m, k := float64(split), float64(n-split)
		if m < 1 || k < 1 {
			continue
		}
		withinB := total - withinA - cross
		e := 2 * cross / (m * k)
		if m > 1 {
			e -= withinA / (m * (m - 1) / 2)
		}
		if k > 1 {
			e -= withinB / (k * (k - 1) / 2)
		}
		stat := m * k / (m + k) * e
		if stat > bestStat {
			bestAt, bestStat = p, stat
		}
	}
	if bestAt < 0 {
		return -1, 0
	}
	return bestAt, bestStat
}

// fenwick holds counts and sums of values by rank, for prefix queries in O(log n).
type fenwick struct {
	count []int
	sum   []float64
}

func newFenwick(n int) *fenwick { return &fenwick{count: make([]int, n+1), sum: make([]float64, n+1)} }

func (f *fenwick) add(rank int, v float64) {
	for i := rank; i < len(f.count); i += i & -i {
		f.count[i]++
		f.sum[i] += v
	}
}

// prefix is the count and sum of the values of ranks 1..rank.
func (f *fenwick) prefix(rank int) (int, float64) {
	var c int
	var s float64
	for i := rank; i > 0; i -= i & -i {
		c += f.count[i]
		s += f.sum[i]
	}
	return c, s
}
