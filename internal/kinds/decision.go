package kinds

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/verify"
)

// decisionReader extracts a decision from an OPA-style JSON response: {"result": true|false},
// or {"result": {"allow": true|false, ...}}; no "result" means undefined (OPA's answer for a
// rule that is not defined). A body that is not a JSON object is no decision document at all:
// malformed. It reuses its parser, so reading a decision allocates nothing once warm; only the
// error paths allocate, for their message. One per worker.
type decisionReader struct {
	parser fastjson.Parser
	field  string // the document holding the decision, "result" for OPA's data API
	// readDoc, when set, reads the decision from the whole document instead: an engine's own
	// answer (engine.Answer.Read).
	readDoc func(*fastjson.Value) verify.Outcome
	// allowBody and denyBody are the two answers nearly every response is, byte for byte
	// ({"result":true} and {"result":false}, without the newline OPA ends them with): a body
	// equal to one of them is that decision, read without the parser. Anything else, a byte
	// of white space more or a field of timers, goes to the parser, so the fast path decides
	// nothing the parser would decide otherwise.
	allowBody, denyBody string
	// version, when set, is a JSON pointer's tokens to the version of the world the answer
	// names (versionPath as given): OPA's bundle revision in its provenance.
	version     []string
	versionPath string
}

func newDecisionReader(field string) *decisionReader {
	return &decisionReader{field: field, allowBody: `{"` + field + `":true}`, denyBody: `{"` + field + `":false}`}
}

// newAnswerReader reads the answers of an engine's server as the engine says they read.
func newAnswerReader(a engine.Answer) *decisionReader {
	return &decisionReader{field: a.Field, readDoc: a.Read, allowBody: a.AllowBody, denyBody: a.DenyBody}
}

func (d *decisionReader) read(body []byte) verify.Outcome {
	// The exact bodies first: a comparison of 16 bytes against a parse, which at tens of
	// thousands of answers a second is a visible share of the generator's CPU.
	exact := body
	if n := len(exact); n > 0 && exact[n-1] == '\n' {
		exact = exact[:n-1]
	}
	// Compared in place (string(exact) == s does not copy; a switch on it would, past 32 bytes).
	if len(exact) > 0 && d.version == nil {
		if string(exact) == d.allowBody {
			return verify.Outcome{Kind: verify.Decided, Allow: true}
		}
		if string(exact) == d.denyBody {
			return verify.Outcome{Kind: verify.Decided, Allow: false}
		}
	}
	v, err := d.parser.ParseBytes(body)
	if err != nil {
		return malformed("the body is not JSON", body)
	}
	if v.Type() != fastjson.TypeObject {
		return malformed("the body is JSON but not an object", body)
	}
	var out verify.Outcome
	if d.readDoc != nil {
		out = d.readDoc(v)
		switch {
		case out.Kind == verify.Malformed && out.Err != nil:
			return malformed(out.Err.Error(), body)
		case out.Kind == verify.EvalFailed:
			return out
		}
	} else {
		out = decisionOf(v.Get(d.field))
	}
	if d.version != nil {
		if out = versioned(out, v, d.version, d.versionPath, body); out.Kind == verify.Malformed {
			return out
		}
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

// malformed is a 2xx answer that is no decision document; its message quotes the body's start.
func malformed(why string, body []byte) verify.Outcome {
	return verify.Outcome{Kind: verify.Malformed, Err: newBodyError(why, 0, body)}
}

// statusOutcome is a non-2xx answer; its message is the start of the body, where servers put
// their reason (OPA's {"code": "invalid_parameter", ...}, a proxy's error page).
func statusOutcome(status int, body []byte) verify.Outcome {
	return verify.Outcome{Kind: verify.HTTPStatus, Status: status, Err: newBodyError("", status, body)}
}

// bodyError is an answer that was no decision, with the start of its body. It keeps the bytes
// (the connection reuses its buffer) and formats them only when its message is read, once per
// error class, so a storm of error responses costs one small copy each.
type bodyError struct {
	why    string
	status int // when why is empty: "status 503"
	head   []byte
	more   bool // the body went on past head
}

// bodyErrorKeep is how much of a body an error keeps: collapsing white space rarely shrinks
// text fourfold, so the message still has its 160 bytes.
const bodyErrorKeep = 4 * bodyMessageMax

const bodyMessageMax = 160

func newBodyError(why string, status int, body []byte) *bodyError {
	n := min(len(body), bodyErrorKeep)
	return &bodyError{why: why, status: status, head: append([]byte(nil), body[:n]...), more: n < len(body)}
}

func (e *bodyError) Error() string {
	why := e.why
	if why == "" {
		why = "status " + strconv.Itoa(e.status)
	}
	return why + ": " + bodyStart(e.head, e.more)
}

// bodyStart is the start of a body as one line of at most 160 bytes, cut at a character
// boundary: runs of white space (indented JSON, an HTML page's lines) become one space, control
// characters (a terminal's escape sequences among them) too, and invalid UTF-8 is replaced.
// more says the body went on past head.
func bodyStart(head []byte, more bool) string {
	text := strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(string(head), "\uFFFD"))), " ")
	if text == "" && !more {
		return "empty body"
	}
	if len(text) <= bodyMessageMax && !more {
		return text
	}
	if len(text) > bodyMessageMax {
		cut := bodyMessageMax
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	return text + "…"
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

// What an engine's own kinds read decisions with, where its answers are not a server's JSON
// documents (an in-process result, a command's output).

// DecisionOf reads a decision from a JSON value: a boolean, or an object with a boolean
// "allow"; nil is no decision (NoResult).
func DecisionOf(v *fastjson.Value) verify.Outcome { return decisionOf(v) }

// DecisionOfValue reads a decision from a decoded Go value (an in-process engine's result): a
// boolean, or a map with a boolean "allow".
func DecisionOfValue(v any) verify.Outcome { return decisionOfValue(v) }

// Malformed is an answer that is no decision document, for the reason why; its message quotes
// the start of body.
func Malformed(why string, body []byte) verify.Outcome { return malformed(why, body) }

// BodyError is an error saying why, then the start of body (a command's output), formatted only
// when the message is read.
func BodyError(why string, body []byte) error { return newBodyError(why, 0, body) }
