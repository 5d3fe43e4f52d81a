package target

import (
	"testing"

	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/verify"
)

func TestDecisionFromOPAResponses(t *testing.T) {
	allow := verify.Outcome{Kind: verify.Decided, Allow: true}
	deny := verify.Outcome{Kind: verify.Decided, Allow: false}
	for _, tc := range []struct {
		body string
		want verify.Outcome
	}{
		{`{"result":true}`, allow},
		{`{"result": false, "decision_id": "x"}`, deny},
		{`{"metrics": {"timer_rego_query_eval_ns": 100}, "result": true}`, verify.Outcome{Kind: verify.Decided, Allow: true, ServerEvalNS: 100}},
		{`{}`, verify.Outcome{Kind: verify.NoResult}}, // OPA's answer for a path with no rule
		{`{"result":{"allow":true,"reasons":[]}}`, allow},
		{`{"result":{"allow":false}}`, deny},
		{`{"result":{"allow":"yes"}}`, verify.Outcome{Kind: verify.NotBoolean}},
		{`{"result":{}}`, verify.Outcome{Kind: verify.NotBoolean}},
		{`{"result":[1]}`, verify.Outcome{Kind: verify.NotBoolean}},
		{`{"result":"true"}`, verify.Outcome{Kind: verify.NotBoolean}},
		{`{"result":null}`, verify.Outcome{Kind: verify.NotBoolean}},
		{`{"result":tru`, verify.Outcome{Kind: verify.Malformed}},
		{`[true]`, verify.Outcome{Kind: verify.Malformed}},
		{``, verify.Outcome{Kind: verify.Malformed}},
	} {
		if got := newDecisionReader("result").read([]byte(tc.body)); !sameOutcome(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.body, got, tc.want)
		}
	}
}

func TestDecisionFromOPAEval(t *testing.T) {
	var p fastjson.Parser
	for _, tc := range []struct {
		out  string
		want verify.Outcome
	}{
		{`{"result":[{"expressions":[{"value":true,"text":"data.x.allow","location":{"row":1,"col":1}}]}]}`, verify.Outcome{Kind: verify.Decided, Allow: true}},
		{`{"result":[{"expressions":[{"value":false,"text":"data.x.allow"}]}]}`, verify.Outcome{Kind: verify.Decided}},
		{"{}\n", verify.Outcome{Kind: verify.NoResult}},
		{`{"result":[{"expressions":[]}]}`, verify.Outcome{Kind: verify.NoResult}},
		{`{"result":[{"expressions":[{"value":{"allow":true}}]}]}`, verify.Outcome{Kind: verify.Decided, Allow: true}},
		{`{"errors":[{"message":"x"}]}`, verify.Outcome{Kind: verify.NoResult}},
		{`panic: oops`, verify.Outcome{Kind: verify.Malformed}},
	} {
		if got := cliDecision(&p, []byte(tc.out)); !sameOutcome(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.out, got, tc.want)
		}
	}
}

func FuzzDecision(f *testing.F) {
	for _, s := range []string{`{"result":true}`, `{}`, `{"result":{"allow":false}}`, `{"result":[{"expressions":[{"value":true}]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p fastjson.Parser
		for _, o := range []verify.Outcome{newDecisionReader("result").read(b), cliDecision(&p, b)} {
			switch o.Kind {
			case verify.Decided, verify.NoResult, verify.NotBoolean, verify.Malformed:
			default:
				t.Fatalf("unexpected kind %d for %q", o.Kind, b)
			}
			if o.Kind != verify.Decided && o.Allow {
				t.Fatalf("allow set without a decision for %q", b)
			}
		}
	})
}

func TestDecisionCarriesServerTimers(t *testing.T) {
	got := newDecisionReader("result").read([]byte(`{"metrics":{"timer_rego_query_eval_ns":2500,"timer_server_handler_ns":9100},"result":false}`))
	want := verify.Outcome{Kind: verify.Decided, ServerEvalNS: 2500, ServerHandlerNS: 9100}
	if !sameOutcome(got, want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

func TestFillBody(t *testing.T) {
	in := []byte(`{"user": {"id": 7, "name": "ann"}, "action": "read", "big": 12345678901234567890}`)
	for _, tc := range []struct{ template, want string }{
		{"", string(in)},
		{`{"s": {{input.user.id}}, "a": {{ input.action }}}`, `{"s": 7, "a": "read"}`},
		{`{"all": {{input}}}`, `{"all": {"action":"read","big":12345678901234567890,"user":{"id":7,"name":"ann"}}}`},
		{`{"n": {{input.big}}}`, `{"n": 12345678901234567890}`},
	} {
		got, err := fillBody(tc.template, in)
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: %s %v, want %s", tc.template, got, err, tc.want)
		}
	}
	if _, err := fillBody(`{{input.user.missing}}`, in); err == nil {
		t.Error("a missing field was filled")
	}
}

func TestDecisionStatus(t *testing.T) {
	m, err := ParseDecisionStatus("200=allow, 403=deny")
	if err != nil || !m[200] || m[403] || len(m) != 2 {
		t.Errorf("%v %v", m, err)
	}
	for _, bad := range []string{"200", "200=yes", "99=allow", "x=deny"} {
		if _, err := ParseDecisionStatus(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
