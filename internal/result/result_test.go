package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/verify"
)

func recorder(okMicros []int, errors map[verify.Class]int) *metrics.Recorder {
	r := metrics.NewRecorder()
	for _, us := range okMicros {
		r.Record(verify.OK, 0, time.Duration(us)*time.Microsecond)
	}
	for c, n := range errors {
		for range n {
			r.Record(c, 400, time.Millisecond)
		}
	}
	return r
}

func TestRepetitionAndSummary(t *testing.T) {
	r1 := recorder([]int{100, 200, 300}, map[verify.Class]int{verify.HTTPError: 2})
	r2 := recorder([]int{400}, map[verify.Class]int{verify.WrongDecision: 1})
	rep1, err := NewRepetition(r1, 2*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	rep2, _ := NewRepetition(r2, time.Second, true)
	if rep1.Requests != 5 || rep1.OK != 3 || rep1.Errors != 2 || rep1.ThroughputRPS != 1.5 || rep1.ErrorClasses["http_400"] != 2 {
		t.Errorf("repetition 1: %+v", rep1)
	}
	if !rep2.Partial || rep2.ThroughputRPS != 1 {
		t.Errorf("repetition 2: %+v", rep2)
	}
	merged := metrics.NewRecorder()
	merged.Merge(r1)
	merged.Merge(r2)
	s := Summarise([]Repetition{rep1, rep2}, merged)
	if s.Requests != 7 || s.OK != 4 || s.WrongDecision != 1 || s.Errors != 3 {
		t.Errorf("summary counts: %+v", s)
	}
	if s.ThroughputRPS.N != 2 || s.ThroughputRPS.Mean != 1.25 {
		t.Errorf("throughput: %+v", s.ThroughputRPS)
	}
	if s.LatencyUS.Mean != 250 || s.ErrorLatencyUS == nil {
		t.Errorf("latency: %+v, errors %+v", s.LatencyUS, s.ErrorLatencyUS)
	}
}

// Histograms written to the result merge exactly: decoding two repetitions and merging them
// gives what recording everything into one histogram gives.
func TestHistogramsMergeExactly(t *testing.T) {
	a, b, all := metrics.NewHistogram(), metrics.NewHistogram(), metrics.NewHistogram()
	for i := int64(1); i <= 5000; i++ {
		a.RecordValue(i * 997)
		all.RecordValue(i * 997)
		b.RecordValue(i * 31)
		all.RecordValue(i * 31)
	}
	ea, err := EncodeHistogram(a)
	if err != nil {
		t.Fatal(err)
	}
	eb, _ := EncodeHistogram(b)
	da, err := DecodeHistogram(ea)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := DecodeHistogram(eb)
	da.Merge(db)
	if da.TotalCount() != all.TotalCount() {
		t.Fatalf("count %d, want %d", da.TotalCount(), all.TotalCount())
	}
	for _, q := range []float64{50, 90, 99, 99.9, 99.99, 100} {
		if got, want := da.ValueAtQuantile(q), all.ValueAtQuantile(q); got != want {
			t.Errorf("p%v = %d, want %d", q, got, want)
		}
	}
	if _, err := DecodeHistogram("not base64!"); err == nil {
		t.Error("decoding garbage must fail")
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nested", "deeper", "r.json")
	doc := &Document{Schema: Schema, Created: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), Interrupted: true,
		StopReason: "interrupted by interrupt", Env: CaptureEnv("1.22.2"),
		Runs: []Run{{Target: "opa/server", Workload: "rbac", Partial: true, Load: Load{Model: "closed", Workers: 8}}}}
	if err := Write(path, doc); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Interrupted || got.Runs[0].Target != "opa/server" || !got.Runs[0].Partial || got.Env.Cores == 0 {
		t.Errorf("read back %+v", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the result (no temporary file left)", len(entries))
	}
}

func TestReadRejectsOtherSchemas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(path, []byte(`{"schema": "someone-else/v9", "runs": []}`), 0o644)
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), `schema "someone-else/v9"`) {
		t.Errorf("err = %v", err)
	}
}
