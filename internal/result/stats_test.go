package result

import (
	"fmt"
	"math"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// newHistogram is an empty latency histogram as the recorders make them: 1 ns to 60 s, three
// significant figures.
func newHistogram() *hdrhistogram.Histogram { return hdrhistogram.New(1, 60e9, 3) }

// TestBeyondOf counts exactly on a hand-built histogram: 400 samples, 1..400 µs, one each. Above
// p99 (396 µs) lie 4, above p99.9 and p99.99 (the maximum) none.
func TestBeyondOf(t *testing.T) {
	h := newHistogram()
	for us := int64(1); us <= 400; us++ {
		if err := h.RecordValue(us * 1000); err != nil {
			t.Fatal(err)
		}
	}
	want := Beyond{Samples: 400, P50: 200, P75: 100, P90: 40, P95: 20, P99: 4, P999: 0, P9999: 0}
	if got := BeyondOf(h); got != want {
		t.Errorf("BeyondOf = %+v\nwant      %+v", got, want)
	}
	// Ties are not beyond: 1000 samples of one value leave none above any percentile.
	same := newHistogram()
	same.RecordValues(5000, 1000) //nolint:errcheck // in range
	if got := BeyondOf(same); got != (Beyond{Samples: 1000}) {
		t.Errorf("one value: %+v, want none beyond", got)
	}
	if got := BeyondOf(newHistogram()); got != (Beyond{}) {
		t.Errorf("empty: %+v", got)
	}
}

func TestPercentilesOfUniform(t *testing.T) {
	h := newHistogram()
	for us := int64(1); us <= 10000; us++ {
		if err := h.RecordValue(us * 1000); err != nil {
			t.Fatal(err)
		}
	}
	p := PercentilesOf(h, 0)
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"p50", p.P50, 5000},
		{"p75", p.P75, 7500},
		{"p90", p.P90, 9000},
		{"p95", p.P95, 9500},
		{"p99", p.P99, 9900},
		{"p99.9", p.P999, 9990},
		{"p99.99", p.P9999, 9999},
		{"max", p.Max, 10000},
		{"mean", p.Mean, 5000.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// HDR with 3 significant figures: within 0.1 %.
			if math.Abs(tc.got-tc.want)/tc.want > 0.001 {
				t.Errorf("%s = %.3f µs, want %.1f within 0.1 %%", tc.name, tc.got, tc.want)
			}
		})
	}
	if exact := PercentilesOf(h, 5000.5e3); exact.Mean != 5000.5 {
		t.Errorf("with an exact mean of 5000500 ns, Mean = %v µs, want 5000.5", exact.Mean)
	}
	if p.P50 > p.P75 || p.P75 > p.P90 || p.P90 > p.P95 || p.P95 > p.P99 || p.P99 > p.P999 || p.P999 > p.P9999 || p.P9999 > p.Max {
		t.Errorf("percentiles out of order: %+v", p)
	}
}

func TestPercentilesOfSmallHistograms(t *testing.T) {
	one := newHistogram()
	one.RecordValue(1500) //nolint:errcheck // in range
	for _, tc := range []struct {
		name string
		h    *hdrhistogram.Histogram
		mean float64
		want Percentiles
	}{
		{"empty", newHistogram(), 0, Percentiles{}},
		{"empty with a mean given", newHistogram(), 1234, Percentiles{}},
		// 1500 ns is exact in an HDR histogram of 3 significant figures (below 2048).
		{"one value", one, 0, Percentiles{P50: 1.5, P75: 1.5, P90: 1.5, P95: 1.5, P99: 1.5, P999: 1.5, P9999: 1.5, Max: 1.5, Mean: 1.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PercentilesOf(tc.h, tc.mean); got != tc.want {
				t.Errorf("PercentilesOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSpreadOfTable(t *testing.T) {
	const eps = 1e-6
	for _, tc := range []struct {
		name string
		xs   []float64
		want Spread
	}{
		{"no samples", nil, Spread{}},
		{"empty slice", []float64{}, Spread{}},
		{"one sample", []float64{42}, Spread{Mean: 42, CI95: [2]float64{42, 42}, N: 1}},
		// mean 2; sd = sqrt(((1-2)² + (3-2)²) / 1) = sqrt(2); t(1) = 12.706;
		// half-width 12.706 * sqrt(2) / sqrt(2) = 12.706.
		{"two samples", []float64{1, 3}, Spread{Mean: 2, SD: math.Sqrt2, CI95: [2]float64{2 - 12.706, 2 + 12.706}, N: 2}},
		// mean 100; deviations 0, 2, -2, 5, -5: sum of squares 58; sd = sqrt(58/4) = 3.807887;
		// t(4) = 2.776; half-width 2.776 * 3.807887 / sqrt(5) = 4.727358.
		{"five samples", []float64{100, 102, 98, 105, 95},
			Spread{Mean: 100, SD: 3.8078865529319543, CI95: [2]float64{95.272642, 104.727358}, N: 5}},
		// mean 10; sd sqrt(10/4) = 1.581139; half-width 2.776 * 1.581139 / sqrt(5) = 2.776 * 0.707107 = 1.962928.
		{"five samples around ten", []float64{8, 9, 10, 11, 12},
			Spread{Mean: 10, SD: 1.5811388300841898, CI95: [2]float64{8.037072, 11.962928}, N: 5}},
		{"identical samples", []float64{7, 7, 7}, Spread{Mean: 7, CI95: [2]float64{7, 7}, N: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SpreadOf(tc.xs)
			if got.N != tc.want.N {
				t.Errorf("N = %d, want %d", got.N, tc.want.N)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"mean", got.Mean, tc.want.Mean},
				{"sd", got.SD, tc.want.SD},
				{"ci95 low", got.CI95[0], tc.want.CI95[0]},
				{"ci95 high", got.CI95[1], tc.want.CI95[1]},
			} {
				if math.Abs(f.got-f.want) > eps {
					t.Errorf("%s = %.7f, want %.7f", f.name, f.got, f.want)
				}
			}
		})
	}
}

// TestSpreadOfUsesStudentT checks the t quantile used for a few sample sizes: the half-width
// of the interval of samples {0, 2} repeated is t(n-1) * sd / sqrt(n).
func TestSpreadOfUsesStudentT(t *testing.T) {
	for _, tc := range []struct {
		n     int
		tQuan float64
	}{{2, 12.706}, {3, 4.303}, {5, 2.776}, {10, 2.262}, {31, 2.042}, {200, 1.96}} {
		t.Run(fmt.Sprint("n=", tc.n), func(t *testing.T) {
			xs := make([]float64, tc.n)
			for i := range xs {
				xs[i] = float64(2 * (i % 2))
			}
			s := SpreadOf(xs)
			half := (s.CI95[1] - s.CI95[0]) / 2
			want := tc.tQuan * s.SD / math.Sqrt(float64(tc.n))
			if math.Abs(half-want) > 1e-9 {
				t.Errorf("half-width %.6f, want %.6f (t = %.3f)", half, want, tc.tQuan)
			}
		})
	}
}
