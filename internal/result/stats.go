package result

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Percentiles in microseconds, as the result document names them.
type Percentiles struct {
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	P9999 float64 `json:"p9999"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
}

// PercentilesOf reads the percentiles of a nanosecond histogram, in microseconds. The mean is
// the histogram's unless exactMeanNanos is positive.
func PercentilesOf(h *hdrhistogram.Histogram, exactMeanNanos float64) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	mean := h.Mean()
	if exactMeanNanos > 0 {
		mean = exactMeanNanos
	}
	return Percentiles{
		P50:   us(h.ValueAtQuantile(50)),
		P75:   us(h.ValueAtQuantile(75)),
		P90:   us(h.ValueAtQuantile(90)),
		P95:   us(h.ValueAtQuantile(95)),
		P99:   us(h.ValueAtQuantile(99)),
		P999:  us(h.ValueAtQuantile(99.9)),
		P9999: us(h.ValueAtQuantile(99.99)),
		Max:   us(h.Max()),
		Mean:  mean / 1e3,
	}
}

// Beyond counts the samples that lie beyond each reported percentile (in a higher bucket of the
// histogram than the percentile's value), and the samples in all. A percentile with few samples
// beyond it is close to the slowest few responses, not a stable figure: p99.9 of 400 samples
// is the maximum, and Beyond says so with a zero.
type Beyond struct {
	Samples int64 `json:"samples"`
	P50     int64 `json:"p50"`
	P75     int64 `json:"p75"`
	P90     int64 `json:"p90"`
	P95     int64 `json:"p95"`
	P99     int64 `json:"p99"`
	P999    int64 `json:"p999"`
	P9999   int64 `json:"p9999"`
}

// FewBeyond is how few samples beyond a percentile make it a thin tail, marked in reports.
const FewBeyond = 10

// BeyondOf counts, for each percentile PercentilesOf reads, the samples of h above it.
func BeyondOf(h *hdrhistogram.Histogram) Beyond {
	b := Beyond{Samples: h.TotalCount()}
	if b.Samples == 0 {
		return b
	}
	counts := []*int64{&b.P50, &b.P75, &b.P90, &b.P95, &b.P99, &b.P999, &b.P9999}
	values := make([]int64, len(counts))
	for i, q := range []float64{50, 75, 90, 95, 99, 99.9, 99.99} {
		values[i] = h.ValueAtQuantile(q)
	}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		for i, v := range values {
			if bar.From > v {
				*counts[i] += bar.Count
			}
		}
	}
	return b
}

// Spread summarises one figure across repetitions.
type Spread struct {
	Mean float64    `json:"mean"`
	SD   float64    `json:"sd"`
	CI95 [2]float64 `json:"ci95"`
	N    int        `json:"n"`
}

// SpreadOf returns the mean, sample standard deviation and 95 % confidence interval of the mean
// (Student's t). With one sample the interval is the point itself and sd is 0: one repetition
// says nothing about spread, and the report shows n so nobody mistakes it for certainty.
func SpreadOf(xs []float64) Spread {
	n := len(xs)
	if n == 0 {
		return Spread{}
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	if n == 1 {
		return Spread{Mean: mean, CI95: [2]float64{mean, mean}, N: 1}
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	half := tQuantile975(n-1) * sd / math.Sqrt(float64(n))
	return Spread{Mean: mean, SD: sd, CI95: [2]float64{mean - half, mean + half}, N: n}
}

// TQuantile975 is the 97.5th percentile of Student's t with df degrees of freedom, for
// two-sided 95 % intervals; NaN below one degree of freedom.
func TQuantile975(df int) float64 { return tQuantile975(df) }

// tQuantile975 is the 97.5th percentile of Student's t with df degrees of freedom.
func tQuantile975(df int) float64 {
	table := [...]float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	switch {
	case df <= 0:
		return math.NaN()
	case df < len(table):
		return table[df]
	case df < 60:
		return 2.01
	case df < 120:
		return 1.99
	}
	return 1.96
}
