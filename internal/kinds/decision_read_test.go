package kinds

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Test names in this file start with TestDecision/FuzzDecision: other files of the package
// belong to other people.

var (
	decidedAllow = verify.Outcome{Kind: verify.Decided, Allow: true}
	decidedDeny  = verify.Outcome{Kind: verify.Decided, Allow: false}
	noResult     = verify.Outcome{Kind: verify.NoResult}
	notBoolean   = verify.Outcome{Kind: verify.NotBoolean}
	notDocument  = verify.Outcome{Kind: verify.Malformed}
)

// sameOutcome compares outcomes apart from the wording of Err, which must be there exactly for
// the kinds that are not an answer from the engine's API.
func sameOutcome(got, want verify.Outcome) bool {
	wantErr := want.Kind == verify.Malformed || want.Kind == verify.EvalFailed
	if (got.Err != nil) != wantErr {
		return false
	}
	got.Err, want.Err = nil, nil
	return got == want
}

func TestDecisionReaderResponses(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       verify.Outcome
	}{
		{"true", `{"result":true}`, decidedAllow},
		{"false", `{"result":false}`, decidedDeny},
		{"false with a field after it", `{"result": false, "decision_id": "x"}`, decidedDeny},
		{"true with OPA's newline", "{\"result\":true}\n", decidedAllow},
		{"false with OPA's newline", "{\"result\":false}\n", decidedDeny},
		{"true after two newlines", "{\"result\":true}\n\n", decidedAllow},
		{"a newline alone", "\n", notDocument},
		{"with whitespace and other fields", " {\n  \"decision_id\": \"d1\",\n  \"result\": true\n}\n", decidedAllow},
		{"no result is undefined", `{}`, noResult},
		{"other fields but no result", `{"decision_id":"d1"}`, noResult},
		{"object with allow true", `{"result":{"allow":true}}`, decidedAllow},
		{"object with allow true and empty reasons", `{"result":{"allow":true,"reasons":[]}}`, decidedAllow},
		{"object with allow false", `{"result":{"allow":false}}`, decidedDeny},
		{"object with allow false and more", `{"result":{"allow":false,"reasons":["not owner"]}}`, decidedDeny},
		{"object with allow a string", `{"result":{"allow":"yes"}}`, notBoolean},
		{"object with allow a number", `{"result":{"allow":1}}`, notBoolean},
		{"object with allow null", `{"result":{"allow":null}}`, notBoolean},
		{"empty object", `{"result":{}}`, notBoolean},
		{"object without allow", `{"result":{"deny":true}}`, notBoolean},
		{"array", `{"result":[1]}`, notBoolean},
		{"array of a boolean", `{"result":[true]}`, notBoolean},
		{"string", `{"result":"true"}`, notBoolean},
		{"number", `{"result":1}`, notBoolean},
		{"null", `{"result":null}`, notBoolean},
		{"malformed", `{"result":tru`, notDocument},
		{"truncated", `{"result":true`, notDocument},
		{"trailing garbage", `{"result":true} x`, notDocument},
		{"empty body", ``, notDocument},
		{"html error page", `<html><body>502 Bad Gateway</body></html>`, notDocument},
		{"top-level array", `[{"result":true}]`, notDocument},
		{"top-level array of a boolean", `[true]`, notDocument},
		{"top-level boolean", `true`, notDocument},
		{"top-level string", `"result"`, notDocument},
		{"top-level null", `null`, notDocument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newDecisionReader("result").read([]byte(tc.body)); !sameOutcome(got, tc.want) {
				t.Errorf("read(%s) = %+v, want %+v", tc.body, got, tc.want)
			}
		})
	}
}

// TestDecisionReaderServerTimers: OPA's ?metrics=true timers ride along with any decision.
func TestDecisionReaderServerTimers(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       verify.Outcome
	}{
		{"both timers", `{"result":true,"metrics":{"timer_rego_query_eval_ns":1200,"timer_server_handler_ns":5400}}`,
			verify.Outcome{Kind: verify.Decided, Allow: true, ServerEvalNS: 1200, ServerHandlerNS: 5400}},
		{"eval timer alone, before the result", `{"metrics": {"timer_rego_query_eval_ns": 100}, "result": true}`,
			verify.Outcome{Kind: verify.Decided, Allow: true, ServerEvalNS: 100}},
		{"both timers before a deny", `{"metrics":{"timer_rego_query_eval_ns":2500,"timer_server_handler_ns":9100},"result":false}`,
			verify.Outcome{Kind: verify.Decided, ServerEvalNS: 2500, ServerHandlerNS: 9100}},
		{"undefined with timers", `{"metrics":{"timer_rego_query_eval_ns":800,"timer_server_handler_ns":3000}}`,
			verify.Outcome{Kind: verify.NoResult, ServerEvalNS: 800, ServerHandlerNS: 3000}},
		{"other timers only", `{"result":false,"metrics":{"timer_rego_input_parse_ns":10}}`, decidedDeny},
		{"metrics not an object", `{"result":false,"metrics":[1,2]}`, decidedDeny},
		{"timer not an integer", `{"result":true,"metrics":{"timer_rego_query_eval_ns":"fast"}}`, decidedAllow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newDecisionReader("result").read([]byte(tc.body)); !sameOutcome(got, tc.want) {
				t.Errorf("read(%s) = %+v, want %+v", tc.body, got, tc.want)
			}
		})
	}
}

// TestDecisionReaderOtherField: the document holding the decision is configurable.
func TestDecisionReaderOtherField(t *testing.T) {
	r := newDecisionReader("decision")
	for _, tc := range []struct {
		body string
		want verify.Outcome
	}{
		{`{"decision":true}`, decidedAllow},
		{`{"decision":{"allow":false}}`, decidedDeny},
		{`{"result":true}`, noResult},
	} {
		t.Run(tc.body, func(t *testing.T) {
			if got := r.read([]byte(tc.body)); !sameOutcome(got, tc.want) {
				t.Errorf("read(%s) = %+v, want %+v", tc.body, got, tc.want)
			}
		})
	}
}

// A served target's reader told where its answers name their version (WithVersionPath: OPA's
// bundle revision in its provenance) reads it beside the decision; an answer without it, even
// the exact {"result":true}, is malformed, not a decision judged without its version.
func TestDecisionReaderVersion(t *testing.T) {
	r := provenanceReader()
	if out := r.read([]byte(provenanceBody)); out.Kind != verify.Decided || !out.Allow || !out.Versioned || out.Version != 3 {
		t.Errorf("provenance: %+v, want an allow at version 3", out)
	}
	if out := r.read([]byte(`{"provenance":{"bundles":{"authzbench":{"revision":12}}},"result":false}`)); out.Kind != verify.Decided || out.Allow || out.Version != 12 {
		t.Errorf("a number: %+v, want a deny at version 12", out)
	}
	for _, rev := range []string{`"v3"`, `""`, `"3.5"`, `true`} {
		body := `{"provenance":{"bundles":{"authzbench":{"revision":` + rev + `}}},"result":true}`
		if out := r.read([]byte(body)); out.Kind != verify.Malformed || !strings.Contains(out.Err.Error(), "is not a whole number") {
			t.Errorf("revision %s: %+v, want malformed", rev, out)
		}
	}
	for _, body := range []string{`{"result":true}`, `{"provenance":{"bundles":{}},"result":false}`} {
		if out := r.read([]byte(body)); out.Kind != verify.Malformed || out.Err == nil || !strings.Contains(out.Err.Error(), "no version at /provenance/bundles/authzbench/revision") {
			t.Errorf("%s: %+v, want malformed for want of a version", body, out)
		}
	}
}

// TestDecisionReaderReuse: one reader serves a worker's every response; nothing of one
// response may leak into the next.
func TestDecisionReaderReuse(t *testing.T) {
	r := newDecisionReader("result")
	seq := []struct {
		body string
		want verify.Outcome
	}{
		{`{"result":true,"metrics":{"timer_rego_query_eval_ns":1,"timer_server_handler_ns":2}}`,
			verify.Outcome{Kind: verify.Decided, Allow: true, ServerEvalNS: 1, ServerHandlerNS: 2}},
		{`{}`, noResult},
		{`{"result":tru`, notDocument},
		{`{"result":{"allow":false}}`, decidedDeny},
		{`{"result":true}`, decidedAllow},
	}
	for round := range 3 {
		for i, s := range seq {
			if got := r.read([]byte(s.body)); !sameOutcome(got, s.want) {
				t.Errorf("round %d, response %d %s: %+v, want %+v", round, i, s.body, got, s.want)
			}
		}
	}
}

// FuzzDecision: neither reader panics on any body, each returns one of the kinds a response can
// have, and only a decision carries Allow.
func FuzzDecision(f *testing.F) {
	for _, s := range []string{
		`{"result":true}`, `{"result":false}`, `{}`, `{"result":{"allow":true}}`, `{"result":{"allow":"yes"}}`,
		`{"result":{}}`, `{"result":[1]}`, `{"result":tru`, `[true]`, `null`,
		`{"result":true,"metrics":{"timer_rego_query_eval_ns":1,"timer_server_handler_ns":2}}`,
		`{"result":[{"expressions":[{"value":true,"text":"data.x.allow","location":{"row":1,"col":1}}]}]}`,
		`{"result":[{"expressions":[{"value":true}]}]}`,
		`{"result":[{"expressions":[{"value":{"allow":false}}]}]}`,
		"{\"result\":true}\n", "{\"result\":false}\n", "{\"result\":true}\n\n", "\n", " {\"result\":true}",
		`{"decision":"deny","reasons":[],"errors":[]}`, `{"decision":"allow","reasons":["p"],"errors":[]}`,
	} {
		f.Add([]byte(s))
	}
	reader := newDecisionReader("result") // reused, as a worker reuses it
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, o := range []struct {
			who string
			out verify.Outcome
		}{{"read", reader.read(b)}} {
			switch o.out.Kind {
			case verify.Decided, verify.NoResult, verify.NotBoolean, verify.Malformed:
			default:
				t.Fatalf("%s(%q): kind %d is not one a response can have", o.who, b, o.out.Kind)
			}
			if o.out.Kind != verify.Decided && o.out.Allow {
				t.Fatalf("%s(%q): allow set without a decision", o.who, b)
			}
			if o.out.Status != 0 || o.out.ConnectNS != 0 {
				t.Fatalf("%s(%q): status or connect time from a body: %+v", o.who, b, o.out)
			}
		}
		// The exact bodies read without the parser decide as the parser does, whatever the body.
		for _, pair := range []struct{ fast, parsed *decisionReader }{
			{newDecisionReader("result"), &decisionReader{field: "result"}},
			{newAnswerReader(cedarAnswer()), &decisionReader{field: "decision", readDoc: cedarAnswer().Read}},
		} {
			if fast, parsed := pair.fast.read(b), pair.parsed.read(b); !sameOutcome(fast, parsed) || (fast.Err == nil) != (parsed.Err == nil) {
				t.Fatalf("%s reader on %q: %+v with the exact bodies, %+v parsed", pair.fast.field, b, fast, parsed)
			}
		}
		// Any body that is not a JSON object is malformed, never a decision, and says why.
		if v, err := fastjson.ParseBytes(b); err != nil || v.Type() != fastjson.TypeObject {
			if got := newDecisionReader("result").read(b); got.Kind != verify.Malformed || got.Err == nil {
				t.Fatalf("read(%q) = %+v for a body that is not a JSON object", b, got)
			}
		}
	})
}

// TestDecisionMessages: what a target says about a response that is not a decision names the
// problem and quotes the start of the body, cut at a character boundary.
func TestDecisionMessages(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes, cut to 160
	for _, tc := range []struct {
		name string
		out  verify.Outcome
		kind verify.Kind
		msg  string
	}{
		{"html page", newDecisionReader("result").read([]byte(`<html>502</html>`)), verify.Malformed, `the body is not JSON: <html>502</html>`},
		{"empty body", newDecisionReader("result").read(nil), verify.Malformed, "the body is not JSON: empty body"},
		{"escape sequences and lines", newDecisionReader("result").read([]byte("\x1b[2J<h1>\n  Bad\xffGateway\n</h1>\n")), verify.Malformed,
			"the body is not JSON: [2J<h1> Bad\uFFFDGateway </h1>"},
		{"indented JSON", statusOutcome(500, []byte("{\n  \"code\": \"internal_error\",\n  \"message\": \"x\"\n}\n")), verify.HTTPStatus,
			`status 500: { "code": "internal_error", "message": "x" }`},
		{"white space only", statusOutcome(502, []byte(" \r\n")), verify.HTTPStatus, "status 502: empty body"},
		{"array", newDecisionReader("result").read([]byte(`[true]`)), verify.Malformed, `the body is JSON but not an object: [true]`},
		{"cedar without a decision", newAnswerReader(cedarAnswer()).read([]byte(`{"result":true}`)), verify.Malformed, `no "decision" in the body: {"result":true}`},
		{"cedar with an evaluation error", newAnswerReader(cedarAnswer()).read([]byte(`{"decision":"deny","reasons":[],"errors":["policy0: entity does not have attribute"]}`)),
			verify.EvalFailed, "cedar evaluation error: policy0: entity does not have attribute"},
		{"status with a reason", statusOutcome(400, []byte(`{"code":"invalid_parameter"}`)), verify.HTTPStatus, `status 400: {"code":"invalid_parameter"}`},
		{"status with a long page", statusOutcome(502, []byte(long)), verify.HTTPStatus, "status 502: " + strings.Repeat("é", 80) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.out.Kind != tc.kind || tc.out.Err == nil || tc.out.Err.Error() != tc.msg {
				t.Errorf("%+v\nwant kind %d, message %s", tc.out, tc.kind, tc.msg)
			}
		})
	}
	// Cedar's answers with no errors are decisions.
	for body, allow := range map[string]bool{`{"decision":"allow","reasons":["p"],"errors":[]}`: true, `{"decision":"deny"}`: false} {
		if got := newAnswerReader(cedarAnswer()).read([]byte(body)); got != (verify.Outcome{Kind: verify.Decided, Allow: allow}) {
			t.Errorf("%s: %+v", body, got)
		}
	}
}

// TestDecisionGenericEndpoint: the http target against a fake server, one answer per input: a
// 200 whose body is not JSON, or has nothing at the decision path, is malformed_response with
// its body in the message; a 403 that is no decision document is http_403, not a deny; a 503's
// body is its message.
func TestDecisionGenericEndpoint(t *testing.T) {
	answers := []struct {
		status int
		body   string
		want   verify.Outcome
		msg    string
	}{
		{200, `{"allow":true}`, decidedAllow, ""},
		{200, `<html>maintenance</html>`, notDocument, `the body is not JSON: <html>maintenance</html>`},
		{403, `{"allow":false}`, decidedDeny, ""},
		{403, `Forbidden`, verify.Outcome{Kind: verify.HTTPStatus, Status: 403}, "status 403: Forbidden"},
		{200, `{"error":"no such tenant"}`, notDocument, `no value at /allow in the body: {"error":"no such tenant"}`},
		{403, `{"reason":"blocked"}`, verify.Outcome{Kind: verify.HTTPStatus, Status: 403}, `status 403: {"reason":"blocked"}`},
		{200, `{"allow":"DENY"}`, decidedDeny, ""},
		{200, `{"allow":null}`, notBoolean, ""},
		{503, `overloaded`, verify.Outcome{Kind: verify.HTTPStatus, Status: 503}, "status 503: overloaded"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ I int }
		json.NewDecoder(r.Body).Decode(&in) //nolint:errcheck // a bad body answers input 0
		w.WriteHeader(answers[in.I].status)
		io.WriteString(w, answers[in.I].body) //nolint:errcheck // the test reads what arrived
	}))
	defer srv.Close()
	wl := &workload.Workload{Name: "generic"}
	for i := range answers {
		wl.Inputs = append(wl.Inputs, workload.Input{JSON: []byte(fmt.Sprintf(`{"i":%d}`, i))})
	}
	tg, err := New("http", Common{Timeout: 5 * time.Second}, &HTTPConfig{URL: srv.URL, DecisionPath: "/allow"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), wl); err != nil {
		t.Fatal(err)
	}
	defer tg.Stop(context.Background())
	w := tg.Worker()
	defer closeWorker(w)
	for i, a := range answers {
		got := w.Decide(context.Background(), i)
		msg := ""
		if got.Err != nil {
			msg = got.Err.Error()
		}
		got.ConnectNS, got.Err = 0, nil
		if got != a.want || msg != a.msg {
			t.Errorf("%d %s: %+v %q, want %+v %q", a.status, a.body, got, msg, a.want, a.msg)
		}
	}
}

func closeWorker(d Decider) { CloseDecider(d) }

// cedarAnswer is how the Cedar server's answers read, as its engine registers it (main_test.go
// links Cedar into the test binary).
func cedarAnswer() engine.Answer { return engine.For("cedar").Answer() }

// TestDecisionReadingAllocatesNothing: once warm, reading a decision allocates nothing; only
// the error paths do, for their message.
func TestDecisionReadingAllocatesNothing(t *testing.T) {
	for name, tc := range map[string]struct {
		r    *decisionReader
		body string
	}{
		"opa":   {newDecisionReader("result"), `{"result":{"allow":true},"metrics":{"timer_rego_query_eval_ns":12}}`},
		"cedar": {newAnswerReader(cedarAnswer()), `{"decision":"deny","reasons":[],"errors":[]}`},
		// The revision, a string, read as the answer's version (--provenance).
		"opa provenance": {provenanceReader(), provenanceBody},
	} {
		body := []byte(tc.body)
		tc.r.read(body)
		if n := testing.AllocsPerRun(100, func() { tc.r.read(body) }); n != 0 {
			t.Errorf("%s: %v allocations per decision, want 0", name, n)
		}
	}
	// An error answer keeps a copy of its body and formats it only when its message is read.
	page := []byte(strings.Repeat("<p>Service Unavailable</p>\n", 100))
	if n := testing.AllocsPerRun(100, func() { statusOutcome(503, page) }); n > 2 {
		t.Errorf("an error status: %v allocations, want at most 2", n)
	}
}

// provenanceReader reads OPA's answers with their bundle's revision as the version.
func provenanceReader() *decisionReader {
	r := newDecisionReader("result")
	r.version, r.versionPath = jsonPointer("/provenance/bundles/authzbench/revision"), "/provenance/bundles/authzbench/revision"
	return r
}
