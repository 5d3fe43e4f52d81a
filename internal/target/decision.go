package target

import (
	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/verify"
)

// decisionReader extracts a decision from an OPA-style JSON response: {"result": true|false},
// or {"result": {"allow": true|false, ...}}; no "result" means undefined. It reuses its parser,
// so reading a response allocates nothing once warm. One per worker.
type decisionReader struct {
	parser fastjson.Parser
	field  string // the document holding the decision, "result" for OPA's data API
	// cedar reads the Cedar server's {"decision": "allow"|"deny"} instead.
	cedar bool
}

func newDecisionReader(field string) *decisionReader { return &decisionReader{field: field} }

// newCedarDecisionReader reads the answers of authzbench's Cedar server.
func newCedarDecisionReader() *decisionReader { return &decisionReader{field: "decision", cedar: true} }

func (d *decisionReader) read(body []byte) verify.Outcome {
	v, err := d.parser.ParseBytes(body)
	if err != nil || v.Type() != fastjson.TypeObject {
		return verify.Outcome{Kind: verify.TransportFailure}
	}
	var out verify.Outcome
	if d.cedar {
		out = cedarDecisionOf(v.Get(d.field))
	} else {
		out = decisionOf(v.Get(d.field))
	}
	if m := v.Get("metrics"); m != nil {
		out.ServerEvalNS = m.GetInt64("timer_rego_query_eval_ns")
		if out.ServerEvalNS == 0 {
			out.ServerEvalNS = m.GetInt64("timer_eval_ns")
		}
		out.ServerHandlerNS = m.GetInt64("timer_server_handler_ns")
	}
	return out
}

// cedarDecisionOf reads Cedar's decision string; anything but "allow" or "deny" is not a
// decision.
func cedarDecisionOf(v *fastjson.Value) verify.Outcome {
	if v == nil {
		return verify.Outcome{Kind: verify.NoResult}
	}
	switch string(v.GetStringBytes()) {
	case "allow":
		return verify.Outcome{Kind: verify.Decided, Allow: true}
	case "deny":
		return verify.Outcome{Kind: verify.Decided, Allow: false}
	}
	return verify.Outcome{Kind: verify.NotBoolean}
}

// decisionOf reads a decision value: a boolean, or an object with a boolean "allow".
func decisionOf(v *fastjson.Value) verify.Outcome {
	if v == nil {
		return verify.Outcome{Kind: verify.NoResult}
	}
	switch v.Type() {
	case fastjson.TypeTrue:
		return verify.Outcome{Kind: verify.Decided, Allow: true}
	case fastjson.TypeFalse:
		return verify.Outcome{Kind: verify.Decided, Allow: false}
	case fastjson.TypeObject:
		allow := v.Get("allow")
		if allow == nil {
			return verify.Outcome{Kind: verify.NotBoolean}
		}
		if t := allow.Type(); t == fastjson.TypeTrue || t == fastjson.TypeFalse {
			return verify.Outcome{Kind: verify.Decided, Allow: t == fastjson.TypeTrue}
		}
	}
	return verify.Outcome{Kind: verify.NotBoolean}
}

// decisionOfValue reads a decision from a decoded Go value (the in-process engine's result).
func decisionOfValue(v any) verify.Outcome {
	switch x := v.(type) {
	case bool:
		return verify.Outcome{Kind: verify.Decided, Allow: x}
	case map[string]any:
		if b, ok := x["allow"].(bool); ok {
			return verify.Outcome{Kind: verify.Decided, Allow: b}
		}
	}
	return verify.Outcome{Kind: verify.NotBoolean}
}
