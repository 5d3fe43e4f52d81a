package changepoint

import (
	"math/rand/v2"
	"slices"
)

// Resamples is how many bootstrap resamples RelativeChange draws.
const Resamples = 2000

// RelativeChange is how much after's mean differs from before's, as a fraction of before's
// (+0.15 is 15 % more), with a 95 % percentile-bootstrap interval: each side resampled with
// replacement on its own, Resamples times, from a seeded generator so the interval is the same
// on every run. ok is false when before's mean is 0, where no relative change exists.
func RelativeChange(before, after []float64, seed uint64) (change float64, ci [2]float64, ok bool) {
	mb, ma := mean(before), mean(after)
	if mb == 0 || len(before) == 0 || len(after) == 0 {
		return 0, ci, false
	}
	rng := rand.New(rand.NewPCG(seed, 0x626f6f7473747261))
	draws := make([]float64, 0, Resamples)
	for range Resamples {
		b, a := resampledMean(before, rng), resampledMean(after, rng)
		if b != 0 {
			draws = append(draws, a/b-1)
		}
	}
	slices.Sort(draws)
	if len(draws) == 0 {
		return ma/mb - 1, ci, false
	}
	ci = [2]float64{draws[int(0.025*float64(len(draws)-1))], draws[int(0.975*float64(len(draws)-1))]}
	return ma/mb - 1, ci, true
}

func resampledMean(xs []float64, rng *rand.Rand) float64 {
	var sum float64
	for range xs {
		sum += xs[rng.IntN(len(xs))]
	}
	return sum / float64(len(xs))
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// Mean is the mean of xs, 0 for none.
func Mean(xs []float64) float64 { return mean(xs) }
