package opa

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

var (
	decidedAllow = verify.Outcome{Kind: verify.Decided, Allow: true}
	decidedDeny  = verify.Outcome{Kind: verify.Decided, Allow: false}
	noResult     = verify.Outcome{Kind: verify.NoResult}
	notBoolean   = verify.Outcome{Kind: verify.NotBoolean}
	notDocument  = verify.Outcome{Kind: verify.Malformed}
)

// sameOutcome compares outcomes apart from the wording of Err, which must be there exactly for
// the kinds that are not an answer from the engine.
func sameOutcome(got, want verify.Outcome) bool {
	wantErr := want.Kind == verify.Malformed || want.Kind == verify.EvalFailed
	if (got.Err != nil) != wantErr {
		return false
	}
	got.Err, want.Err = nil, nil
	return got == want
}

// TestCLIEvalFixtures reads `opa eval --format json` output as OPA prints it:
// testdata/opa_eval holds it for true, false, undefined and an object decision, and
// TestCLIFixturesAreOPAOutput checks them against OPA's own encoding.
func TestCLIEvalFixtures(t *testing.T) {
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
			if got := cliDecision(&p, out); !sameOutcome(got, tc.want) {
				t.Errorf("cliDecision(%s) = %+v, want %+v", tc.file, got, tc.want)
			}
		})
	}
}

func TestCLIEvalShapes(t *testing.T) {
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
		{"object with allow true", `{"result":[{"expressions":[{"value":{"allow":true}}]}]}`, decidedAllow},
		{"object with allow false", `{"result":[{"expressions":[{"value":{"allow":false}}]}]}`, decidedDeny},
		{"first result decides", `{"result":[{"expressions":[{"value":false}]},{"expressions":[{"value":true}]}]}`, decidedDeny},
		{"errors only", `{"errors":[{"message":"rego_type_error"}]}`, noResult},
		{"result not a list", `{"result":true}`, noResult},
		{"not JSON", "panic: runtime error\n", notDocument},
		{"empty output", "", notDocument},
		{"top-level array", `[{"expressions":[{"value":true}]}]`, notDocument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p fastjson.Parser
			if got := cliDecision(&p, []byte(tc.out)); !sameOutcome(got, tc.want) {
				t.Errorf("cliDecision(%s) = %+v, want %+v", tc.out, got, tc.want)
			}
		})
	}
}

// TestCLIFixturesAreOPAOutput evaluates the fixture policy with OPA's library and
// encodes the result set as `opa eval --format json` does (an object whose "result" is the
// result set, omitted when empty, indented by two spaces), so the fixtures cannot drift from
// what OPA prints.
func TestCLIFixturesAreOPAOutput(t *testing.T) {
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

// FuzzCLIDecision: whatever opa eval prints, reading it never panics, gives one of the kinds an
// answer can have, and only a decision carries Allow.
func FuzzCLIDecision(f *testing.F) {
	for _, s := range []string{
		`{"result":[{"expressions":[{"value":true,"text":"data.x.allow","location":{"row":1,"col":1}}]}]}`,
		`{"result":[{"expressions":[{"value":true}]}]}`, `{"result":[{"expressions":[{"value":{"allow":false}}]}]}`,
		`{}`, `{"result":true}`, `{"result":[]}`, `[true]`, `null`, "panic: oops\n",
	} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"allow.json", "undefined.json", "object_allow.json"} {
		if b, err := os.ReadFile(filepath.Join("testdata", "opa_eval", name)); err == nil {
			f.Add(b)
		}
	}
	var p fastjson.Parser // reused, as a worker reuses it
	f.Fuzz(func(t *testing.T, b []byte) {
		out := cliDecision(&p, b)
		switch out.Kind {
		case verify.Decided, verify.NoResult, verify.NotBoolean, verify.Malformed:
		default:
			t.Fatalf("cliDecision(%q): kind %d is not one an answer can have", b, out.Kind)
		}
		if out.Kind != verify.Decided && out.Allow {
			t.Fatalf("cliDecision(%q): allow set without a decision", b)
		}
		if out.Status != 0 || out.ConnectNS != 0 {
			t.Fatalf("cliDecision(%q): status or connect time from output: %+v", b, out)
		}
	})
}

// What opa eval printed that is no JSON is quoted in the message, which says so.
func TestCLIDecisionMessage(t *testing.T) {
	out := cliDecision(&fastjson.Parser{}, []byte("panic: oops\n"))
	if out.Kind != verify.Malformed || out.Err == nil || out.Err.Error() != "opa eval printed no JSON: panic: oops" {
		t.Errorf("%+v, want malformed, saying opa eval printed no JSON and quoting it", out)
	}
}

// An evaluation error of the in-process engine is eval_error with OPA's words, never a decision
// and never a transport failure: here, a conflict between two complete rules.
func TestInprocEvalErrors(t *testing.T) {
	w := &workload.Workload{Name: "conflict", Query: "data.p.allow",
		Policies: []workload.File{{Name: "p.rego", Content: []byte("package p\nallow := true if input.a\nallow := false if input.b\n")}},
		Inputs:   []workload.Input{{JSON: []byte(`{"a": true}`)}, {JSON: []byte(`{"a": true, "b": true}`)}}}
	tg, err := kinds.New("opa/inproc", kinds.Common{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	defer tg.Stop(context.Background())
	d := tg.Worker()
	if got := d.Decide(context.Background(), 0); got != decidedAllow {
		t.Errorf("first input: %+v, want allow", got)
	}
	got := d.Decide(context.Background(), 1)
	if got.Kind != verify.EvalFailed || got.Err == nil || !strings.Contains(got.Err.Error(), "eval_conflict_error") {
		t.Errorf("second input: %+v, want an evaluation error with eval_conflict_error", got)
	}
}
