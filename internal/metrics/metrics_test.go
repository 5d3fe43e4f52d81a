package metrics

import (
	"math"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/verify"
)

func TestRecorderKeepsErrorsApart(t *testing.T) {
	a, b := NewRecorder(), NewRecorder()
	for i := range 100 {
		a.Record(verify.OK, 0, time.Duration(i+1)*time.Microsecond)
	}
	a.Record(verify.HTTPError, 400, time.Millisecond)
	a.Record(verify.HTTPError, 503, time.Millisecond)
	b.Record(verify.HTTPError, 400, 2*time.Millisecond)
	b.Record(verify.WrongDecision, 0, 3*time.Millisecond)
	b.Record(verify.OK, 0, 2*time.Minute) // beyond the histogram: clamped, not lost
	a.Merge(b)

	if got := a.Requests(); got != 105 {
		t.Errorf("requests %d, want 105", got)
	}
	if got := a.ErrorCount(); got != 4 {
		t.Errorf("errors %d, want 4", got)
	}
	if a.OK.TotalCount() != 101 || a.Errors.TotalCount() != 4 {
		t.Errorf("histograms hold %d ok and %d errors, want 101 and 4", a.OK.TotalCount(), a.Errors.TotalCount())
	}
	want := map[string]uint64{"http_400": 2, "http_503": 1, "wrong_decision": 1}
	got := a.ErrorClasses()
	if len(got) != len(want) {
		t.Errorf("classes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("class %s = %d, want %d", k, got[k], v)
		}
	}
	if longest := a.OK.Max(); longest < int64(59*time.Second) {
		t.Errorf("a 2-minute answer was recorded as %s; want it clamped to the 60 s ceiling", time.Duration(longest))
	}
	ok, errs := a.Live()
	if ok != 101 || errs != 4 {
		t.Errorf("live counters %d/%d, want 101/4", ok, errs)
	}
}

func TestMeanIsExact(t *testing.T) {
	r := NewRecorder()
	r.Record(verify.OK, 0, 1001*time.Nanosecond)
	r.Record(verify.OK, 0, 2002*time.Nanosecond)
	r.Record(verify.Timeout, 0, time.Second) // errors do not move the mean of ok latencies
	if got := r.MeanOKNanos(); got != 1501.5 {
		t.Errorf("mean %.1f ns, want 1501.5", got)
	}
}

func TestPercentiles(t *testing.T) {
	h := NewHistogram()
	for us := 1; us <= 10000; us++ {
		h.RecordValue(int64(us) * 1000)
	}
	p := PercentilesOf(h, 0)
	for _, tc := range []struct {
		name      string
		got, want float64
	}{{"p50", p.P50, 5000}, {"p90", p.P90, 9000}, {"p99", p.P99, 9900}, {"p99.99", p.P9999, 9999}, {"max", p.Max, 10000}, {"mean", p.Mean, 5000.5}} {
		if math.Abs(tc.got-tc.want)/tc.want > 0.001 {
			t.Errorf("%s = %.1f µs, want %.1f within 0.1 %%", tc.name, tc.got, tc.want)
		}
	}
	if (PercentilesOf(NewHistogram(), 0) != Percentiles{}) {
		t.Error("an empty histogram must give zero percentiles")
	}
}

func TestSpread(t *testing.T) {
	if s := SpreadOf(nil); s.N != 0 || s.Mean != 0 {
		t.Errorf("empty: %+v", s)
	}
	if s := SpreadOf([]float64{42}); s.N != 1 || s.Mean != 42 || s.SD != 0 || s.CI95 != [2]float64{42, 42} {
		t.Errorf("one sample: %+v", s)
	}
	// mean 10, sample sd sqrt(2.5), t(4) = 2.776: half-width 2.776 * 1.5811 / sqrt(5) = 1.963
	s := SpreadOf([]float64{8, 9, 10, 11, 12})
	if s.Mean != 10 || math.Abs(s.SD-math.Sqrt(2.5)) > 1e-9 || math.Abs(s.CI95[0]-8.037) > 0.001 || math.Abs(s.CI95[1]-11.963) > 0.001 {
		t.Errorf("five samples: %+v", s)
	}
}
