package target

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/verify"
)

// Test names in this file start with TestDecision/FuzzDecision: other files of the package
// belong to other people.

var (
	decidedAllow = verify.Outcome{Kind: verify.Decided, Allow: true}
	decidedDeny  = verify.Outcome{Kind: verify.Decided, Allow: false}
	noResult     = verify.Outcome{Kind: verify.NoResult}
	notBoolean   = verify.Outcome{Kind: verify.NotBoolean}
	malformed    = verify.Outcome{Kind: verify.TransportFailure}
)

func TestDecisionReaderResponses(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       verify.Outcome
	}{
		{"true", `{"result":true}`, decidedAllow},
		{"false", `{"result":false}`, decidedDeny},
		{"with whitespace and other fields", " {\n  \"decision_id\": \"d1\",\n  \"result\": true\n}\n", decidedAllow},
		{"no result is undefined", `{}`, noResult},
		{"other fields but no result", `{"decision_id":"d1"}`, noResult},
		{"object with allow true", `{"result":{"allow":true}}`, decidedAllow},
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
		{"malformed", `{"result":tru`, malformed},
		{"truncated", `{"result":true`, malformed},
		{"trailing garbage", `{"result":true} x`, malformed},
		{"empty body", ``, malformed},
		{"html error page", `<html><body>502 Bad Gateway</body></html>`, malformed},
		{"top-level array", `[{"result":true}]`, malformed},
		{"top-level boolean", `true`, malformed},
		{"top-level string", `"result"`, malformed},
		{"top-level null", `null`, malformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newDecisionReader("result").read([]byte(tc.body)); got != tc.want {
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
		{"undefined with timers", `{"metrics":{"timer_rego_query_eval_ns":800,"timer_server_handler_ns":3000}}`,
			verify.Outcome{Kind: verify.NoResult, ServerEvalNS: 800, ServerHandlerNS: 3000}},
		{"other timers only", `{"result":false,"metrics":{"timer_rego_input_parse_ns":10}}`, decidedDeny},
		{"metrics not an object", `{"result":false,"metrics":[1,2]}`, decidedDeny},
		{"timer not an integer", `{"result":true,"metrics":{"timer_rego_query_eval_ns":"fast"}}`, decidedAllow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newDecisionReader("result").read([]byte(tc.body)); got != tc.want {
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
			if got := r.read([]byte(tc.body)); got != tc.want {
				t.Errorf("read(%s) = %+v, want %+v", tc.body, got, tc.want)
			}
		})
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
		{`{"result":tru`, malformed},
		{`{"result":{"allow":false}}`, decidedDeny},
		{`{"result":true}`, decidedAllow},
	}
	for round := range 3 {
		for i, s := range seq {
			if got := r.read([]byte(s.body)); got != s.want {
				t.Errorf("round %d, response %d %s: %+v, want %+v", round, i, s.body, got, s.want)
			}
		}
	}
}

// TestDecisionCLIEvalFixtures reads `opa eval --format json` output as OPA prints it:
// testdata/opa_eval holds it for true, false, undefined and an object decision, and
// TestDecisionCLIFixturesAreOPAOutput checks them against OPA's own encoding.
func TestDecisionCLIEvalFixtures(t *testing.T) {
	for _, tc := range []struct {
		file string
		want verify.Outcome
	}{
		{"allow.json", decidedAllow},
		{"deny.json", decidedDeny},
		{"undefined.json", noResult},
		{"object_allow.json", decidedAllow},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", "opa_eval", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var p fastjson.Parser
			if got := cliDecision(&p, out); got != tc.want {
				t.Errorf("cliDecision(%s) = %+v, want %+v", tc.file, got, tc.want)
			}
		})
	}
}

func TestDecisionCLIEvalShapes(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      verify.Outcome
	}{
		{"compact true", `{"result":[{"expressions":[{"value":true,"text":"data.x.allow","location":{"row":1,"col":1}}]}]}`, decidedAllow},
		{"compact false", `{"result":[{"expressions":[{"value":false,"text":"data.x.allow"}]}]}`, decidedDeny},
		{"undefined", "{}\n", noResult},
		{"empty result list", `{"result":[]}`, noResult},
		{"no expressions", `{"result":[{"expressions":[]}]}`, noResult},
		{"expression without a value", `{"result":[{"expressions":[{"text":"data.x.allow"}]}]}`, noResult},
		{"string value", `{"result":[{"expressions":[{"value":"allow"}]}]}`, notBoolean},
		{"object without allow", `{"result":[{"expressions":[{"value":{}}]}]}`, notBoolean},
		{"object with allow false", `{"result":[{"expressions":[{"value":{"allow":false}}]}]}`, decidedDeny},
		{"first result decides", `{"result":[{"expressions":[{"value":false}]},{"expressions":[{"value":true}]}]}`, decidedDeny},
		{"errors only", `{"errors":[{"message":"rego_type_error"}]}`, noResult},
		{"result not a list", `{"result":true}`, noResult},
		{"not JSON", "panic: runtime error\n", malformed},
		{"empty output", "", malformed},
		{"top-level array", `[{"expressions":[{"value":true}]}]`, malformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p fastjson.Parser
			if got := cliDecision(&p, []byte(tc.out)); got != tc.want {
				t.Errorf("cliDecision(%s) = %+v, want %+v", tc.out, got, tc.want)
			}
		})
	}
}

// TestDecisionCLIFixturesAreOPAOutput evaluates the fixture policy with OPA's library and
// encodes the result set as `opa eval --format json` does (an object whose "result" is the
// result set, omitted when empty, indented by two spaces), so the fixtures cannot drift from
// what OPA prints.
func TestDecisionCLIFixturesAreOPAOutput(t *testing.T) {
	policy := filepath.Join("testdata", "opa_eval", "fixture.rego")
	for _, tc := range []struct {
		file, query, user string
	}{
		{"allow.json", "data.fixture.allow", "ann"},
		{"deny.json", "data.fixture.allow", "bob"},
		{"undefined.json", "data.fixture.missing", "ann"},
		{"object_allow.json", "data.fixture.decision", "ann"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rs, err := rego.New(rego.Query(tc.query), rego.Load([]string{policy}, nil),
				rego.Input(map[string]any{"user": tc.user})).Eval(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			enc := json.NewEncoder(&got)
			enc.SetIndent("", "  ")
			if err := enc.Encode(struct {
				Result rego.ResultSet `json:"result,omitempty"`
			}{rs}); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", "opa_eval", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("OPA encodes\n%s\nfixture holds\n%s", got.Bytes(), want)
			}
		})
	}
}

// FuzzDecisionKinds: neither reader panics on any body, each returns one of the kinds a
// response can have, and only a decision carries Allow. (Run it alone with
// -fuzz '^FuzzDecisionKinds$': FuzzDecision in decision_test.go matches the shorter pattern.)
func FuzzDecisionKinds(f *testing.F) {
	for _, s := range []string{
		`{"result":true}`, `{"result":false}`, `{}`, `{"result":{"allow":true}}`, `{"result":{"allow":"yes"}}`,
		`{"result":{}}`, `{"result":[1]}`, `{"result":tru`, `[true]`, `null`,
		`{"result":true,"metrics":{"timer_rego_query_eval_ns":1,"timer_server_handler_ns":2}}`,
		`{"result":[{"expressions":[{"value":true,"text":"data.x.allow","location":{"row":1,"col":1}}]}]}`,
		`{"result":[{"expressions":[{"value":{"allow":false}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"allow.json", "undefined.json", "object_allow.json"} {
		if b, err := os.ReadFile(filepath.Join("testdata", "opa_eval", name)); err == nil {
			f.Add(b)
		}
	}
	reader := newDecisionReader("result") // reused, as a worker reuses it
	var cli fastjson.Parser
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, o := range []struct {
			who string
			out verify.Outcome
		}{{"read", reader.read(b)}, {"cliDecision", cliDecision(&cli, b)}} {
			switch o.out.Kind {
			case verify.Decided, verify.NoResult, verify.NotBoolean, verify.TransportFailure:
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
		// Any body that is not a JSON object is malformed, never a decision.
		if v, err := fastjson.ParseBytes(b); err != nil || v.Type() != fastjson.TypeObject {
			if got := newDecisionReader("result").read(b); got.Kind != verify.TransportFailure {
				t.Fatalf("read(%q) = %+v for a body that is not a JSON object", b, got)
			}
		}
	})
}
