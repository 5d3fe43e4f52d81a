package metrics

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// record is one call of Recorder.Record.
type record struct {
	class   verify.Class
	status  int
	latency time.Duration
}

func recordAll(r *Recorder, rs []record) {
	for _, x := range rs {
		r.Record(x.class, x.status, x.latency)
	}
}

// repeat returns n copies of one record.
func repeat(n int, x record) []record {
	out := make([]record, n)
	for i := range out {
		out[i] = x
	}
	return out
}

func TestRecorderCounts(t *testing.T) {
	ok := record{verify.OK, 0, 100 * time.Microsecond}
	for _, tc := range []struct {
		name       string
		records    []record
		requests   uint64
		errors     uint64
		okHist     int64 // values in the OK histogram
		errHist    int64 // values in the Errors histogram
		classes    map[string]uint64
		meanOKNano float64
	}{
		{name: "empty", classes: map[string]uint64{}},
		{name: "only ok", records: repeat(3, ok), requests: 3, okHist: 3, classes: map[string]uint64{}, meanOKNano: 100e3},
		{
			name: "statuses split by code",
			records: []record{
				{verify.HTTPError, 400, time.Millisecond},
				{verify.HTTPError, 400, time.Millisecond},
				{verify.HTTPError, 503, time.Millisecond},
				{verify.ExitError, 1, time.Millisecond},
				{verify.ExitError, 2, time.Millisecond},
			},
			requests: 5, errors: 5, errHist: 5,
			classes: map[string]uint64{"http_400": 2, "http_503": 1, "exit_1": 1, "exit_2": 1},
		},
		{
			name: "every error class once beside ok",
			records: append(repeat(2, ok),
				record{verify.WrongDecision, 0, time.Millisecond},
				record{verify.Undefined, 0, time.Millisecond},
				record{verify.NonBoolean, 0, time.Millisecond},
				record{verify.HTTPError, 500, time.Millisecond},
				record{verify.RateLimited, 429, time.Millisecond},
				record{verify.ExitError, 137, time.Millisecond},
				record{verify.Transport, 0, time.Millisecond},
				record{verify.Timeout, 0, 5 * time.Second},
			),
			requests: 10, errors: 8, okHist: 2, errHist: 8, meanOKNano: 100e3,
			classes: map[string]uint64{"wrong_decision": 1, "undefined": 1, "non_boolean": 1, "http_500": 1,
				"rate_limited": 1, "exit_137": 1, "transport": 1, "timeout": 1},
		},
		{
			// Rate limits are one class, not split by status.
			name:     "rate limited",
			records:  repeat(3, record{verify.RateLimited, 429, time.Millisecond}),
			requests: 3, errors: 3, errHist: 3,
			classes: map[string]uint64{"rate_limited": 3},
		},
		{
			// The status of a class that is not split by status is ignored.
			name:     "status ignored for wrong decisions",
			records:  []record{{verify.WrongDecision, 400, time.Millisecond}, {verify.WrongDecision, 503, time.Millisecond}},
			requests: 2, errors: 2, errHist: 2,
			classes: map[string]uint64{"wrong_decision": 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecorder()
			recordAll(r, tc.records)
			if got := r.Requests(); got != tc.requests {
				t.Errorf("Requests() = %d, want %d", got, tc.requests)
			}
			if got := r.ErrorCount(); got != tc.errors {
				t.Errorf("ErrorCount() = %d, want %d", got, tc.errors)
			}
			if got := r.OK.TotalCount(); got != tc.okHist {
				t.Errorf("OK histogram holds %d values, want %d", got, tc.okHist)
			}
			if got := r.Errors.TotalCount(); got != tc.errHist {
				t.Errorf("Errors histogram holds %d values, want %d", got, tc.errHist)
			}
			if got := r.ErrorClasses(); !reflect.DeepEqual(got, tc.classes) {
				t.Errorf("ErrorClasses() = %v, want %v", got, tc.classes)
			}
			if got := r.MeanOKNanos(); got != tc.meanOKNano {
				t.Errorf("MeanOKNanos() = %v, want %v", got, tc.meanOKNano)
			}
			okLive, errLive := r.Live()
			if okLive != uint64(tc.okHist) || errLive != uint64(tc.errHist) {
				t.Errorf("Live() = %d, %d, want %d, %d", okLive, errLive, tc.okHist, tc.errHist)
			}
		})
	}
}

// TestRecorderKeepsLatenciesApart: ok latencies go only to the OK histogram, error latencies
// only to Errors, so a fast 400 cannot flatter the ok percentiles nor a slow timeout spoil them.
func TestRecorderKeepsLatenciesApart(t *testing.T) {
	r := NewRecorder()
	recordAll(r, repeat(10, record{verify.OK, 0, 100 * time.Microsecond}))
	recordAll(r, repeat(4, record{verify.HTTPError, 400, 7 * time.Millisecond}))
	recordAll(r, repeat(2, record{verify.Timeout, 0, 3 * time.Second}))

	for _, tc := range []struct {
		name      string
		h         *hdrhistogram.Histogram
		count     int64
		min, max  time.Duration
		meanNanos float64
	}{
		{"ok", r.OK, 10, 100 * time.Microsecond, 100 * time.Microsecond, 100e3},
		{"errors", r.Errors, 6, 7 * time.Millisecond, 3 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.h.TotalCount(); got != tc.count {
				t.Errorf("count %d, want %d", got, tc.count)
			}
			if got := tc.h.Min(); !tc.h.ValuesAreEquivalent(got, int64(tc.min)) {
				t.Errorf("min %s, want %s", time.Duration(got), tc.min)
			}
			if got := tc.h.Max(); !tc.h.ValuesAreEquivalent(got, int64(tc.max)) {
				t.Errorf("max %s, want %s", time.Duration(got), tc.max)
			}
		})
	}
	if got := r.MeanOKNanos(); got != 100e3 {
		t.Errorf("MeanOKNanos() = %v, want exactly 100000: error latencies must not move it", got)
	}
}

// TestRecorderClamps: values outside the histogram's range ([1 ns, 60 s] by default, up to the
// ceiling a recorder was made with) are counted at the nearest bound, not dropped; those beyond
// the ceiling are counted as clamped, so the report can say the slowest percentiles read low.
func TestRecorderClamps(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ceiling time.Duration // 0: NewRecorder
		class   verify.Class
		latency time.Duration
		stored  int64 // the value the histogram must hold (as an equivalent value)
		clamped uint64
	}{
		{"ok at the ceiling", 0, verify.OK, 60 * time.Second, int64(60 * time.Second), 0},
		{"ok two minutes", 0, verify.OK, 2 * time.Minute, int64(60 * time.Second), 1},
		{"ok a day", 0, verify.OK, 24 * time.Hour, int64(60 * time.Second), 1},
		{"timeout ten minutes", 0, verify.Timeout, 10 * time.Minute, int64(60 * time.Second), 1},
		{"http error two minutes", 0, verify.HTTPError, 2 * time.Minute, int64(60 * time.Second), 1},
		{"ok zero", 0, verify.OK, 0, 1, 0},
		{"ok negative", 0, verify.OK, -time.Second, 1, 0},
		{"transport zero", 0, verify.Transport, 0, 1, 0},
		{"ok two minutes under a five-minute ceiling", 5 * time.Minute, verify.OK, 2 * time.Minute, int64(2 * time.Minute), 0},
		{"timeout four minutes under a five-minute ceiling", 5 * time.Minute, verify.Timeout, 4 * time.Minute, int64(4 * time.Minute), 0},
		{"ok ten minutes over a five-minute ceiling", 5 * time.Minute, verify.OK, 10 * time.Minute, int64(5 * time.Minute), 1},
		{"a ceiling under 60 s keeps 60 s", time.Second, verify.OK, 30 * time.Second, int64(30 * time.Second), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecorderUpTo(tc.ceiling)
			r.Record(tc.class, 500, tc.latency)
			h := r.Errors
			if tc.class == verify.OK {
				h = r.OK
			}
			if h.TotalCount() != 1 {
				t.Fatalf("histogram holds %d values, want 1: a value out of range was dropped", h.TotalCount())
			}
			if got := h.Max(); !h.ValuesAreEquivalent(got, tc.stored) {
				t.Errorf("stored %d ns, want %d", got, tc.stored)
			}
			if r.Clamped != tc.clamped {
				t.Errorf("Clamped = %d, want %d", r.Clamped, tc.clamped)
			}
			if r.Requests() != 1 {
				t.Errorf("Requests() = %d, want 1", r.Requests())
			}
			if tc.class == verify.OK {
				// The exact mean is over the clamped value too, so it agrees with the histogram.
				if got := r.MeanOKNanos(); got != float64(tc.stored) {
					t.Errorf("MeanOKNanos() = %v, want %d", got, tc.stored)
				}
			}
		})
	}
}

// TestRecorderMergeAcrossCeilings: a recorder with a higher ceiling merged into one with the
// default loses nothing, in either order, and the result is the histogram recorded in one piece.
func TestRecorderMergeAcrossCeilings(t *testing.T) {
	long := []record{{verify.OK, 0, 3 * time.Minute}, {verify.OK, 0, 90 * time.Second}, {verify.Timeout, 0, 4 * time.Minute}}
	short := []record{{verify.OK, 0, 250 * time.Microsecond}, {verify.OK, 0, 59 * time.Second}, {verify.Transport, 0, time.Millisecond}}
	all := NewRecorderUpTo(5 * time.Minute)
	recordAll(all, long)
	recordAll(all, short)
	for _, order := range []string{"long into default", "default into long"} {
		t.Run(order, func(t *testing.T) {
			a, b := NewOpenRecorder(), NewOpenRecorderUpTo(5*time.Minute)
			recordAll(a, short)
			recordAll(b, long)
			b.RecordSend(true, 100*time.Second, 100*time.Second, 80*time.Second, time.Millisecond)
			b.RecordUnsent(200 * time.Second)
			into, from := a, b
			if order == "default into long" {
				into, from = b, a
			}
			into.Merge(from)
			if into.Ceiling() != 5*time.Minute || into.Clamped != 0 {
				t.Errorf("ceiling %s, %d clamped: want 5m0s and none", into.Ceiling(), into.Clamped)
			}
			for name, hs := range map[string][2]*hdrhistogram.Histogram{"ok": {into.OK, all.OK}, "errors": {into.Errors, all.Errors}} {
				if !reflect.DeepEqual(hs[0].Distribution(), hs[1].Distribution()) {
					t.Errorf("%s: merged histogram differs from one recorded in one piece", name)
				}
			}
			if got := into.Lateness.Max(); !into.Lateness.ValuesAreEquivalent(got, int64(100*time.Second)) {
				t.Errorf("lateness max %d ns after the merge, want 100 s", got)
			}
			// The merge destination bench and the drivers use is a plain NewRecorder.
			plain := NewRecorder()
			plain.Merge(into)
			if !reflect.DeepEqual(plain.OK.Distribution(), all.OK.Distribution()) || plain.OK.TotalCount() != 4 {
				t.Errorf("merging into a plain recorder lost values: %d ok", plain.OK.TotalCount())
			}
		})
	}
}

// TestRecorderFirstMessages: the first response of each class that carried a message keeps it,
// whatever follows; a wrong decision says what was expected; merging keeps the receiver's.
func TestRecorderFirstMessages(t *testing.T) {
	type response struct {
		class  verify.Class
		expect workload.Expect
		out    verify.Outcome
	}
	fail := func(k verify.Kind, status int, msg string) verify.Outcome {
		o := verify.Outcome{Kind: k, Status: status}
		if msg != "" {
			o.Err = errors.New(msg)
		}
		return o
	}
	r := NewRecorder()
	for _, x := range []response{
		{verify.OK, workload.ExpectAllow, verify.Outcome{Kind: verify.Decided, Allow: true}},
		{verify.Transport, 0, fail(verify.TransportFailure, 0, "dial tcp 127.0.0.1:1: connect: connection refused")},
		{verify.Transport, 0, fail(verify.TransportFailure, 0, "read: connection reset by peer")},
		{verify.MalformedResponse, 0, fail(verify.Malformed, 0, `the body is not JSON: "<html>"`)},
		{verify.HTTPError, 0, fail(verify.HTTPStatus, 503, "status 503: overloaded")},
		{verify.HTTPError, 0, fail(verify.HTTPStatus, 503, "status 503: second")},
		{verify.HTTPError, 0, fail(verify.HTTPStatus, 400, "status 400: bad input")},
		{verify.WrongDecision, workload.ExpectAllow, verify.Outcome{Kind: verify.Decided, Allow: false}},
		{verify.WrongDecision, workload.ExpectDeny, verify.Outcome{Kind: verify.Decided, Allow: true}},
		{verify.Undefined, 0, verify.Outcome{Kind: verify.NoResult}}, // nothing to say beyond the class
		{verify.Undefined, 0, fail(verify.NoResult, 0, "too late: not the first")},
		{verify.EvalError, 0, fail(verify.EvalFailed, 0, strings.Repeat("é", 150))},
	} {
		r.Record(x.class, x.out.Status, time.Millisecond)
		r.RecordMessage(x.class, x.expect, x.out)
	}
	long := strings.ToValidUTF8(strings.Repeat("é", 150)[:200], "") + "…"
	want := map[string]string{
		"transport":          "dial tcp 127.0.0.1:1: connect: connection refused",
		"malformed_response": `the body is not JSON: "<html>"`,
		"http_503":           "status 503: overloaded",
		"http_400":           "status 400: bad input",
		"wrong_decision":     "expected allow, the engine decided deny",
		"eval_error":         long,
	}
	if !reflect.DeepEqual(r.FirstMessages, want) {
		t.Errorf("FirstMessages = %q\nwant %q", r.FirstMessages, want)
	}
	other := NewRecorder()
	other.Record(verify.Transport, 0, time.Millisecond)
	other.RecordMessage(verify.Transport, 0, fail(verify.TransportFailure, 0, "other worker's"))
	other.Record(verify.Timeout, 0, time.Second)
	other.RecordMessage(verify.Timeout, 0, fail(verify.TimedOut, 0, "no answer within 1s"))
	r.Merge(other)
	if r.FirstMessages["transport"] != want["transport"] || r.FirstMessages["timeout"] != "no answer within 1s" {
		t.Errorf("after merge: %q", r.FirstMessages)
	}
	clean := NewRecorder()
	clean.Record(verify.OK, 0, time.Millisecond)
	clean.RecordMessage(verify.OK, workload.ExpectAllow, verify.Outcome{Kind: verify.Decided, Allow: true})
	if clean.FirstMessages != nil {
		t.Errorf("an ok response left messages: %q", clean.FirstMessages)
	}
}

func TestRecorderMerge(t *testing.T) {
	a, b, all := NewRecorder(), NewRecorder(), NewRecorder()
	aRecs := append(repeat(50, record{verify.OK, 0, 250 * time.Microsecond}),
		record{verify.HTTPError, 400, time.Millisecond},
		record{verify.HTTPError, 503, 2 * time.Millisecond},
		record{verify.WrongDecision, 0, 300 * time.Microsecond})
	bRecs := append(repeat(30, record{verify.OK, 0, 1 * time.Millisecond}),
		record{verify.HTTPError, 400, 4 * time.Millisecond},
		record{verify.ExitError, 1, 40 * time.Millisecond},
		record{verify.OK, 0, 3 * time.Minute})
	for i := range 20 {
		bRecs = append(bRecs, record{verify.OK, 0, time.Duration(i+1) * 17 * time.Microsecond})
	}
	recordAll(a, aRecs)
	recordAll(b, bRecs)
	recordAll(all, aRecs)
	recordAll(all, bRecs)
	a.UnverifiedOK, b.UnverifiedOK = 3, 4
	a.Merge(b)

	if got, want := a.Requests(), uint64(len(aRecs)+len(bRecs)); got != want {
		t.Errorf("Requests() = %d, want %d", got, want)
	}
	if got := a.ErrorCount(); got != 5 {
		t.Errorf("ErrorCount() = %d, want 5", got)
	}
	if a.Counts != all.Counts {
		t.Errorf("Counts = %v, want %v", a.Counts, all.Counts)
	}
	want := map[string]uint64{"http_400": 2, "http_503": 1, "wrong_decision": 1, "exit_1": 1}
	if got := a.ErrorClasses(); !reflect.DeepEqual(got, want) {
		t.Errorf("ErrorClasses() = %v, want %v", got, want)
	}
	if a.UnverifiedOK != 7 {
		t.Errorf("UnverifiedOK = %d, want 7", a.UnverifiedOK)
	}
	if got, want := a.MeanOKNanos(), all.MeanOKNanos(); got != want {
		t.Errorf("MeanOKNanos() = %v after merge, want %v as if recorded in one", got, want)
	}
	for name, hs := range map[string][2]*hdrhistogram.Histogram{"ok": {a.OK, all.OK}, "errors": {a.Errors, all.Errors}} {
		t.Run(name, func(t *testing.T) {
			if !reflect.DeepEqual(hs[0].Distribution(), hs[1].Distribution()) {
				t.Errorf("merged histogram differs from one recorded in one piece")
			}
			if hs[0].TotalCount() != hs[1].TotalCount() {
				t.Errorf("count %d, want %d", hs[0].TotalCount(), hs[1].TotalCount())
			}
		})
	}
	okLive, errLive := a.Live()
	if okLive != all.Counts[verify.OK] || errLive != 5 {
		t.Errorf("Live() = %d, %d, want %d, 5", okLive, errLive, all.Counts[verify.OK])
	}
}

// TestRecorderMergeOptional: the histograms that exist only for some runs (connect times, server
// timers, open-loop schedule) are created on the receiving side when the other side has them.
func TestRecorderMergeOptional(t *testing.T) {
	plain := NewRecorder()
	other := NewOpenRecorder()
	other.RecordConnect(80_000)
	other.RecordConnect(0) // reused connection: not a connect
	other.RecordServer(2_000, 9_000)
	other.RecordServer(0, 0) // not reported
	other.RecordSend(true, 2*time.Millisecond, 2*time.Millisecond, 300*time.Microsecond, time.Millisecond)
	other.RecordSend(false, 10*time.Microsecond, 0, 0, time.Millisecond)
	other.Record(verify.OK, 200, 3*time.Millisecond)
	other.RecordUnsent(700 * time.Millisecond)
	plain.Merge(other)

	for _, tc := range []struct {
		name  string
		h     *hdrhistogram.Histogram
		count int64
	}{
		{"connect", plain.Connect, 1},
		{"server eval", plain.ServerEval, 1},
		{"server handler", plain.ServerHandler, 1},
		{"lateness", plain.Lateness, 2},
		{"uncorrected", plain.Uncorrected, 1},
		{"unsent", plain.Unsent, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.h == nil {
				t.Fatal("histogram not created by Merge")
			}
			if got := tc.h.TotalCount(); got != tc.count {
				t.Errorf("count %d, want %d", got, tc.count)
			}
		})
	}
	if plain.Late != 1 || plain.GeneratorLate != 1 || plain.Counts[verify.Unsent] != 1 {
		t.Errorf("Late = %d, GeneratorLate = %d, unsent %d; want 1 each", plain.Late, plain.GeneratorLate, plain.Counts[verify.Unsent])
	}
	// The corrected latency holds the ok response and the unsent send at its lower bound.
	if c := plain.Corrected(); c.TotalCount() != 2 || c.Max() < int64(690*time.Millisecond) {
		t.Errorf("corrected: %d values, max %d ns", c.TotalCount(), c.Max())
	}
	// Merging a recorder without them leaves them as they are.
	plain.Merge(NewRecorder())
	if plain.Connect.TotalCount() != 1 || plain.Late != 1 {
		t.Errorf("merging an empty recorder changed the optional figures")
	}
}

// TestRecordingAllocatesNothing: on the measured path, an ok response and a repeat of an error
// class already seen cost no allocation; only a class's first message does.
func TestRecordingAllocatesNothing(t *testing.T) {
	r := NewRecorderUpTo(2 * time.Minute)
	ok := verify.Outcome{Kind: verify.Decided, Allow: true}
	failed := verify.Outcome{Kind: verify.TransportFailure, Err: errors.New("connection reset")}
	r.Record(verify.Transport, 0, time.Millisecond)
	r.RecordMessage(verify.Transport, 0, failed)
	for i := range MismatchesKept {
		r.RecordMismatch(verify.WrongDecision, i, workload.ExpectDeny, ok)
	}
	for name, record := range map[string]func(){
		"ok": func() {
			r.Record(verify.OK, 0, 40*time.Microsecond)
			r.RecordMessage(verify.OK, workload.ExpectAllow, ok)
			r.RecordMismatch(verify.OK, 7, workload.ExpectAllow, ok)
		},
		"wrong decision, once the inputs kept are lower": func() {
			r.RecordMismatch(verify.WrongDecision, 5000, workload.ExpectDeny, ok)
		},
		"error class seen before": func() {
			r.Record(verify.Transport, 0, time.Millisecond)
			r.RecordMessage(verify.Transport, 0, failed)
		},
		"beyond the ceiling": func() { r.Record(verify.OK, 0, time.Hour) },
	} {
		if n := testing.AllocsPerRun(100, record); n != 0 {
			t.Errorf("%s: %v allocations per response, want 0", name, n)
		}
	}
}

// The inputs given a wrong decision are kept lowest first, each once, at most MismatchesKept of
// them; merging keeps the lowest of both, so the result names the same inputs whichever worker
// met them. Other classes are not mismatches.
func TestRecorderMismatches(t *testing.T) {
	wrong := func(r *Recorder, inputs ...int) {
		for _, i := range inputs {
			r.RecordMismatch(verify.WrongDecision, i, workload.ExpectAllow, verify.Outcome{Kind: verify.Decided})
		}
	}
	inputsOf := func(ms []Mismatch) []int {
		var out []int
		for _, m := range ms {
			if m.Expect != workload.ExpectAllow || m.Allow {
				t.Errorf("input %d: expect %s, allow %t; want expect allow, decided deny", m.Input, m.Expect, m.Allow)
			}
			out = append(out, m.Input)
		}
		return out
	}
	a, b := NewRecorder(), NewRecorder()
	wrong(a, 40, 3, 3, 17, 40)
	a.RecordMismatch(verify.Undefined, 1, workload.ExpectAllow, verify.Outcome{Kind: verify.NoResult})
	a.RecordMismatch(verify.OK, 2, workload.ExpectAllow, verify.Outcome{Kind: verify.Decided, Allow: true})
	if got := inputsOf(a.Mismatches); !reflect.DeepEqual(got, []int{3, 17, 40}) {
		t.Errorf("one worker: %v, want [3 17 40]", got)
	}
	for i := 100; i > 70; i-- { // more than are kept, highest first
		wrong(b, i)
	}
	wrong(b, 17, 5)
	a.Merge(b)
	want := []int{3, 5, 17, 40}
	for i := 71; len(want) < MismatchesKept; i++ {
		want = append(want, i)
	}
	if got := inputsOf(a.Mismatches); !reflect.DeepEqual(got, want) {
		t.Errorf("merged: %v\nwant %v", got, want)
	}
}
