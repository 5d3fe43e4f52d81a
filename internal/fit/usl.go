// Package fit fits models to what a result measured, so that a report can say what the
// measurements imply beyond the points taken: how far throughput will scale before it is
// measured (the Universal Scalability Law, usl.go). It fits and explains; it does not measure,
// and it never invents a model where the points cannot support one: a fit it cannot make comes
// back with the reason.
package fit

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Point is one measurement of a sweep: throughput X (requests per second) at size N (workers,
// replicas, shards).
type Point struct {
	N float64
	X float64
}

// USL is Gunther's Universal Scalability Law fitted to a sweep:
//
//	X(N) = λN / (1 + σ(N−1) + κN(N−1))
//
// λ is the throughput of one unit (N = 1) free of contention, σ the share of the work that
// serialises (contention: throughput levels off at λ/σ), and κ the cost of keeping units
// coherent with one another (crosstalk: past a peak, adding units lowers throughput).
type USL struct {
	Lambda, Sigma, Kappa float64
	// R2 is the coefficient of determination of the fit on the throughputs measured.
	R2 float64
}

// X is the throughput the model predicts at size n.
func (m USL) X(n float64) float64 {
	return m.Lambda * n / (1 + m.Sigma*(n-1) + m.Kappa*n*(n-1))
}

// Peak is where the model's throughput is highest: N* = √((1−σ)/κ) and X(N*). Without
// crosstalk (κ = 0) or with contention at its limit (σ ≥ 1) there is no peak: throughput only
// levels off, towards λ/σ, and ok is false.
func (m USL) Peak() (n, x float64, ok bool) {
	if m.Kappa <= 0 || m.Sigma >= 1 {
		return math.Inf(1), m.Ceiling(), false
	}
	n = math.Sqrt((1 - m.Sigma) / m.Kappa)
	return n, m.X(n), true
}

// Ceiling is the throughput the model approaches without crosstalk, λ/σ; +Inf for a model with
// neither contention nor crosstalk (linear scaling).
func (m USL) Ceiling() float64 {
	if m.Sigma <= 0 {
		return math.Inf(1)
	}
	return m.Lambda / m.Sigma
}

// MinUSLPoints is the fewest distinct sizes a USL fit accepts: three coefficients need three
// points to be determined at all.
const MinUSLPoints = 3

// NotFitted says why a sweep yields no model; its message is the reason a report shows.
type NotFitted struct{ Reason string }

func (e *NotFitted) Error() string { return "not fitted: " + e.Reason }

// FitUSL fits the USL to points by nonlinear least squares on the throughputs (Levenberg-
// Marquardt, with σ and κ kept at or above 0 and λ above 0), started from the linear least
// squares fit of N/X, which the model makes a quadratic in N. Sizes measured more than once
// are fitted as they are (each point weighs the same).
//
// It refuses, with a *NotFitted naming the reason, a sweep that cannot determine the model:
// fewer than MinUSLPoints distinct sizes, a size or throughput that is not a positive finite
// number, or throughputs that do not vary (a flat sweep says nothing of how it scales).
func FitUSL(points []Point) (USL, error) {
	if err := checkPoints(points); err != nil {
		return USL{}, err
	}
	start := linearStart(points)
	m := snapToBounds(points, levenbergMarquardt(points, start))
	m.R2 = rSquared(points, m)
	if math.IsNaN(m.R2) || math.IsNaN(m.Lambda) || math.IsNaN(m.Sigma) || math.IsNaN(m.Kappa) {
		return USL{}, &NotFitted{"the fit did not converge"}
	}
	return m, nil
}

func checkPoints(points []Point) error {
	var sizes []float64
	for i, p := range points {
		if !(p.N > 0) || math.IsInf(p.N, 0) {
			return &NotFitted{fmt.Sprintf("point %d has size %g; sizes must be positive", i+1, p.N)}
		}
		if !(p.X > 0) || math.IsInf(p.X, 0) {
			return &NotFitted{fmt.Sprintf("point %d (N=%g) has throughput %g; throughputs must be positive", i+1, p.N, p.X)}
		}
		if !slices.Contains(sizes, p.N) {
			sizes = append(sizes, p.N)
		}
	}
	if len(sizes) < MinUSLPoints {
		return &NotFitted{fmt.Sprintf("%d distinct sizes; the model's three coefficients need at least %d", len(sizes), MinUSLPoints)}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range points {
		lo, hi = min(lo, p.X), max(hi, p.X)
	}
	if hi-lo <= 1e-9*hi {
		return &NotFitted{fmt.Sprintf("throughput is flat (%g at every size): it says nothing of how it scales", hi)}
	}
	return nil
}

// linearStart is the least squares fit of N/X = a + b(N−1) + cN(N−1), the model rearranged
// (a = 1/λ, b = σ/λ, c = κ/λ), clamped into the model's domain: a good start for the fit
// proper, which weighs the throughputs themselves.
func linearStart(points []Point) USL {
	var ata [3][3]float64
	var atb [3]float64
	for _, p := range points {
		row := [3]float64{1, p.N - 1, p.N * (p.N - 1)}
		y := p.N / p.X
		for i := range 3 {
			for j := range 3 {
				ata[i][j] += row[i] * row[j]
			}
			atb[i] += row[i] * y
		}
	}
	sol, ok := solve3(ata, atb)
	m := USL{}
	if ok && sol[0] > 0 {
		m = USL{Lambda: 1 / sol[0], Sigma: sol[1] / sol[0], Kappa: sol[2] / sol[0]}
	}
	if !(m.Lambda > 0) {
		// The smallest size's throughput per unit, scaling assumed linear.
		first := points[0]
		for _, p := range points {
			if p.N < first.N {
				first = p
			}
		}
		m.Lambda = first.X / first.N
	}
	m.Sigma = clamp(m.Sigma, 0, 1)
	m.Kappa = max(m.Kappa, 0)
	return m
}

// levenbergMarquardt minimises the squared residuals of the throughputs over (λ, σ, κ), with
// the bounds held by projection after each step. Bounded in iterations: it returns the best
// model found.
func levenbergMarquardt(points []Point, m USL) USL {
	params := [3]float64{m.Lambda, m.Sigma, m.Kappa}
	cost := sse(points, params)
	damping := 1e-3
	for iter := 0; iter < 500; iter++ {
		var jtj [3][3]float64
		var jtr [3]float64
		for _, p := range points {
			r, grad := residual(p, params)
			for i := range 3 {
				for j := range 3 {
					jtj[i][j] += grad[i] * grad[j]
				}
				jtr[i] += grad[i] * r
			}
		}
		improved := false
		for try := 0; try < 30; try++ {
			a := jtj
			for i := range 3 {
				a[i][i] += damping * max(jtj[i][i], 1e-12)
			}
			step, ok := solve3(a, [3]float64{-jtr[0], -jtr[1], -jtr[2]})
			if !ok {
				damping *= 10
				continue
			}
			next := [3]float64{params[0] + step[0], params[1] + step[1], params[2] + step[2]}
			next[0] = max(next[0], 1e-12)
			next[1] = clamp(next[1], 0, 1)
			next[2] = max(next[2], 0)
			if c := sse(points, next); c < cost {
				gain := cost - c
				params, cost = next, c
				damping = max(damping/10, 1e-12)
				improved = true
				if gain <= 1e-15*max(cost, 1e-300) {
					return USL{Lambda: params[0], Sigma: params[1], Kappa: params[2]}
				}
				break
			}
			damping *= 10
		}
		if !improved {
			break
		}
	}
	return USL{Lambda: params[0], Sigma: params[1], Kappa: params[2]}
}

// snapToBounds sets σ or κ to 0 where the fit is no worse without it: an iterative fit
// approaches a bound without reaching it, and a κ of 1e-9 would put a peak at tens of
// thousands of units that nothing measured supports.
func snapToBounds(points []Point, m USL) USL {
	params := [3]float64{m.Lambda, m.Sigma, m.Kappa}
	cost := sse(points, params)
	var scale float64
	for _, p := range points {
		scale += p.X * p.X
	}
	for _, i := range []int{2, 1} {
		if params[i] == 0 {
			continue
		}
		try := params
		try[i] = 0
		if c := sse(points, try); c <= cost*(1+1e-6)+1e-18*scale {
			params, cost = try, c
		}
	}
	return USL{Lambda: params[0], Sigma: params[1], Kappa: params[2]}
}

// residual is the model's throughput at p less the measured one, and its gradient in
// (λ, σ, κ).
func residual(p Point, params [3]float64) (float64, [3]float64) {
	lambda, sigma, kappa := params[0], params[1], params[2]
	d := 1 + sigma*(p.N-1) + kappa*p.N*(p.N-1)
	x := lambda * p.N / d
	return x - p.X, [3]float64{p.N / d, -x * (p.N - 1) / d, -x * p.N * (p.N - 1) / d}
}

func sse(points []Point, params [3]float64) float64 {
	var s float64
	for _, p := range points {
		r, _ := residual(p, params)
		s += r * r
	}
	return s
}

// rSquared is 1 − SSres/SStot over the throughputs.
func rSquared(points []Point, m USL) float64 {
	var mean float64
	for _, p := range points {
		mean += p.X
	}
	mean /= float64(len(points))
	var res, tot float64
	for _, p := range points {
		res += (p.X - m.X(p.N)) * (p.X - m.X(p.N))
		tot += (p.X - mean) * (p.X - mean)
	}
	if tot == 0 {
		return math.NaN()
	}
	return 1 - res/tot
}

// solve3 solves a·x = b by Gaussian elimination with partial pivoting; ok is false when a is
// singular.
func solve3(a [3][3]float64, b [3]float64) ([3]float64, bool) {
	scale := 0.0
	for i := range 3 {
		for j := range 3 {
			scale = max(scale, math.Abs(a[i][j]))
		}
	}
	if scale == 0 {
		return b, false
	}
	for col := range 3 {
		pivot := col
		for r := col + 1; r < 3; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[pivot][col]) {
				pivot = r
			}
		}
		if math.Abs(a[pivot][col]) <= 1e-14*scale {
			return b, false
		}
		a[col], a[pivot] = a[pivot], a[col]
		b[col], b[pivot] = b[pivot], b[col]
		for r := col + 1; r < 3; r++ {
			f := a[r][col] / a[col][col]
			for c := col; c < 3; c++ {
				a[r][c] -= f * a[col][c]
			}
			b[r] -= f * b[col]
		}
	}
	var x [3]float64
	for r := 2; r >= 0; r-- {
		s := b[r]
		for c := r + 1; c < 3; c++ {
			s -= a[r][c] * x[c]
		}
		x[r] = s / a[r][r]
	}
	return x, true
}

func clamp(v, lo, hi float64) float64 { return max(lo, min(hi, v)) }

// IsNotFitted reports whether err says a sweep could not be fitted, and why.
func IsNotFitted(err error) (reason string, ok bool) {
	var nf *NotFitted
	if errors.As(err, &nf) {
		return nf.Reason, true
	}
	return "", false
}
