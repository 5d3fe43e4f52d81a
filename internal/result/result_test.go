package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

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

// histogramOf is a latency histogram as the recorders make them (stats_test.go), holding values.
func histogramOf(values ...int64) *hdrhistogram.Histogram {
	h := newHistogram()
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
			if got, want := PercentilesOf(d, 0), PercentilesOf(h, 0); got != want {
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
	encode := func(values ...int64) string {
		s, err := EncodeHistogram(histogramOf(values...))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	p := Percentiles{P50: 1, P75: 2, P90: 3, P95: 4, P99: 5, P999: 6, P9999: 7, Max: 8, Mean: 2.5}
	spread := Spread{Mean: 950, SD: 12.5, CI95: [2]float64{900, 1000}, N: 3}
	rep := Repetition{Requests: 8, OK: 4, Errors: 4, ErrorClasses: map[string]uint64{"http_400": 2, "http_503": 1, "wrong_decision": 1},
		ElapsedS: 2, ThroughputRPS: 2, LatencyUS: p, HDR: encode(100e3, 200e3, 300e3, 400e3), ErrorHDR: encode(1e6, 1e6, 2e6, 150e3),
		ErrorMessages: map[string]string{"http_503": "status 503: busy"}, Clamped: 1, Partial: true, Turn: 3,
		Started: time.Date(2026, 11, 22, 12, 30, 20, 0, time.UTC), AchievedRPS: 950, Intended: 2000, Unsent: 100, LateSends: 30,
		GenLate: 5, RateMissed: true, LateHDR: encode(2e6), Uncorrected: encode(100e3), UnsentHDR: encode(300e6),
		ConnectHDR: encode(80e3, 95e3), ServerEvalHDR: encode(20e3), ServerHandlerHDR: encode(40e3)}
	sample := &Sample{}
	sample.Add(Triple{ClientNS: 100e3, HandlerNS: 40e3, EvalNS: 20e3, QueuedNS: 5e3})
	var err error
	if rep.ServerSample, err = EncodeSample(sample); err != nil {
		t.Fatal(err)
	}
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
			SUT: SUT{Engine: "opa", Mode: "server", Placement: LaunchedServer, Version: "1.22.2", Command: []string{"opa", "run", "--server"},
				URL: "http://127.0.0.1:8181", LogLevel: "error", PID: 4242, Connections: 4},
			Load: Load{Model: OpenLoop, Workers: 4, Rate: 1000, Connections: 64, DurationS: 2, WarmupS: 0.5, Requests: 0, TimeoutS: 5, GeneratorProcs: 4},
			Summary: Summary{Requests: 8, OK: 4, WrongDecision: 1, Errors: 4,
				ErrorClasses: map[string]uint64{"http_400": 2, "http_503": 1, "wrong_decision": 1}, UnverifiedOK: 1,
				ThroughputRPS: spread, LatencyUS: p, ErrorLatencyUS: &p,
				Open: &OpenSummary{AchievedRPS: spread, Intended: 2000, Sent: 1900, LateSends: 30, GeneratorLate: 5, LateAfterUS: 1000,
					RateMissed: true, LatenessUS: p, UncorrectedLatencyUS: p},
				Server: &ServerTimes{Sampled: 40, EvalUS: p, HandlerUS: p},
				Attribution: &Attribution{Sampled: 1, Timed: 1, Every: 1, HandlerOverClient: 2, EvalOverHandler: 3, Bands: []Band{
					{Name: "p0-p50", LowerUS: 0, UpperUS: 100, Count: 1, Thin: true, EvalShare: 0.2, HandlerShare: 0.2, WaitShare: 0.6,
						QueuedShare: 0.05, MeanClientUS: 100, MeanHandlerUS: 40, MeanEvalUS: 20}}},
				Connections: &Connections{Opened: 4, Expected: 4, Reused: true, ConnectUS: p}},
			Repetitions:  []Repetition{rep},
			Harness:      &Harness{CPUSeconds: 1.5, CPUPerRequestUS: 3.25, RSSStartMB: 20, RSSEndMB: 21, RSSPeakMB: 22},
			SUTResources: &Resources{CPUCoresMean: 1.25, CPUCoresMax: 1.75, RSSMaxMB: 61.5, Samples: 8},
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
	r := got.Runs[0].Repetitions[0]
	for _, h := range []struct {
		name, encoded string
		count         int64
	}{{"hdr", r.HDR, 4}, {"error_hdr", r.ErrorHDR, 4}, {"late_hdr", r.LateHDR, 1}, {"uncorrected_hdr", r.Uncorrected, 1},
		{"unsent_hdr", r.UnsentHDR, 1}, {"connect_hdr", r.ConnectHDR, 2}, {"server_eval_hdr", r.ServerEvalHDR, 1},
		{"server_handler_hdr", r.ServerHandlerHDR, 1}} {
		checkHDR(t, h.name+" read back", h.encoded, h.count)
	}
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
		{"not json", `schema: authzbench/result/v1`, `read result %s:1: not valid JSON: invalid character`},
		{"json array", `[]`, `read result %s:1: want a result document, a JSON object, got a list`},
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

// TestCommittedResultsReadBackWhole: every result file committed under docs/results reads into
// the document's types and writes back with no field lost or renamed, so the types the result
// package owns (sut, sut_resources, load) hold everything the files written through the
// producers' types held.
func TestCommittedResultsReadBackWhole(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "docs", "results", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no committed result files found (%v)", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			again, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			var want, got any
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(again, &got); err != nil {
				t.Fatal(err)
			}
			renameCedarDifferences(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s does not read back whole: %s", path, firstDifference("", want, got))
			}
		})
	}
}

// renameCedarDifferences writes, into a decoded document, the one rename reading makes on
// purpose: an old run's workload_info.cedar_differences is Cedar's handed note.
func renameCedarDifferences(doc any) {
	runs, _ := doc.(map[string]any)["runs"].([]any)
	for _, r := range runs {
		info, _ := r.(map[string]any)["workload_info"].(map[string]any)
		if d, ok := info["cedar_differences"]; ok {
			delete(info, "cedar_differences")
			info["handed"] = map[string]any{"engine": "cedar", "language": "Cedar", "what": d}
		}
	}
}

// firstDifference names the first JSON path at which two decoded documents differ.
func firstDifference(at string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return at + ": not an object"
		}
		for k, v := range w {
			if _, ok := g[k]; !ok {
				return at + "." + k + " lost"
			}
			if d := firstDifference(at+"."+k, v, g[k]); d != "" {
				return d
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				return at + "." + k + " added"
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return at + ": another array"
		}
		for i := range w {
			if d := firstDifference(fmt.Sprintf("%s[%d]", at, i), w[i], g[i]); d != "" {
				return d
			}
		}
	default:
		if !reflect.DeepEqual(want, got) {
			return fmt.Sprintf("%s: %v, was %v", at, got, want)
		}
	}
	return ""
}

// The load model is a closed set of words: a file naming another is refused, not read as closed
// loop.
func TestLoadModelReadsOnlyItsWords(t *testing.T) {
	for _, tc := range []struct {
		json string
		want LoadModel
		err  string
	}{
		{`{"model": "closed"}`, ClosedLoop, ""},
		{`{"model": "open"}`, OpenLoop, ""},
		{`{}`, "", ""},
		{`{"model": "bursty"}`, "", `load model "bursty": want closed or open`},
	} {
		var l Load
		err := json.Unmarshal([]byte(tc.json), &l)
		if tc.err == "" && (err != nil || l.Model != tc.want) {
			t.Errorf("%s: model %q, %v; want %q", tc.json, l.Model, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want an error saying %q", tc.json, err, tc.err)
		}
	}
	if b, _ := json.Marshal(Load{Model: OpenLoop}); !strings.Contains(string(b), `"model":"open"`) {
		t.Errorf("written as %s", b)
	}
}

// A run's placement is the recorded one; files written before it was recorded still tell an
// engine inside authzbench by its target's name.
func TestRunWhere(t *testing.T) {
	for _, tc := range []struct {
		run  Run
		want Placement
	}{
		{Run{Target: "opa/server", SUT: SUT{Placement: LaunchedServer}}, LaunchedServer},
		{Run{Target: "opa/inproc", SUT: SUT{Placement: InProcess}}, InProcess},
		{Run{Target: "cedar/inproc"}, InProcess},
		{Run{Target: "opa/server"}, ""},
		{Run{Target: "opa/server", SUT: SUT{Placement: External, External: true}}, External},
	} {
		if got := tc.run.Where(); got != tc.want {
			t.Errorf("%s placed %q: Where = %q, want %q", tc.run.Target, tc.run.SUT.Placement, got, tc.want)
		}
	}
}

// One kind measured in several TLS modes reads as several targets, so its rows, floors and
// ratios are not taken for one another's.
func TestRunLabelNamesTheTLSMode(t *testing.T) {
	plain := Run{Target: "opa/server"}
	mtls := Run{Target: "opa/server", SUT: SUT{TLS: &TLS{Mode: "mtls"}}}
	if got := plain.Label(); got != "opa/server" {
		t.Errorf("plain: %q, want opa/server", got)
	}
	if got := mtls.Label(); got != "opa/server mtls" {
		t.Errorf("mtls: %q, want \"opa/server mtls\"", got)
	}
}

// A run over HTTP/2 reads as a target of its own, h2c in clear and h2 over TLS, beside the same
// kind over HTTP/1.1.
func TestRunLabelNamesHTTP2(t *testing.T) {
	for _, tc := range []struct {
		sut  SUT
		want string
	}{
		{SUT{HTTP2: true}, "opa/server h2c"},
		{SUT{HTTP2: true, TLS: &TLS{Mode: "tls"}}, "opa/server tls h2"},
		{SUT{HTTP2: true, TLS: &TLS{Mode: "mtls"}}, "opa/server mtls h2"},
		{SUT{TLS: &TLS{Mode: "tls"}}, "opa/server tls"},
		{SUT{HTTP2: true, Connections: 1}, "opa/server h2c"},
		{SUT{HTTP2: true, Connections: 8}, "opa/server h2c 8conns"},
		{SUT{HTTP2: true, Connections: 2, TLS: &TLS{Mode: "tls"}}, "opa/server tls h2 2conns"},
		{SUT{Connections: 8}, "opa/server"}, // over HTTP/1.1 the connections are the workers'
	} {
		r := Run{Target: "opa/server", SUT: tc.sut}
		if got := r.Label(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.sut, got, tc.want)
		}
	}
}
