package result

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// syntheticRun is a closed-loop run of one repetition whose ok latencies are ok (ns) and whose
// other responses are http_503s of errs (ns), with connect times and server timers, summarised
// as bench summarises it.
func syntheticRun(t *testing.T, turn int, ok, errs, connect, eval []int64) Run {
	t.Helper()
	encode := func(values []int64) string {
		if len(values) == 0 {
			return ""
		}
		s, err := EncodeHistogram(histogramOf(values...))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	var sum float64
	for _, v := range ok {
		sum += float64(v)
	}
	mean := sum / float64(len(ok))
	n, e := uint64(len(ok)), uint64(len(errs))
	lat := PercentilesOf(histogramOf(ok...), mean)
	rep := Repetition{ID: NewRepetitionID(), Requests: n + e, OK: n, Errors: e, ErrorClasses: map[string]uint64{"http_503": e}, ElapsedS: 1,
		ThroughputRPS: float64(n), LatencyUS: lat, HDR: encode(ok), ErrorHDR: encode(errs), Turn: turn,
		ConnectHDR: encode(connect), ServerEvalHDR: encode(eval), ServerHandlerHDR: encode(eval)}
	beyond := BeyondOf(histogramOf(ok...))
	errLat := PercentilesOf(histogramOf(errs...), 0)
	return Run{
		Target: "opa/server", Workload: "rbac", SUT: SUT{Engine: "opa", Mode: "server", Placement: LaunchedServer, PID: turn},
		Load: Load{Model: ClosedLoop, Workers: 4, DurationS: 1},
		Summary: Summary{Requests: n + e, OK: n, Errors: e, ErrorClasses: map[string]uint64{"http_503": e},
			ThroughputRPS: SpreadOf([]float64{float64(n)}), LatencyUS: lat, LatencyBeyond: &beyond, ErrorLatencyUS: &errLat,
			ErrorMessages: map[string]string{"http_503": "status 503 in turn " + string(rune('0'+turn))}, LatencyCeilingS: 60,
			Connections: &Connections{Opened: int64(len(connect)), Expected: 4, Reused: true, ConnectUS: PercentilesOf(histogramOf(connect...), 0)},
			Server: &ServerTimes{Sampled: int64(len(eval)), EvalUS: PercentilesOf(histogramOf(eval...), 0),
				HandlerUS: PercentilesOf(histogramOf(eval...), 0)}},
		Repetitions: []Repetition{rep},
		Harness:     &Harness{CPUSeconds: 2, RSSStartMB: 10, RSSEndMB: 12, RSSPeakMB: 13},
	}
}

func docOf(runs ...Run) *Document {
	return &Document{Schema: Schema, Order: "interleaved", Env: Env{CPUModel: "Test CPU", Cores: 2, OPA: "1.22.2"}, Runs: runs}
}

// Two documents' runs merge into the run of the union: counts summed exactly, every percentile
// that of one histogram holding every value, never an average of the two documents'.
func TestMergeIsTheHistogramOfTheUnion(t *testing.T) {
	fast, slow := uniform(10_000, 2_000_000, 997), uniform(1_500_000, 90_000_000, 15_013)
	a := syntheticRun(t, 1, fast, []int64{5e6, 6e6}, []int64{80e3, 90e3}, uniform(5_000, 50_000, 500))
	b := syntheticRun(t, 1, slow, []int64{7e6}, []int64{70e3}, uniform(40_000, 400_000, 900))
	doc, err := Merge(docOf(a), docOf(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 1 {
		t.Fatalf("%d runs, want the one both documents hold", len(doc.Runs))
	}
	r := doc.Runs[0]
	s := r.Summary
	union := histogramOf(append(append([]int64{}, fast...), slow...)...)
	if s.OK != uint64(len(fast)+len(slow)) || s.Requests != s.OK+3 || s.Errors != 3 || s.ErrorClasses["http_503"] != 3 {
		t.Errorf("counts: requests %d ok %d errors %d classes %v", s.Requests, s.OK, s.Errors, s.ErrorClasses)
	}
	want := PercentilesOf(union, 0)
	if s.LatencyUS.P99 != want.P99 || s.LatencyUS.P50 != want.P50 || s.LatencyUS.P9999 != want.P9999 || s.LatencyUS.Max != want.Max {
		t.Errorf("latency %+v\nwant the union's %+v", s.LatencyUS, want)
	}
	// Averaging the two documents' p99 would read far below the union's.
	if avg := (a.Summary.LatencyUS.P99 + b.Summary.LatencyUS.P99) / 2; s.LatencyUS.P99 == avg {
		t.Errorf("p99 %v is the average of the documents'", s.LatencyUS.P99)
	}
	var sum float64
	for _, v := range append(append([]int64{}, fast...), slow...) {
		sum += float64(v)
	}
	if exact := sum / float64(s.OK) / 1e3; !within(s.LatencyUS.Mean, exact, 1e-12) {
		t.Errorf("mean %v µs, want the exact %v", s.LatencyUS.Mean, exact)
	}
	if wantB := BeyondOf(union); s.LatencyBeyond == nil || *s.LatencyBeyond != wantB {
		t.Errorf("beyond %+v, want %+v", s.LatencyBeyond, wantB)
	}
	if got, want := *s.ErrorLatencyUS, PercentilesOf(histogramOf(5e6, 6e6, 7e6), 0); got != want {
		t.Errorf("error latency %+v, want %+v", got, want)
	}
	c := s.Connections
	if c == nil || c.Opened != 3 || c.Expected != 8 || c.ConnectUS != PercentilesOf(histogramOf(80e3, 90e3, 70e3), 0) {
		t.Errorf("connections %+v", c)
	}
	evals := append(uniform(5_000, 50_000, 500), uniform(40_000, 400_000, 900)...)
	if st := s.Server; st == nil || st.Sampled != int64(len(evals)) || st.EvalUS != PercentilesOf(histogramOf(evals...), 0) {
		t.Errorf("server timers %+v", st)
	}
	if s.ThroughputRPS.N != 2 || s.ThroughputRPS != SpreadOf([]float64{float64(len(fast)), float64(len(slow))}) {
		t.Errorf("throughput %+v: want the spread of both repetitions", s.ThroughputRPS)
	}
	if s.ErrorMessages["http_503"] != "status 503 in turn 1" {
		t.Errorf("messages %v: want the first document's", s.ErrorMessages)
	}
	if len(r.Repetitions) != 2 || r.Repetitions[0].Turn != 1 || r.Repetitions[1].Turn != 2 {
		t.Errorf("repetitions %d, turns %d %d: want both, the second document's turns after the first's",
			len(r.Repetitions), r.Repetitions[0].Turn, r.Repetitions[1].Turn)
	}
	if h := r.Harness; h == nil || h.CPUSeconds != 4 || h.RSSStartMB != 10 || h.RSSEndMB != 12 || h.CPUPerRequestUS != 4e6/float64(s.Requests) {
		t.Errorf("harness %+v", h)
	}
	if r.SUT.PID != 1 {
		t.Errorf("sut %+v: want the first document's", r.SUT)
	}
	if b.Repetitions[0].Turn != 1 {
		t.Error("Merge changed a document it was given")
	}
	again, err := Merge(doc)
	if err != nil || !reflect.DeepEqual(again.Runs, doc.Runs) {
		t.Errorf("merging the merged document alone changed it: %v", err)
	}
}

func within(got, want, rel float64) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	return d <= want*rel
}

// Documents that did not measure the same thing are refused, and the message names the run and
// the setting.
func TestMergeRefusesMismatchedSettings(t *testing.T) {
	base := func() *Document {
		return docOf(syntheticRun(t, 1, uniform(1000, 100_000, 100), nil, []int64{80e3}, []int64{20e3}))
	}
	for _, tc := range []struct {
		name   string
		change func(d *Document)
		want   string
	}{
		{"rate", func(d *Document) { d.Runs[0].Load = Load{Model: OpenLoop, Rate: 1000, Connections: 4, DurationS: 1} },
			`merge: run 1 (rbac on opa/server): load.model is "open" in document 2, "closed" in document 1`},
		{"workers", func(d *Document) { d.Runs[0].Load.Workers = 8 },
			"merge: run 1 (rbac on opa/server): load.workers is 8 in document 2, 4 in document 1"},
		{"duration", func(d *Document) { d.Runs[0].Load.DurationS = 10 },
			"load.duration_s is 10 in document 2, 1 in document 1"},
		{"coalesce", func(d *Document) { d.Runs[0].Load.CoalesceUS = 100 },
			"load.coalesce_us is 100 in document 2, 0 in document 1"},
		{"input skew", func(d *Document) { d.Runs[0].Load.InputSkew = "hot:90/10" },
			`load.input_skew is "hot:90/10" in document 2, "" in document 1`},
		{"caches", func(d *Document) { d.Runs[0].SUT.Caches = []Cache{{Name: "dispatch_cache", On: true}} },
			`sut.caches is "dispatch_cache on=true ttl=0s" in document 2, "" in document 1`},
		{"engine version", func(d *Document) { d.Runs[0].SUT.Version = "1.0.0" },
			`merge: run 1 (rbac on opa/server): sut.version is "1.0.0" in document 2, "" in document 1`},
		{"inputs", func(d *Document) { d.Runs[0].WorkloadDoc.Inputs = 7 }, "workload_info.inputs is 7 in document 2, 0 in document 1"},
		{"connection reuse", func(d *Document) { d.Runs[0].Summary.Connections.Reused = false },
			"connection reuse is false in document 2, true in document 1"},
		{"environment", func(d *Document) { d.Env.Cores = 16 },
			"merge: env.cores is 16 in document 2, 2 in document 1: measurements from different setups are not one measurement"},
		{"order", func(d *Document) { d.Order = "sequential" }, `order is "sequential" in document 2, "interleaved" in document 1`},
		{"a run the first lacks", func(d *Document) {
			extra := d.Runs[0]
			extra.Target = "cedar/server"
			extra.Repetitions = remeasuredRepetitions(extra.Repetitions)
			d.Runs = append(d.Runs, extra)
		}, "merge: document 2 has a run of rbac on cedar/server (run 2) that document 1 lacks"},
		{"another workload", func(d *Document) { d.Runs[0].Workload = "api" },
			"merge: document 2 has a run of api on opa/server (run 1) that document 1 lacks"},
		{"schema", func(d *Document) { d.Schema = "authzbench/result/v0" }, `merge: document 2 has schema "authzbench/result/v0"`},
		{"connect times only as percentiles", func(d *Document) { d.Runs[0].Repetitions[0].ConnectHDR = "" },
			"merge: run 1 (rbac on opa/server): its connect times cannot be merged exactly: the repetitions' histograms hold 1, its summaries count 2"},
		{"server timers only as percentiles", func(d *Document) { d.Runs[0].Repetitions[0].ServerHandlerHDR = "" },
			"its server timers cannot be merged exactly"},
		{"a latency histogram that does not hold the ok responses", func(d *Document) { d.Runs[0].Summary.OK++ },
			"the repetitions' latency histograms hold 1982 ok responses, the summaries count 1983"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := base()
			tc.change(other)
			_, err := Merge(base(), other)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Merge = %v\nwant an error saying %q", err, tc.want)
			}
		})
	}
	t.Run("a run missing from the second", func(t *testing.T) {
		first := base()
		extra := first.Runs[0]
		extra.Workload = "api"
		extra.Repetitions = remeasuredRepetitions(extra.Repetitions)
		first.Runs = append(first.Runs, extra)
		_, err := Merge(first, base())
		if want := "merge: document 2 has no run of api on opa/server (run 2 of document 1)"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Merge = %v, want %q", err, want)
		}
	})
	if _, err := Merge(); err == nil {
		t.Error("merging nothing succeeded")
	}
	// The host's name is no setting: generators on several machines merge, and the result names them.
	other := base()
	other.Env.Hostname = "gen-2"
	first := base()
	first.Env.Hostname = "gen-1"
	doc, err := Merge(first, other)
	if err != nil || doc.Env.Hostname != "gen-1, gen-2" {
		t.Errorf("hosts: %v, %q", err, doc.Env.Hostname)
	}
}

// TestMergeRebuildsCommittedResults: a committed result file merged alone gives back every run
// exactly: its summaries, read afresh from the histograms its repetitions store, are the ones
// the run wrote. Merged with itself it is refused; merged with another measurement of the same
// figures, every count doubles and the repetitions follow one another.
func TestMergeRebuildsCommittedResults(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "docs", "results", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no committed result files found (%v)", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			doc, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			alone, err := Merge(doc)
			if keptAsPercentiles(doc) {
				// Written before connect times and server timers were stored as histograms: an
				// exact merge is impossible, and Merge must say so rather than guess.
				if err == nil || !strings.Contains(err.Error(), "cannot be merged exactly") {
					t.Fatalf("a file keeping some distribution only as percentiles merged: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range doc.Runs {
				got, want := alone.Runs[i], doc.Runs[i]
				if want.Summary.LatencyBeyond == nil {
					// Files written before the counts beyond each percentile were kept: the merge
					// reads them from the histograms, the file has none to compare with.
					got.Summary.LatencyBeyond = nil
				}
				if want.Summary.ShortWindow == nil {
					// Files written before short windows were noted: the merge reads it from the
					// repetitions, as a run does when it ends.
					if w := ShortWindowOf(want.Load, want.Repetitions); !reflect.DeepEqual(got.Summary.ShortWindow, w) {
						t.Errorf("run %d: short window %+v, want %+v", i+1, got.Summary.ShortWindow, w)
					}
					got.Summary.ShortWindow = nil
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("run %d (%s on %s) rebuilt\n%+v\nwant\n%+v", i+1, want.Workload, want.Target, got.Summary, want.Summary)
				}
			}
			// The file with itself holds every repetition twice: refused, whatever its age.
			var counted *CountedTwiceError
			if _, err := Merge(doc, doc); !errors.As(err, &counted) {
				t.Fatalf("merged with itself: %v, want every repetition refused as counted twice", err)
			}
			twice, err := Merge(doc, remeasured(t, doc))
			if changed(doc) {
				// Its answers were judged against its own writes: nothing can be added to them.
				if err == nil || !strings.Contains(err.Error(), "(--changes)") {
					t.Fatalf("a run with changes merged with another measurement: %v, want it refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			last := lastTurn(doc)
			for i, r := range twice.Runs {
				was := doc.Runs[i]
				if r.Summary.Requests != 2*was.Summary.Requests || r.Summary.OK != 2*was.Summary.OK || r.Summary.Errors != 2*was.Summary.Errors ||
					len(r.Repetitions) != 2*len(was.Repetitions) {
					t.Errorf("run %d twice: requests %d ok %d errors %d, %d repetitions; want each doubled", i+1,
						r.Summary.Requests, r.Summary.OK, r.Summary.Errors, len(r.Repetitions))
				}
				if n := len(was.Repetitions); n > 0 && was.Repetitions[0].Turn > 0 && r.Repetitions[n].Turn != was.Repetitions[0].Turn+last {
					t.Errorf("run %d twice: the second copy's first turn %d, want %d", i+1, r.Repetitions[n].Turn, was.Repetitions[0].Turn+last)
				}
			}
		})
	}
}

// changed reports whether a run of doc changed its world during the run (--changes).
func changed(doc *Document) bool {
	for _, r := range doc.Runs {
		if r.Changes != nil {
			return true
		}
	}
	return false
}

// remeasured is another measurement with the same figures as doc: a copy whose repetitions have
// identities of their own (an ID, a start time or measured time a nanosecond apart).
func remeasured(t *testing.T, doc *Document) *Document {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var again Document
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	for i := range again.Runs {
		again.Runs[i].Repetitions = remeasuredRepetitions(again.Runs[i].Repetitions)
	}
	return &again
}

// remeasuredRepetitions are copies of reps, each another measurement of the same figures.
func remeasuredRepetitions(reps []Repetition) []Repetition {
	out := append([]Repetition(nil), reps...)
	for j := range out {
		rep := &out[j]
		rep.ID = NewRepetitionID()
		// One added up from shards was measured by shards of its own.
		if rep.Parts != nil {
			rep.Parts = append([]string(nil), rep.Parts...)
			for k := range rep.Parts {
				rep.Parts[k] = NewRepetitionID()
			}
		}
		if !rep.Started.IsZero() {
			rep.Started = rep.Started.Add(time.Nanosecond)
		}
		rep.ElapsedS += 1e-9
	}
	return out
}

// keptAsPercentiles reports whether a document holds connect times or server timers in its
// summaries but not in its repetitions' histograms, as files written before 2026-11-23 noon do.
func keptAsPercentiles(doc *Document) bool {
	for _, r := range doc.Runs {
		// A repetition whose connections all opened in the warm-up has no connect times of its
		// own, in a file of today too: only a run none of whose repetitions has them was
		// written before they were stored.
		connectHDRs := 0
		for _, rep := range r.Repetitions {
			if r.Summary.Server != nil && rep.ServerEvalHDR == "" {
				return true
			}
			if rep.ConnectHDR != "" {
				connectHDRs++
			}
		}
		if r.Summary.Connections != nil && r.Summary.Connections.Opened > 0 && connectHDRs == 0 {
			return true
		}
	}
	return false
}

// The parts of the requests that opened their own connection (TLS handshake, exchange) merge
// like the connect times they go with: each the percentiles of the one histogram of the union.
// A run whose connections all opened before its measured window (a warm-up, an event loop's
// first sends) recorded no connection figures, and so nothing of reuse: it merges with a run
// that did, and the merged run keeps the connections that were counted.
func TestMergeRunWithoutConnectionFigures(t *testing.T) {
	lat := uniform(1000, 100_000, 100)
	a := syntheticRun(t, 1, lat, nil, []int64{80e3}, []int64{20e3})
	b := syntheticRun(t, 1, lat, nil, nil, []int64{20e3})
	b.Summary.Connections = nil
	doc, err := Merge(docOf(a), docOf(b))
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	if c := doc.Runs[0].Summary.Connections; c == nil || c.Opened != 1 || !c.Reused {
		t.Errorf("connections %+v: want the one counted, reused", c)
	}
}

func TestMergeAddsConnectionParts(t *testing.T) {
	withParts := func(r Run, tls, exchange []int64) Run {
		encode := func(values []int64) string {
			s, err := EncodeHistogram(histogramOf(values...))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		r.Repetitions[0].TLSHDR, r.Repetitions[0].ExchangeHDR = encode(tls), encode(exchange)
		tp, ep := PercentilesOf(histogramOf(tls...), 0), PercentilesOf(histogramOf(exchange...), 0)
		r.Summary.Connections.TLSUS, r.Summary.Connections.ExchangeUS = &tp, &ep
		r.Summary.Connections.Reused = false
		return r
	}
	tlsA, tlsB := []int64{2_000_000, 2_400_000, 2_900_000}, []int64{3_500_000, 4_400_000}
	exA, exB := []int64{200_000, 250_000, 300_000}, []int64{900_000, 1_000_000}
	evals := []int64{20_000, 30_000}
	a := withParts(syntheticRun(t, 1, []int64{2_500_000, 3_000_000, 3_500_000}, nil, []int64{80e3, 90e3, 85e3}, evals), tlsA, exA)
	b := withParts(syntheticRun(t, 1, []int64{4_500_000, 5_500_000}, nil, []int64{70e3, 75e3}, evals), tlsB, exB)
	doc, err := Merge(docOf(a), docOf(b))
	if err != nil {
		t.Fatal(err)
	}
	c := doc.Runs[0].Summary.Connections
	if c == nil || c.Opened != 5 || c.TLSUS == nil || c.ExchangeUS == nil {
		t.Fatalf("connections %+v: want 5 opened, with their TLS and exchange parts", c)
	}
	if want := PercentilesOf(histogramOf(append(tlsA, tlsB...)...), 0); *c.TLSUS != want {
		t.Errorf("tls %+v, want the union's %+v", *c.TLSUS, want)
	}
	if want := PercentilesOf(histogramOf(append(exA, exB...)...), 0); *c.ExchangeUS != want {
		t.Errorf("exchange %+v, want the union's %+v", *c.ExchangeUS, want)
	}
	// In clear there is no handshake to merge: the part stays absent, not a row of zeros.
	a.Repetitions[0].TLSHDR, a.Summary.Connections.TLSUS = "", nil
	b.Repetitions[0].TLSHDR, b.Summary.Connections.TLSUS = "", nil
	doc, err = Merge(docOf(a), docOf(b))
	if err != nil {
		t.Fatal(err)
	}
	if c := doc.Runs[0].Summary.Connections; c.TLSUS != nil || c.ExchangeUS == nil {
		t.Errorf("in clear: tls %+v, exchange %+v; want no TLS part and the exchange", c.TLSUS, c.ExchangeUS)
	}
}

// Runs merged with the same caches add up their lookups and hits; one that did not count them
// leaves the merge uncounted rather than short.
func TestMergeAddsCacheCounts(t *testing.T) {
	run := func(lookups, hits float64, counted bool) *Run {
		return &Run{SUT: SUT{Caches: []Cache{{Name: "check_query_cache", On: true, TTLS: 10, Counted: counted, Lookups: lookups, Hits: hits}}}}
	}
	got := mergeCaches([]*Run{run(100, 60, true), run(300, 240, true)})
	if r, ok := got[0].HitRatio(); !ok || got[0].Lookups != 400 || got[0].Hits != 300 || r != 0.75 {
		t.Errorf("merged %+v: want 400 lookups, 300 hits", got[0])
	}
	if got := mergeCaches([]*Run{run(100, 60, true), run(0, 0, false)}); got[0].Counted || got[0].Lookups != 0 {
		t.Errorf("merged with an uncounted run: %+v, want uncounted", got[0])
	}
}
