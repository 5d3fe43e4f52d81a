package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
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
		want      result.Repetition // HDR fields are checked apart
		okHDR     int64
		errHDR    int64
		latencyUS result.Percentiles // checked within HDR precision, mean exactly
	}{
		{
			name: "ok and errors", rec: sampleRecorder(), elapsed: 2 * time.Second,
			want: result.Repetition{Requests: 8, OK: 4, Errors: 4, ElapsedS: 2, ThroughputRPS: 2,
				ErrorClasses: map[string]uint64{"http_400": 2, "http_503": 1, "wrong_decision": 1}},
			okHDR: 4, errHDR: 4,
			latencyUS: result.Percentiles{P50: 200, P75: 300, P90: 400, P95: 400, P99: 400, P999: 400, P9999: 400, Max: 400, Mean: 250},
		},
		{
			name: "partial", rec: sampleRecorder(), elapsed: 500 * time.Millisecond, partial: true,
			want: result.Repetition{Requests: 8, OK: 4, Errors: 4, ElapsedS: 0.5, ThroughputRPS: 8, Partial: true,
				ErrorClasses: map[string]uint64{"http_400": 2, "http_503": 1, "wrong_decision": 1}},
			okHDR: 4, errHDR: 4,
			latencyUS: result.Percentiles{P50: 200, P75: 300, P90: 400, P95: 400, P99: 400, P999: 400, P9999: 400, Max: 400, Mean: 250},
		},
		{
			// Nothing measured: no throughput rather than a division by zero.
			name: "zero elapsed", rec: metrics.NewRecorder(), elapsed: 0, partial: true,
			want: result.Repetition{ErrorClasses: map[string]uint64{}, Partial: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := newRepetition(tc.rec, tc.elapsed, tc.partial)
			if err != nil {
				t.Fatal(err)
			}
			// Its identity, drawn as it is recorded: 128 random bits, another for each.
			if again, _ := newRepetition(tc.rec, tc.elapsed, tc.partial); len(rep.ID) != 32 || strings.Trim(rep.ID, "0123456789abcdef") != "" || again.ID == rep.ID {
				t.Errorf("id %q, then %q; want 32 hex digits drawn afresh", rep.ID, again.ID)
			}
			got := rep
			got.ID, got.HDR, got.ErrorHDR, got.LatencyUS = "", "", "", result.Percentiles{}
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

func checkPercentiles(t *testing.T, what string, got, want result.Percentiles) {
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
	h, err := result.DecodeHistogram(encoded)
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
	rep1, err := newRepetition(r1, 2*time.Second, false) // 2 ok/s
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := newRepetition(r2, time.Second, false) // 6 ok/s
	if err != nil {
		t.Fatal(err)
	}
	// A repetition that measured nothing does not count towards the throughput spread.
	rep3, err := newRepetition(metrics.NewRecorder(), 0, true)
	if err != nil {
		t.Fatal(err)
	}
	merged := metrics.NewRecorder()
	merged.Merge(r1)
	merged.Merge(r2)
	s := summarise(result.Load{}, []result.Repetition{rep1, rep2, rep3}, merged)

	if s.Requests != 15 || s.OK != 10 || s.WrongDecision != 1 || s.Errors != 5 || s.UnverifiedOK != 2 {
		t.Errorf("counts: requests %d ok %d wrong %d errors %d unverified ok %d, want 15 10 1 5 2",
			s.Requests, s.OK, s.WrongDecision, s.Errors, s.UnverifiedOK)
	}
	wantClasses := map[string]uint64{"http_400": 2, "http_503": 1, "wrong_decision": 1, "timeout": 1}
	if !reflect.DeepEqual(s.ErrorClasses, wantClasses) {
		t.Errorf("error classes %v, want %v", s.ErrorClasses, wantClasses)
	}
	// mean 4, sd sqrt(8), t(1) = 12.706: half-width 12.706 * sqrt(8) / sqrt(2) = 25.412
	wantRPS := result.Spread{Mean: 4, SD: math.Sqrt(8), CI95: [2]float64{4 - 25.412, 4 + 25.412}, N: 2}
	if s.ThroughputRPS.N != wantRPS.N || s.ThroughputRPS.Mean != wantRPS.Mean || math.Abs(s.ThroughputRPS.SD-wantRPS.SD) > 1e-9 ||
		math.Abs(s.ThroughputRPS.CI95[0]-wantRPS.CI95[0]) > 1e-9 || math.Abs(s.ThroughputRPS.CI95[1]-wantRPS.CI95[1]) > 1e-9 {
		t.Errorf("throughput %+v, want %+v", s.ThroughputRPS, wantRPS)
	}
	// ok latencies: 100, 200, 300, 400 and six of 700 µs; exact mean (1000 + 4200) / 10 = 520.
	checkPercentiles(t, "latency", s.LatencyUS, result.Percentiles{P50: 700, P75: 700, P90: 700, P95: 700, P99: 700,
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

	if want := (result.Beyond{Samples: 10}); s.LatencyBeyond == nil || *s.LatencyBeyond != want {
		t.Errorf("latency beyond %+v, want %+v: six of ten at 700 µs leave none above p50", s.LatencyBeyond, want)
	}
	if s.LatencyCeilingS != 60 || s.Clamped != 0 || s.ErrorMessages != nil {
		t.Errorf("ceiling %v s, %d clamped, messages %q: want 60, 0, none", s.LatencyCeilingS, s.Clamped, s.ErrorMessages)
	}

	clean := metrics.NewRecorder()
	clean.Record(verify.OK, 0, time.Millisecond)
	if s := summarise(result.Load{}, nil, clean); s.ErrorLatencyUS != nil || s.ThroughputRPS != (result.Spread{}) {
		t.Errorf("no errors and no repetitions: error latency %v, throughput %+v; want nil and zero", s.ErrorLatencyUS, s.ThroughputRPS)
	}
	if s := summarise(result.Load{}, nil, metrics.NewRecorder()); s.LatencyBeyond != nil {
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
	repLong, err := newRepetition(long, time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	short := sampleRecorder()
	repShort, err := newRepetition(short, time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	merged := metrics.NewRecorder()
	merged.Merge(short)
	merged.Merge(long)
	s := summarise(result.Load{}, []result.Repetition{repShort, repLong}, merged)
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
	if wantB := (result.Beyond{Samples: 5, P50: 2, P75: 1}); s.LatencyBeyond == nil || *s.LatencyBeyond != wantB {
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

// Every distribution a view of the run shows is stored in its repetition: connect times and the
// server's timers beside the latencies, and in open loop the lateness, the latency from the
// actual send and the unsent sends' lower bounds.
func TestNewRepetitionStoresEveryHistogram(t *testing.T) {
	rec := metrics.NewOpenRecorder()
	rec.Record(verify.OK, 0, 300*time.Microsecond)
	rec.RecordDecision(true, 300*time.Microsecond)
	rec.RecordSend(true, 2*time.Millisecond, 0, 100*time.Microsecond, load.LateAfter)
	rec.Record(verify.OK, 0, 500*time.Microsecond)
	rec.RecordDecision(false, 500*time.Microsecond)
	rec.RecordSend(true, 0, 0, 500*time.Microsecond, load.LateAfter)
	rec.RecordConnect(int64(80 * time.Microsecond))
	rec.RecordServer(int64(20*time.Microsecond), int64(40*time.Microsecond))
	rec.RecordUnsent(time.Second)
	rep, err := newRepetition(rec, time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	sched := load.Schedule{Intended: 3, Sent: 2, Unsent: 1, Late: int64(rec.Late), GeneratorLate: int64(rec.GeneratorLate)}
	if err := setSchedule(&rep, sched, rec, time.Second); err != nil {
		t.Fatal(err)
	}
	for _, h := range []struct {
		name    string
		encoded string
		count   int64
	}{
		{"hdr", rep.HDR, 2}, {"connect_hdr", rep.ConnectHDR, 1}, {"server_eval_hdr", rep.ServerEvalHDR, 1},
		{"server_handler_hdr", rep.ServerHandlerHDR, 1}, {"late_hdr", rep.LateHDR, 2}, {"uncorrected_hdr", rep.Uncorrected, 2},
		{"unsent_hdr", rep.UnsentHDR, 1}, {"allow_hdr", rep.AllowHDR, 1}, {"deny_hdr", rep.DenyHDR, 1},
	} {
		checkHDR(t, h.name, h.encoded, h.count)
	}
	if rep.ErrorHDR != "" {
		t.Errorf("error_hdr %q without errors (an unsent send is kept apart)", rep.ErrorHDR)
	}
	if rep.Intended != 3 || rep.Unsent != 1 || rep.LateSends != 1 || rep.AchievedRPS != 2 || !rep.RateMissed {
		t.Errorf("schedule: intended %d unsent %d late %d achieved %v missed %t; want 3 1 1 2 true",
			rep.Intended, rep.Unsent, rep.LateSends, rep.AchievedRPS, rep.RateMissed)
	}
	// The unsent send counts in the repetition's latency at its lower bound.
	if !within(rep.LatencyUS.Max, 1e6) {
		t.Errorf("latency max %v µs, want the unsent send's 1 s", rep.LatencyUS.Max)
	}
}

// recordedRun is a run as bench records it: one repetition per recorder, turns from firstTurn,
// summarised from their merged recorder.
func recordedRun(t *testing.T, open bool, firstTurn int, recs ...*metrics.Recorder) result.Run {
	t.Helper()
	r := result.Run{Target: "opa/server", Workload: "rbac", Load: result.Load{Model: result.ClosedLoop, Workers: 4, DurationS: 1}}
	if open {
		r.Load = result.Load{Model: result.OpenLoop, Rate: 1000, Connections: 4, DurationS: 1}
	}
	merged := metrics.NewRecorder()
	for i, rec := range recs {
		elapsed := time.Duration(rec.Requests()) * time.Millisecond // the recorder's own, whichever run holds it
		rep, err := newRepetition(rec, elapsed, false)
		if err != nil {
			t.Fatal(err)
		}
		if open {
			unsent := int64(rec.Counts[verify.Unsent])
			sent := int64(rec.Requests()) - unsent
			sched := load.Schedule{Intended: sent + unsent, Sent: sent, Unsent: unsent, Late: int64(rec.Late), GeneratorLate: int64(rec.GeneratorLate)}
			if err := setSchedule(&rep, sched, rec, elapsed); err != nil {
				t.Fatal(err)
			}
		}
		rep.Turn = firstTurn + i
		r.Repetitions = append(r.Repetitions, rep)
		merged.Merge(rec)
	}
	r.Summary = summarise(r.Load, r.Repetitions, merged)
	for _, m := range merged.Mismatches { // as finish names them, without a workload's file lines
		r.Summary.Mismatches = append(r.Summary.Mismatches, result.Mismatch{Input: m.Input + 1, Expected: m.Expect.String(), Got: "deny"})
	}
	if c := r.Summary.Connections; c != nil {
		c.Reused, c.Expected = true, 4*int64(len(recs)) // as finish sets them
	}
	return r
}

// syntheticRecorder records n ok responses spread from 10 µs up by step, a few errors of
// several classes, connections, server timers and wrong decisions, and in open loop, late and
// unsent sends; seed varies the values so that two recorders differ.
func syntheticRecorder(open bool, n, seed int) *metrics.Recorder {
	rec := metrics.NewRecorder()
	if open {
		rec = metrics.NewOpenRecorder()
	}
	for i := range n {
		latency := time.Duration(10_000+(i*7919+seed*104729)%5_000_000) * time.Nanosecond
		rec.Record(verify.OK, 0, latency)
		rec.RecordDecision(i%3 == 0, latency)
		if open {
			lateness := time.Duration((i*31+seed)%3000) * time.Microsecond
			rec.RecordSend(true, lateness, lateness/3, latency-latency/4, load.LateAfter)
		}
		if i%50 == 0 {
			rec.RecordServer(int64(latency/4), int64(latency/2))
			rec.RecordTimed(latency, 0, int64(latency/4), int64(latency/2))
		}
		if i%200 == 0 {
			rec.RecordConnect(int64(60*time.Microsecond) + int64(seed*1000))
		}
	}
	for i := range 3 + seed {
		rec.Record(verify.HTTPError, 400+seed, time.Duration(i+1)*time.Millisecond)
		rec.RecordMessage(verify.HTTPError, workload.ExpectAllow, verify.Outcome{Kind: verify.HTTPStatus, Status: 400 + seed,
			Err: errors.New("status " + string(rune('0'+seed)))})
	}
	for i := range 2 {
		out := verify.Outcome{Kind: verify.Decided, Allow: false}
		rec.Record(verify.WrongDecision, 0, 400*time.Microsecond)
		rec.RecordMismatch(verify.WrongDecision, 3*i+seed, workload.ExpectAllow, out)
		rec.RecordMessage(verify.WrongDecision, workload.ExpectAllow, out)
	}
	rec.UnverifiedOK = uint64(seed)
	rec.Reconnects = uint64(seed)
	if open {
		for i := range seed + 1 {
			rec.RecordUnsent(time.Duration(i+1) * 100 * time.Millisecond)
		}
	}
	return rec
}

// TestMergeEqualsOneRunOfEveryRepetition: two documents recorded from known recorders, merged,
// are the run that recording every repetition in one gives: counts exact, every distribution
// the same to the bucket, because result.Merge adds the stored histograms and never averages
// percentiles. Merging one document gives it back.
func TestMergeEqualsOneRunOfEveryRepetition(t *testing.T) {
	for _, open := range []bool{false, true} {
		t.Run(map[bool]string{false: "closed loop", true: "open loop with unsent sends"}[open], func(t *testing.T) {
			recs := []*metrics.Recorder{syntheticRecorder(open, 3000, 1), syntheticRecorder(open, 500, 2), syntheticRecorder(open, 1200, 3)}
			doc := func(r result.Run) *result.Document {
				return &result.Document{Schema: result.Schema, Order: "interleaved", Runs: []result.Run{r}}
			}
			first, second := doc(recordedRun(t, open, 1, recs[0], recs[1])), doc(recordedRun(t, open, 1, recs[2]))
			all := recordedRun(t, open, 1, recs...)

			merged, err := result.Merge(first, second)
			if err != nil {
				t.Fatal(err)
			}
			got := merged.Runs[0]
			if second.Runs[0].Repetitions[0].Turn != 1 {
				t.Error("Merge changed the document it was given")
			}
			// The exact means are weighted sums of each document's: equal up to rounding.
			means := func(r *result.Run) []*float64 {
				m := []*float64{&r.Summary.LatencyUS.Mean}
				if r.Summary.Open != nil {
					m = append(m, &r.Summary.Open.OKLatencyUS.Mean)
				}
				return m
			}
			for i, m := range means(&got) {
				want := *means(&all)[i]
				if math.Abs(*m-want) > want*1e-12 {
					t.Errorf("mean %v µs, want %v", *m, want)
				}
				*m = want
			}
			// The merge keeps each repetition's identity, drawn when it was recorded; recording
			// them again drew others.
			kept := append(append([]result.Repetition{}, first.Runs[0].Repetitions...), second.Runs[0].Repetitions...)
			for i := range all.Repetitions {
				if got.Repetitions[i].ID != kept[i].ID {
					t.Errorf("repetition %d: id %q, want %q as recorded", i+1, got.Repetitions[i].ID, kept[i].ID)
				}
				all.Repetitions[i].ID = got.Repetitions[i].ID
			}
			if !reflect.DeepEqual(got, all) {
				a, _ := json.MarshalIndent(got.Summary, "", " ")
				b, _ := json.MarshalIndent(all.Summary, "", " ")
				t.Errorf("merged run differs from one run of every repetition\n--- merged summary\n%s\n--- one run\n%s", a, b)
			}
			s := got.Summary
			if s.OK != 4700 || s.Errors != 15+6+s.ErrorClasses["unsent"] || s.ErrorClasses["wrong_decision"] != 6 || s.UnverifiedOK != 6 {
				t.Errorf("counts: ok %d errors %d classes %v unverified %d", s.OK, s.Errors, s.ErrorClasses, s.UnverifiedOK)
			}
			if s.Connections == nil || s.Connections.Reconnects != 6 || s.Server == nil || s.Server.Sampled != 60+10+24 || s.Connections.Opened != 15+3+6 {
				t.Errorf("connections %+v, server %+v", s.Connections, s.Server)
			}
			if a := s.Attribution; a == nil || a.Timed != 60+10+24 || len(a.Bands) < 4 || math.Abs(a.Bands[0].WaitShare-0.5) > 0.01 {
				t.Errorf("attribution %+v: want the 94 timed responses, waiting half their time", a)
			}
			if open && (s.Open == nil || s.Open.Unsent != 2+3+4 || !s.Open.LatencyIncludesUnsent) {
				t.Errorf("open: %+v", s.Open)
			}
			// Allowed and denied apart: every third ok response allowed, the counts adding up to ok.
			if d := s.Decisions; d == nil || d.Allow.Count != 1000+167+400 || d.Allow.Count+d.Deny.Count != s.OK ||
				d.Allow.LatencyUS == nil || d.Deny.LatencyUS == nil || d.Allow.LatencyUS.P50 == d.Deny.LatencyUS.P50 && d.Allow.LatencyUS.P99 == d.Deny.LatencyUS.P99 {
				t.Errorf("decisions %+v: want 1,567 allowed and 3,133 denied, each with its own latency", d)
			}
			if len(s.Mismatches) != 6 || s.Mismatches[0].Input != 2 {
				t.Errorf("mismatches %+v, want inputs 2, 3, 4, 5, 6, 7 (1-based)", s.Mismatches)
			}

			alone, err := result.Merge(first)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(alone.Runs, first.Runs) {
				t.Errorf("merging one document changed its runs:\n%+v\nwant\n%+v", alone.Runs[0].Summary, first.Runs[0].Summary)
			}
		})
	}
}

// TestPlacementOf: the result records where each kind's system under test ran, as the kind says
// with its settings: a served kind given a url is external.
func TestPlacementOf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   result.Placement
	}{
		{"opa/inproc", nil, result.InProcess},
		{"cedar/inproc", nil, result.InProcess},
		{"opa/cli", nil, result.ProcessPerDecision},
		{"opa/server", nil, result.LaunchedServer},
		{"cedar/server", nil, result.LaunchedServer},
		{"trivial/server", nil, result.LaunchedServer},
		{"opa/server", map[string]any{"url": "http://127.0.0.1:8181"}, result.External},
		{"http", map[string]any{"url": "http://127.0.0.1:8080/v1/authorize"}, result.External},
	} {
		k := kindOf(t, tc.name)
		cfg, err := k.Configure(tc.values)
		if err != nil {
			t.Fatal(err)
		}
		if got := sutInfo(k.PlacementFor(cfg), kinds.Info{}).Placement; got != tc.want {
			t.Errorf("%s with %v: placement %q, want %q", tc.name, tc.values, got, tc.want)
		}
	}
}

const envChild = "AUTHZBENCH_TEST_PRINT_ENV"

// A generator pinned before authzbench began (taskset) records the CPUs it really had, and the
// pinning says so; it used to say "none".
func TestEnvRecordsAffinitySetOutside(t *testing.T) {
	if os.Getenv(envChild) != "" {
		json.NewEncoder(os.Stdout).Encode(CaptureEnv())
		return
	}
	if runtime.GOOS != "linux" {
		env := CaptureEnv()
		if _, err := sut.Affinity(0); err == nil || env.GeneratorCPUs != "" || !strings.HasPrefix(env.Pinning, "none") {
			t.Errorf("without sched_getaffinity: generator CPUs %q, pinning %q", env.GeneratorCPUs, env.Pinning)
		}
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(self, "-test.run=^TestEnvRecordsAffinitySetOutside$")
	pinned, err := sut.Pinned(child, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	pinned.Env = append(os.Environ(), envChild+"=1")
	out, err := pinned.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var env result.Env
	line, _, _ := bytes.Cut(out, []byte("\n"))
	if err := json.Unmarshal(line, &env); err != nil {
		t.Fatalf("child printed %q: %v", out, err)
	}
	if env.GeneratorCPUs != "0" {
		t.Errorf("generator CPUs %q, want 0", env.GeneratorCPUs)
	}
	if sut.MachineCPUs() > 1 && !strings.Contains(env.Pinning, "outside authzbench") {
		t.Errorf("pinning %q; want it to say the generator was pinned from outside", env.Pinning)
	}
	if sut.MachineCPUs() == 1 && !strings.HasPrefix(env.Pinning, "none") {
		t.Errorf("one CPU: pinning %q, want none", env.Pinning)
	}
	// Unpinned, the same capture lists every CPU this process may use.
	if own := CaptureEnv(); own.GeneratorCPUs == "" || strings.Contains(own.Pinning, "outside") != (len(strings.Split(own.GeneratorCPUs, ",")) < own.Cores) {
		t.Errorf("this process: generator CPUs %q of %d cores, pinning %q", own.GeneratorCPUs, own.Cores, own.Pinning)
	}
}

// TestRecordedRunsMerge: two runs measured against the same fake server, each of its documents
// storing its connect and server-timer histograms, merge into one run holding both exactly; a
// run under another load is refused.
func TestRecordedRunsMerge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Input struct{ ID int } `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if r.URL.Query().Get("metrics") == "true" {
			fmt.Fprintf(w, `{"metrics":{"timer_rego_query_eval_ns":20000,"timer_server_handler_ns":50000},"result":%t}`, body.Input.ID%2 == 0)
			return
		}
		fmt.Fprintf(w, `{"result": %t}`, body.Input.ID%2 == 0)
	}))
	defer srv.Close()
	spec := userWorkload(t, 10) // the same files: a workload's description names them
	measure := func(workers int) *result.Document {
		s := &scenario.Scenario{Name: "merge", Source: "test", Repeat: 1,
			Workloads: []scenario.WorkloadRef{{Name: spec.Name, User: spec}},
			Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: 5 * time.Second,
				Load: load.Spec{Workers: workers, Requests: 100, MaxTime: 30 * time.Second}}}}
		setOptions(t, s, map[string]any{"url": srv.URL})
		doc := &result.Document{Schema: result.Schema}
		o := Options{Common: kinds.Common{ServerMetricsEvery: 10}}
		if err := Run(context.Background(), s, o, doc); err != nil {
			t.Fatal(err)
		}
		r := doc.Runs[0]
		if r.SUT.Placement != result.External || r.Repetitions[0].ConnectHDR == "" || r.Repetitions[0].ServerEvalHDR == "" {
			t.Fatalf("placement %q, connect_hdr %t, server_eval_hdr %t: want an external server and both histograms stored",
				r.SUT.Placement, r.Repetitions[0].ConnectHDR != "", r.Repetitions[0].ServerEvalHDR != "")
		}
		return doc
	}
	first, second := measure(2), measure(2)
	merged, err := result.Merge(first, second)
	if err != nil {
		t.Fatal(err)
	}
	s := merged.Runs[0].Summary
	if s.OK != 200 || s.Errors != 0 || len(merged.Runs[0].Repetitions) != 2 {
		t.Errorf("ok %d, errors %d, %d repetitions; want 200, 0, 2", s.OK, s.Errors, len(merged.Runs[0].Repetitions))
	}
	if c := s.Connections; c == nil || c.Opened != 4 || c.Expected != 4 || !c.Reused {
		t.Errorf("connections %+v, want 4 opened (one per worker and run) of 4 expected", c)
	}
	sampled := first.Runs[0].Summary.Server.Sampled + second.Runs[0].Summary.Server.Sampled
	if st := s.Server; st == nil || st.Sampled != sampled || st.EvalUS.P50 < 19.9 || st.EvalUS.P50 > 20.1 {
		t.Errorf("server timers %+v, want %d sampled at 20 µs", st, sampled)
	}
	if _, err := result.Merge(first, measure(4)); err == nil || !strings.Contains(err.Error(), "load.workers is 4 in document 2, 2 in document 1") {
		t.Errorf("merging runs of 2 and 4 workers: %v", err)
	}
}
