package fit

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Synthetic sweeps drawn from known coefficients come back with those coefficients.
func TestFitUSLRecoversKnownCoefficients(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model USL
		sizes []float64
		noise float64 // relative, uniform ±
		tol   float64 // relative on λ; absolute on σ and κ scaled below
	}{
		{"contention and crosstalk", USL{Lambda: 1000, Sigma: 0.05, Kappa: 0.002}, []float64{1, 2, 4, 8, 16, 32}, 0, 1e-6},
		{"contention only", USL{Lambda: 250, Sigma: 0.2, Kappa: 0}, []float64{1, 2, 3, 4, 6, 8}, 0, 1e-6},
		{"linear", USL{Lambda: 600, Sigma: 0, Kappa: 0}, []float64{1, 2, 3, 4}, 0, 1e-6},
		{"three points exactly", USL{Lambda: 600, Sigma: 0.1, Kappa: 0.01}, []float64{1, 2, 4}, 0, 1e-6},
		{"the study's 3 and 4 nodes, with 1 and 2", USL{Lambda: 210, Sigma: 0.02, Kappa: 0.001}, []float64{1, 2, 3, 4}, 0, 1e-6},
		{"noisy, 0.5 %", USL{Lambda: 1000, Sigma: 0.03, Kappa: 0.0005}, []float64{1, 2, 4, 8, 12, 16, 24, 32, 48, 64}, 0.005, 0.02},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var pts []Point
			for _, n := range tc.sizes {
				x := tc.model.X(n) * (1 + tc.noise*(2*rng.Float64()-1))
				pts = append(pts, Point{N: n, X: x})
			}
			got, err := FitUSL(pts)
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(got.Lambda-tc.model.Lambda) / tc.model.Lambda; d > tc.tol {
				t.Errorf("λ = %g, want %g (off by %.2g)", got.Lambda, tc.model.Lambda, d)
			}
			// σ and κ on the scale of their effect at the largest size measured.
			nMax := tc.sizes[len(tc.sizes)-1]
			if d := math.Abs(got.Sigma-tc.model.Sigma) * (nMax - 1); d > tc.tol*(1+tc.model.Sigma*(nMax-1)) {
				t.Errorf("σ = %g, want %g", got.Sigma, tc.model.Sigma)
			}
			if d := math.Abs(got.Kappa-tc.model.Kappa) * nMax * (nMax - 1); d > tc.tol*(1+tc.model.Kappa*nMax*(nMax-1)) {
				t.Errorf("κ = %g, want %g", got.Kappa, tc.model.Kappa)
			}
			if tc.noise == 0 && got.R2 < 1-1e-9 {
				t.Errorf("R² = %g on exact points, want 1", got.R2)
			}
			if tc.noise > 0 && got.R2 < 0.99 {
				t.Errorf("R² = %g, want above 0.99", got.R2)
			}
		})
	}
}

// The peak is where the model's throughput is highest, N* = √((1−σ)/κ), and a model without
// crosstalk has none.
func TestUSLPeak(t *testing.T) {
	m := USL{Lambda: 1000, Sigma: 0.05, Kappa: 0.002}
	n, x, ok := m.Peak()
	if !ok {
		t.Fatal("no peak for κ > 0")
	}
	if want := math.Sqrt(0.95 / 0.002); math.Abs(n-want) > 1e-9 {
		t.Errorf("N* = %g, want %g", n, want)
	}
	for _, d := range []float64{-1, -0.1, 0.1, 1} {
		if m.X(n+d) > x {
			t.Errorf("X(%g) = %g above the peak's %g", n+d, m.X(n+d), x)
		}
	}
	flat := USL{Lambda: 100, Sigma: 0.25}
	if _, x, ok := flat.Peak(); ok || x != 400 {
		t.Errorf("κ = 0: peak ok=%v at %g; want none, levelling off at λ/σ = 400", ok, x)
	}
}

// Sweeps that cannot determine the model say why instead of returning coefficients.
func TestFitUSLRefusesDegenerateSweeps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		points []Point
		reason string
	}{
		{"none", nil, "0 distinct sizes"},
		{"two points", []Point{{1, 100}, {2, 190}}, "2 distinct sizes"},
		{"three points, two sizes", []Point{{1, 100}, {2, 190}, {2, 195}}, "2 distinct sizes"},
		{"flat", []Point{{1, 500}, {2, 500}, {4, 500}}, "flat"},
		{"zero throughput", []Point{{1, 100}, {2, 0}, {4, 300}}, "throughputs must be positive"},
		{"zero size", []Point{{0, 100}, {2, 150}, {4, 300}}, "sizes must be positive"},
		{"NaN", []Point{{1, 100}, {2, math.NaN()}, {4, 300}}, "throughputs must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := FitUSL(tc.points)
			reason, ok := IsNotFitted(err)
			if !ok {
				t.Fatalf("FitUSL = %+v, %v; want a not-fitted reason", m, err)
			}
			if !strings.Contains(reason, tc.reason) {
				t.Errorf("reason %q, want it to say %q", reason, tc.reason)
			}
		})
	}
}

// Fitted coefficients stay in the model's domain even when the points lean the other way
// (faster than linear: a warm cache at the larger size).
func TestFitUSLStaysInDomain(t *testing.T) {
	m, err := FitUSL([]Point{{1, 100}, {2, 230}, {3, 360}, {4, 470}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Sigma < 0 || m.Kappa < 0 || m.Lambda <= 0 || m.Sigma > 1 {
		t.Errorf("coefficients out of domain: %+v", m)
	}
}
