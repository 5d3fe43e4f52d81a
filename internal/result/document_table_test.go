package result

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/target"
	"github.com/authzbench/authzbench/internal/verify"
)

// within reports whether got is within the relative error of an HDR histogram of three
// significant figures of want.
func within(got, want float64) bool { return math.Abs(got-want) <= want*0.001 }

// sampleRecorder holds ok latencies 100, 200, 300, 400 µs, two http_400, one http_503 and one
// wrong decision.
func sampleRecorder() *metrics.Recorder {
	r := metrics.NewRecorder()
	for _, us := range []int{100, 200, 300, 400} {
		r.Record(verify.OK, 0, time.Duration(us)*time.Microsecond)
	}
	r.Record(verify.HTTPError, 400, time.Millisecond)
	r.Record(verify.HTTPError, 400, time.Millisecond)
	r.Record(verify.HTTPError, 503, 2*time.Millisecond)
	r.Record(verify.WrongDecision, 0, 150*time.Microsecond)
	return r
}

func TestNewRepetitionFields(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rec       *metrics.Recorder
		elapsed   time.Duration
		partial   bool
		want      Repetition // HDR fields are checked apart
		okHDR     int64
		errHDR    int64
		latencyUS metrics.Percentiles // checked within HDR precision, mean exactly
	}{
		{
			name: "ok and errors", rec: sampleRecorder(), elapsed: 2 * time.Second,
			want: Repetition{Requests: 8, OK: 4, Errors: 4, ElapsedS: 2, ThroughputRPS: 2,
				ErrorClasses: map[string]uint64{"http_400": 2, "http_503": 1, "wrong_decision": 1}},
			okHDR: 4, errHDR: 4,
			latencyUS: metrics.Percentiles{P50: 200, P75: 300, P90: 400, P95: 400, P99: 400, P999: 400, P9999: 400, Max: 400, Mean: 250},
		},
		{
			name: "partial", rec: sampleRecorder(), elapsed: 500 * time.Millisecond, partial: true,
			want: Repetition{Requests: 8, OK: 4, Errors: 4, ElapsedS: 0.5, ThroughputRPS: 8, Partial: true,
				ErrorClasses: map[string]uint64{"http_400": 2, "http_503": 1, "wrong_decision": 1}},
			okHDR: 4, errHDR: 4,
			latencyUS: metrics.Percentiles{P50: 200, P75: 300, P90: 400, P95: 400, P99: 400, P999: 400, P9999: 400, Max: 400, Mean: 250},
		},
		{
			// Nothing measured: no throughput rather than a division by zero.
			name: "zero elapsed", rec: metrics.NewRecorder(), elapsed: 0, partial: true,
			want: Repetition{ErrorClasses: map[string]uint64{}, Partial: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := NewRepetition(tc.rec, tc.elapsed, tc.partial)
			if err != nil {
				t.Fatal(err)
			}
			got := rep
			got.HDR, got.ErrorHDR, got.LatencyUS = "", "", metrics.Percentiles{}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("repetition\n got %+v\nwant %+v", got, tc.want)
			}
			checkPercentiles(t, "latency", rep.LatencyUS, tc.latencyUS)
			checkHDR(t, "hdr", rep.HDR, tc.okHDR)
			if tc.errHDR == 0 {
				if rep.ErrorHDR != "" {
					t.Errorf("error_hdr %q, want empty without errors", rep.ErrorHDR)
				}
			} else {
				checkHDR(t, "error_hdr", rep.ErrorHDR, tc.errHDR)
			}
		})
	}
}

func checkPercentiles(t *testing.T, what string, got, want metrics.Percentiles) {
	t.Helper()
	if got.Mean != want.Mean {
		t.Errorf("%s mean %v µs, want exactly %v", what, got.Mean, want.Mean)
	}
	for _, f := range []struct {
		name      string
		got, want float64
	}{{"p50", got.P50, want.P50}, {"p75", got.P75, want.P75}, {"p90", got.P90, want.P90}, {"p95", got.P95, want.P95},
		{"p99", got.P99, want.P99}, {"p999", got.P999, want.P999}, {"p9999", got.P9999, want.P9999}, {"max", got.Max, want.Max}} {
		if !within(f.got, f.want) {
			t.Errorf("%s %s = %v µs, want %v within 0.1 %%", what, f.name, f.got, f.want)
		}
	}
}

func checkHDR(t *testing.T, what, encoded string, count int64) {
	t.Helper()
	h, err := DecodeHistogram(encoded)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if h.TotalCount() != count {
		t.Errorf("%s holds %d values, want %d", what, h.TotalCount(), count)
	}
}

func TestSummariseFields(t *testing.T) {
	r1 := sampleRecorder() // 4 ok, 4 errors
	r2 := metrics.NewRecorder()
	for range 6 {
		r2.Record(verify.OK, 0, 700*time.Microsecond)
	}
	r2.Record(verify.Timeout, 0, 5*time.Second)
	r2.UnverifiedOK = 2
	rep1, err := NewRepetition(r1, 2*time.Second, false) // 2 ok/s
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := NewRepetition(r2, time.Second, false) // 6 ok/s
	if err != nil {
		t.Fatal(err)
	}
	// A repetition that measured nothing does not count towards the throughput spread.
	rep3, err := NewRepetition(metrics.NewRecorder(), 0, true)
	if err != nil {
		t.Fatal(err)
	}
	merged := metrics.NewRecorder()
	merged.Merge(r1)
	merged.Merge(r2)
	s := Summarise([]Repetition{rep1, rep2, rep3}, merged)

	if s.Requests != 15 || s.OK != 10 || s.WrongDecision != 1 || s.Errors != 5 || s.UnverifiedOK != 2 {
		t.Errorf("counts: requests %d ok %d wrong %d errors %d unverified ok %d, want 15 10 1 5 2",
			s.Requests, s.OK, s.WrongDecision, s.Errors, s.UnverifiedOK)
	}
	wantClasses := map[string]uint64{"http_400": 2, "http_503": 1, "wrong_decision": 1, "timeout": 1}
	if !reflect.DeepEqual(s.ErrorClasses, wantClasses) {
		t.Errorf("error classes %v, want %v", s.ErrorClasses, wantClasses)
	}
	// mean 4, sd sqrt(8), t(1) = 12.706: half-width 12.706 * sqrt(8) / sqrt(2) = 25.412
	wantRPS := metrics.Spread{Mean: 4, SD: math.Sqrt(8), CI95: [2]float64{4 - 25.412, 4 + 25.412}, N: 2}
	if s.ThroughputRPS.N != wantRPS.N || s.ThroughputRPS.Mean != wantRPS.Mean || math.Abs(s.ThroughputRPS.SD-wantRPS.SD) > 1e-9 ||
		math.Abs(s.ThroughputRPS.CI95[0]-wantRPS.CI95[0]) > 1e-9 || math.Abs(s.ThroughputRPS.CI95[1]-wantRPS.CI95[1]) > 1e-9 {
		t.Errorf("throughput %+v, want %+v", s.ThroughputRPS, wantRPS)
	}
	// ok latencies: 100, 200, 300, 400 and six of 700 µs; exact mean (1000 + 4200) / 10 = 520.
	checkPercentiles(t, "latency", s.LatencyUS, metrics.Percentiles{P50: 700, P75: 700, P90: 700, P95: 700, P99: 700,
		P999: 700, P9999: 700, Max: 700, Mean: 520})
	if s.ErrorLatencyUS == nil {
		t.Fatal("error latency missing although there were errors")
	}
	if !within(s.ErrorLatencyUS.Max, 5e6) {
		t.Errorf("error latency max %v µs, want 5 s", s.ErrorLatencyUS.Max)
	}
	if s.Open != nil || s.Server != nil || s.Connections != nil {
		t.Errorf("closed-loop run without connect or server timers has open %v, server %v, connections %v; want all nil",
			s.Open, s.Server, s.Connections)
	}

	if want := (metrics.Beyond{Samples: 10}); s.LatencyBeyond == nil || *s.LatencyBeyond != want {
		t.Errorf("latency beyond %+v, want %+v: six of ten at 700 µs leave none above p50", s.LatencyBeyond, want)
	}
	if s.LatencyCeilingS != 60 || s.Clamped != 0 || s.ErrorMessages != nil {
		t.Errorf("ceiling %v s, %d clamped, messages %q: want 60, 0, none", s.LatencyCeilingS, s.Clamped, s.ErrorMessages)
	}

	clean := metrics.NewRecorder()
	clean.Record(verify.OK, 0, time.Millisecond)
	if s := Summarise(nil, clean); s.ErrorLatencyUS != nil || s.ThroughputRPS != (metrics.Spread{}) {
		t.Errorf("no errors and no repetitions: error latency %v, throughput %+v; want nil and zero", s.ErrorLatencyUS, s.ThroughputRPS)
	}
	if s := Summarise(nil, metrics.NewRecorder()); s.LatencyBeyond != nil {
		t.Errorf("no ok responses, yet samples beyond: %+v", s.LatencyBeyond)
	}
}

// TestSummariseCeilingAndMessages: a repetition with a longer ceiling raises the summary's, what
// lay beyond it is counted in the repetition and the summary, and each class's first message
// reaches both.
func TestSummariseCeilingAndMessages(t *testing.T) {
	long := metrics.NewRecorderUpTo(2 * time.Minute)
	long.Record(verify.OK, 0, 90*time.Second)
	timedOut := verify.Outcome{Kind: verify.TimedOut, Err: errors.New("no answer within 2m0s")}
	long.Record(verify.Timeout, 0, 3*time.Minute)
	long.RecordMessage(verify.Timeout, 0, timedOut)
	repLong, err := NewRepetition(long, time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	short := sampleRecorder()
	repShort, err := NewRepetition(short, time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	merged := metrics.NewRecorder()
	merged.Merge(short)
	merged.Merge(long)
	s := Summarise([]Repetition{repShort, repLong}, merged)
	if s.LatencyCeilingS != 120 || s.Clamped != 1 || repLong.Clamped != 1 || repShort.Clamped != 0 {
		t.Errorf("ceiling %v s, clamped %d (repetitions %d, %d); want 120 s, 1 (0, 1)", s.LatencyCeilingS, s.Clamped, repShort.Clamped, repLong.Clamped)
	}
	want := map[string]string{"timeout": "no answer within 2m0s"}
	if !reflect.DeepEqual(s.ErrorMessages, want) || !reflect.DeepEqual(repLong.ErrorMessages, want) || repShort.ErrorMessages != nil {
		t.Errorf("messages: summary %q, repetitions %q %q; want %q in the summary and the long one", s.ErrorMessages,
			repShort.ErrorMessages, repLong.ErrorMessages, want)
	}
	// ok: 100, 200, 300, 400 µs and 90 s. p50 is 300 µs (two above), p75 400 µs (one), p90 and
	// beyond the 90 s itself (none).
	if wantB := (metrics.Beyond{Samples: 5, P50: 2, P75: 1}); s.LatencyBeyond == nil || *s.LatencyBeyond != wantB {
		t.Errorf("latency beyond %+v, want %+v", s.LatencyBeyond, wantB)
	}
	if !within(s.LatencyUS.Max, 90e6) {
		t.Errorf("max %v µs, want 90 s: the longer repetition's values survived the merge", s.LatencyUS.Max)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{`"latency_beyond":{"samples":5,"p50":2`, `"error_messages":{"timeout":`, `"latency_ceiling_s":120`, `"clamped":1`} {
		if !strings.Contains(string(b), name) {
			t.Errorf("summary JSON lacks %s: %s", name, b)
		}
	}
}

func histogramOf(values ...int64) *hdrhistogram.Histogram {
	h := metrics.NewHistogram()
	for _, v := range values {
		h.RecordValue(v) //nolint:errcheck // in range
	}
	return h
}

func uniform(from, to, step int64) []int64 {
	var out []int64
	for v := from; v <= to; v += step {
		out = append(out, v)
	}
	return out
}

func TestHistogramEncodeDecodeRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []int64
	}{
		{"empty", nil},
		{"one value", []int64{1234}},
		{"floor and ceiling", []int64{1, int64(60 * time.Second)}},
		{"uniform 1..10000 µs", uniform(1000, 10_000_000, 1000)},
		{"wide range", []int64{3, 70, 999, 4_096, 81_000, 2_500_000, 90_000_000, 7_000_000_000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := histogramOf(tc.values...)
			s, err := EncodeHistogram(h)
			if err != nil {
				t.Fatal(err)
			}
			d, err := DecodeHistogram(s)
			if err != nil {
				t.Fatal(err)
			}
			if d.TotalCount() != int64(len(tc.values)) {
				t.Errorf("count %d, want %d", d.TotalCount(), len(tc.values))
			}
			if !reflect.DeepEqual(d.Distribution(), h.Distribution()) {
				t.Error("decoded histogram has other buckets than the encoded one")
			}
			if d.Min() != h.Min() || d.Max() != h.Max() {
				t.Errorf("min/max %d/%d, want %d/%d", d.Min(), d.Max(), h.Min(), h.Max())
			}
			if got, want := metrics.PercentilesOf(d, 0), metrics.PercentilesOf(h, 0); got != want {
				t.Errorf("percentiles after the round trip %+v, want %+v", got, want)
			}
			// Same bounds, so it merges with histograms recorded afresh.
			if d.LowestTrackableValue() != h.LowestTrackableValue() || d.HighestTrackableValue() != h.HighestTrackableValue() ||
				d.SignificantFigures() != h.SignificantFigures() {
				t.Errorf("bounds %d..%d/%d, want %d..%d/%d", d.LowestTrackableValue(), d.HighestTrackableValue(), d.SignificantFigures(),
					h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures())
			}
		})
	}
}

// TestDecodedHistogramsMergeExactly: merging the decoded histograms of two repetitions gives
// exactly the histogram of everything recorded in one.
func TestDecodedHistogramsMergeExactly(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []int64
	}{
		{"overlapping", uniform(1000, 5_000_000, 997), uniform(31, 155_000, 31)},
		{"disjoint", uniform(1, 2000, 1), uniform(1_000_000_000, 2_000_000_000, 1_000_000)},
		{"one empty", uniform(500, 50_000, 7), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := histogramOf(append(append([]int64{}, tc.a...), tc.b...)...)
			var decoded []*hdrhistogram.Histogram
			for _, vs := range [][]int64{tc.a, tc.b} {
				s, err := EncodeHistogram(histogramOf(vs...))
				if err != nil {
					t.Fatal(err)
				}
				d, err := DecodeHistogram(s)
				if err != nil {
					t.Fatal(err)
				}
				decoded = append(decoded, d)
			}
			merged := decoded[0]
			if dropped := merged.Merge(decoded[1]); dropped != 0 {
				t.Fatalf("merge dropped %d values", dropped)
			}
			if merged.TotalCount() != all.TotalCount() {
				t.Errorf("count %d, want %d", merged.TotalCount(), all.TotalCount())
			}
			if !reflect.DeepEqual(merged.Distribution(), all.Distribution()) {
				t.Error("merged buckets differ from recording everything into one histogram")
			}
			for _, q := range []float64{0, 50, 75, 90, 99, 99.9, 99.99, 100} {
				if got, want := merged.ValueAtQuantile(q), all.ValueAtQuantile(q); got != want {
					t.Errorf("p%v = %d, want %d", q, got, want)
				}
			}
		})
	}
}

func TestDecodeHistogramRejects(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"not base64", "not base64!", "decode histogram: not base64"},
		{"base64 of text", "aGVsbG8gd29ybGQ=", "decode histogram: "},
		{"empty", "", "decode histogram: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := DecodeHistogram(tc.in)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("DecodeHistogram(%q) = %v, %v; want an error starting %q", tc.in, h, err, tc.want)
			}
		})
	}
}

// fullDocument fills every field of a document, so a round trip that loses one shows.
func fullDocument(t *testing.T) *Document {
	t.Helper()
	rep, err := NewRepetition(sampleRecorder(), 2*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.SetSchedule(load.Schedule{Intended: 2000, Sent: 1900, Unsent: 100, Late: 30, GeneratorLate: 5}, func() *metrics.Recorder {
		r := metrics.NewOpenRecorder()
		r.RecordSend(true, 2*time.Millisecond, 2*time.Millisecond, 100*time.Microsecond, time.Millisecond)
		r.RecordUnsent(300 * time.Millisecond)
		return r
	}(), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	p := metrics.Percentiles{P50: 1, P75: 2, P90: 3, P95: 4, P99: 5, P999: 6, P9999: 7, Max: 8, Mean: 2.5}
	spread := metrics.Spread{Mean: 950, SD: 12.5, CI95: [2]float64{900, 1000}, N: 3}
	return &Document{
		Schema:   Schema,
		Created:  time.Date(2026, 11, 22, 12, 30, 15, 123456789, time.UTC),
		Command:  []string{"authzbench", "run", "--target", "opa/server"},
		Scenario: "quickstart",
		Env: Env{CPUModel: "Test CPU @ 3.0GHz", Cores: 8, GOMAXPROCS: 8, OS: "linux", Kernel: "6.8.0", Arch: "amd64",
			Go: "go1.26.0", OPA: "1.22.2", Authzbench: "v0.1.0", Commit: "0123456789abcdef0123", Hostname: "bench-1",
			Pinning: "generator on 0-3, servers on 4-7"},
		Interrupted: true,
		StopReason:  "interrupted by interrupt",
		Runs: []Run{{
			Target:      "opa/server",
			Workload:    "rbac",
			WorkloadDoc: WorkloadInfo{Description: "roles", Query: "data.authzbench.rbac.allow", Inputs: 1000, ExpectAllow: 400, ExpectDeny: 590, Unverified: 10},
			SUT: target.Info{Engine: "opa", Mode: "server", Version: "1.22.2", Command: []string{"opa", "run", "--server"},
				URL: "http://127.0.0.1:8181", LogLevel: "error", PID: 4242, Connections: 4},
			Load: Load{Model: "open", Workers: 4, Rate: 1000, Connections: 64, DurationS: 2, WarmupS: 0.5, Requests: 0, TimeoutS: 5, GeneratorProcs: 4},
			Summary: Summary{Requests: 8, OK: 4, WrongDecision: 1, Errors: 4,
				ErrorClasses: map[string]uint64{"http_400": 2, "http_503": 1, "wrong_decision": 1}, UnverifiedOK: 1,
				ThroughputRPS: spread, LatencyUS: p, ErrorLatencyUS: &p,
				Open: &OpenSummary{AchievedRPS: spread, Intended: 2000, Sent: 1900, LateSends: 30, GeneratorLate: 5, LateAfterUS: 1000,
					RateMissed: true, LatenessUS: p, UncorrectedLatencyUS: p},
				Server:      &ServerTimes{Sampled: 40, EvalUS: p, HandlerUS: p},
				Connections: &Connections{Opened: 4, Expected: 4, Reused: true, ConnectUS: p}},
			Repetitions:  []Repetition{rep},
			Harness:      &Harness{CPUSeconds: 1.5, CPUPerRequestUS: 3.25, RSSStartMB: 20, RSSEndMB: 21, RSSPeakMB: 22},
			SUTResources: &sut.Resources{CPUCoresMean: 1.25, CPUCoresMax: 1.75, RSSMaxMB: 61.5, Samples: 8},
			Partial:      true,
			Error:        "run stopped: opa server exited",
		}},
	}
}

func TestWriteThenReadRoundTrip(t *testing.T) {
	doc := fullDocument(t)
	path := filepath.Join(t.TempDir(), "r.json")
	if err := Write(path, doc); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, doc) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, doc)
	}
	// The histograms survive too.
	checkHDR(t, "hdr read back", got.Runs[0].Repetitions[0].HDR, 4)
}

// TestWriteLeavesNoTemporaryFile: the write goes through a temporary file renamed over the
// destination; after success the directory holds the result alone.
func TestWriteLeavesNoTemporaryFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		rel  string // under a fresh temporary directory
	}{
		{"existing directory", "r.json"},
		{"nonexistent nested directory", filepath.Join("a", "b", "c", "r.json")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, tc.rel)
			doc := fullDocument(t)
			for i := range 2 { // a second write replaces the first
				doc.Scenario = []string{"first", "second"}[i]
				if err := Write(path, doc); err != nil {
					t.Fatal(err)
				}
			}
			assertOnlyFile(t, filepath.Dir(path), "r.json")
			got, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if got.Scenario != "second" {
				t.Errorf("scenario %q, want the second write's", got.Scenario)
			}
		})
	}
}

func TestWriteRelativePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := Write("r.json", fullDocument(t)); err != nil {
		t.Fatal(err)
	}
	assertOnlyFile(t, dir, "r.json")
}

// TestWriteFailureLeavesNoTemporaryFile: a write that cannot be renamed into place (the
// destination is a directory) fails and cleans up after itself.
func TestWriteFailureLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "r.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Write(filepath.Join(dir, "r.json"), fullDocument(t))
	if err == nil || !strings.HasPrefix(err.Error(), "write result "+filepath.Join(dir, "r.json")+": ") {
		t.Errorf("err = %v, want one naming the destination", err)
	}
	assertOnlyFile(t, dir, "r.json")

	// A parent that is a file cannot become a directory.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(file, "r.json"), fullDocument(t)); err == nil {
		t.Error("writing under a regular file succeeded")
	}
}

func assertOnlyFile(t *testing.T, dir, name string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != name {
		t.Errorf("%s holds %v, want only %s (no temporary file left behind)", dir, names, name)
	}
}

func TestReadRejects(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"other schema", `{"schema": "someone-else/v9", "runs": []}`,
			`read result %s: schema "someone-else/v9", want "authzbench/result/v1"`},
		{"older version", `{"schema": "authzbench/result/v0", "runs": []}`,
			`read result %s: schema "authzbench/result/v0", want "authzbench/result/v1"`},
		{"no schema", `{"runs": []}`, `read result %s: schema "", want "authzbench/result/v1"`},
		{"not json", `schema: authzbench/result/v1`, `read result %s: invalid character`},
		{"json array", `[]`, `read result %s: json: cannot unmarshal array`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			doc, err := Read(path)
			want := strings.Replace(tc.want, "%s", path, 1)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Read = %v, %v; want an error starting %q", doc, err, want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(dir, "absent.json")
		if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "absent.json") || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("err = %v, want a not-exist error naming the file", err)
		}
	})
}

// FuzzDecodeHistogram: a result file is user-editable text; decoding its histograms must fail
// cleanly, never panic, and what decodes must have counts that add up.
func FuzzDecodeHistogram(f *testing.F) {
	for _, h := range []*hdrhistogram.Histogram{histogramOf(), histogramOf(1234), histogramOf(uniform(1000, 2_000_000, 997)...)} {
		s, err := EncodeHistogram(h)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(s)
	}
	f.Add("not base64!")
	f.Add("HISTFAAAAB54nJNpmSzMwMDAxAABzFCaEUqLMTMAAFm8AZ8=")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := DecodeHistogram(s)
		if err != nil {
			return
		}
		var n int64
		for _, bar := range h.Distribution() {
			n += bar.Count
		}
		if n != h.TotalCount() {
			t.Fatalf("buckets hold %d values, total count says %d", n, h.TotalCount())
		}
	})
}
