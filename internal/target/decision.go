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
}

func newDecisionReader(field string) *decisionReader { return &decisionReader{field: field} }

func (d *decisionReader) read(body []byte) verify.Outcome {
	v, err := d.parser.ParseBytes(body)
	if err != nil || v.Type() != fastjson.TypeObject {
		return verify.Outcome{Kind: verify.TransportFailure}
	}
	out := decisionOf(v.Get(d.field))
	if m := v.Get("metrics"); m != nil {
		out.ServerEvalNS = m.GetInt64("timer_rego_query_eval_ns")
		out.ServerHandlerNS = m.GetInt64("timer_server_handler_ns")
	}
	return out
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
