package kinds

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	Register(Kind{Name: "http", Engine: "http", Placement: External, Order: 60,
		NewConfig: func() Config { return &HTTPConfig{} },
		New:       func(common Common, c Config) Target { return &httpTarget{common: common, cfg: c.(*HTTPConfig)} }})
}

// HTTPConfig describes any JSON authorization endpoint, such as a gateway's POST /v1/authorize:
// the http target's settings.
type HTTPConfig struct {
	URL     string   `yaml:"url"`     // the decision endpoint
	Method  string   `yaml:"method"`  // POST by default
	Headers []string `yaml:"headers"` // "Name: value"
	// Body is a template filled from each input before the clock starts: {{input}} is the whole
	// input document, {{input.a.b}} the JSON of one of its fields. Empty: the input itself.
	Body string `yaml:"body"`
	// The decision is read either from the body of a 2xx or 403 response, at a JSON pointer
	// (/decision, /result/allow) holding true/false or "allow"/"deny" ...
	DecisionPath string `yaml:"decision_path"`
	// ... or from the status alone: "200=allow,403=deny". Other statuses are http_<code>.
	DecisionStatus string `yaml:"decision_status"`
	// VersionPath, in a run with changes, is a JSON pointer to the version of the world the
	// answer was decided at (http_write.go).
	VersionPath string `yaml:"version_path"`
	// TLSClient is what the client trusts and presents to an https endpoint.
	TLSClient `yaml:",inline"`
	// HTTP2Config speaks HTTP/2 to it instead of HTTP/1.1.
	HTTP2Config `yaml:",inline"`
}

func init() {
	DeclareOption(Option{Key: "method", Flag: "method", Default: "POST", Help: "http target: request method"})
	DeclareOption(Option{Key: "headers", Flag: "header", Check: func(name string, v any) error {
		if hv, bad := badHeader(v.([]string)); bad {
			return fmt.Errorf("%s %q: want Name: value", name, hv)
		}
		return nil
	}, Help: "http target: request header \"Name: value\", repeatable"})
	DeclareOption(Option{Key: "body", Flag: "body", Check: func(name string, v any) error {
		if at, bad := badPlaceholder(v.(string)); bad {
			return fmt.Errorf("%s: %q is not a placeholder: want {{input}} or {{input.field}}, closed by }}", name, at)
		}
		return nil
	}, Help: "http target: body template; {{input}} is the input, {{input.user.id}} one field (default: the input itself)"})
	DeclareOption(Option{Key: "decision_path", Flag: "decision-path", Help: "http target: JSON pointer to the decision in a 2xx or 403 response (/allow, /result/decision): true/false or \"allow\"/\"deny\""})
	DeclareOption(Option{Key: "decision_status", Flag: "decision-status", Check: func(name string, v any) error {
		if _, err := ParseDecisionStatus(v.(string)); err != nil {
			return fmt.Errorf("%s %w", name, err)
		}
		return nil
	}, Help: "http target: decision from the status alone, such as 200=allow,403=deny"})
}

// RemoteURL is the endpoint: the http target always measures a server someone else runs.
func (c *HTTPConfig) RemoteURL() string { return c.URL }

// CheckWorkload finds an input the body template cannot be filled from.
func (c *HTTPConfig) CheckWorkload(w *workload.Workload) error { return CheckHTTP(*c, w) }

// Check finds a header, body template or status mapping that is wrong on its face.
func (c *HTTPConfig) Check() error {
	var errs []error
	if err := CheckHTTP(*c, nil); err != nil {
		errs = append(errs, err)
	}
	if c.DecisionStatus != "" {
		if _, err := ParseDecisionStatus(c.DecisionStatus); err != nil {
			errs = append(errs, fmt.Errorf("decision_status %w", err))
		}
	}
	errs = append(errs, checkVersionPath(*c))
	errs = append(errs, TLSConfig{Client: &c.TLSClient, URL: c.URL}.Validate())
	errs = append(errs, c.HTTP2Config.check()...)
	return errors.Join(errs...)
}

// ParseDecisionStatus reads "200=allow,403=deny".
func ParseDecisionStatus(s string) (map[int]bool, error) {
	m := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		code, verdict, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(code)
		if !ok || err != nil || n < 100 || n > 599 || (verdict != "allow" && verdict != "deny") {
			return nil, fmt.Errorf("%q: want STATUS=allow|deny pairs, such as 200=allow,403=deny", s)
		}
		m[n] = verdict == "allow"
	}
	return m, nil
}

// httpTarget drives a generic HTTP authorization endpoint that is already running.
type httpTarget struct {
	noWatch
	common   Common
	cfg      *HTTPConfig
	byStatus map[int]bool
	endpoint httpload.Endpoint
	requests [][]byte
	pointer  []string
	version  []string // the version path's tokens; nil without one
	// Over HTTP/2 (http2): the connections the workers share and the requests.
	h2         *h2Pool
	h2Requests []h2Request
}

var placeholder = regexp.MustCompile(`\{\{\s*(input(?:\.[A-Za-z0-9_-]+)*)\s*\}\}`)

func (t *httpTarget) Start(ctx context.Context, w *workload.Workload) error {
	h := *t.cfg
	if h.URL == "" {
		return optionError("url", func(n func(string) string) string {
			return fmt.Sprintf("the http target needs %s, the decision endpoint (http://127.0.0.1:8080/v1/authorize)", n("url"))
		})
	}
	if h.HTTP2 && t.common.NoReuse {
		return refuseNoReuse()
	}
	if (h.DecisionPath == "") == (h.DecisionStatus == "") {
		return optionError("decision_path", func(n func(string) string) string {
			return fmt.Sprintf("the http target needs one of %s (a JSON pointer such as /allow) or %s (200=allow,403=deny)",
				n("decision_path"), n("decision_status"))
		})
	}
	if h.DecisionStatus != "" {
		var err error
		if t.byStatus, err = ParseDecisionStatus(h.DecisionStatus); err != nil {
			return fmt.Errorf("decision status %w", err)
		}
	}
	if h.DecisionPath != "" {
		if !strings.HasPrefix(h.DecisionPath, "/") {
			return optionError("decision_path", func(n func(string) string) string {
				return fmt.Sprintf("%s %q: a JSON pointer starts with /, such as /result/allow", n("decision_path"), h.DecisionPath)
			})
		}
		for _, tok := range strings.Split(h.DecisionPath[1:], "/") {
			t.pointer = append(t.pointer, strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
		}
	}
	if err := checkVersionPath(h); err != nil {
		return err
	}
	if h.VersionPath != "" {
		t.version = jsonPointer(h.VersionPath)
	}
	e, path, err := httpload.ParseURL(h.URL)
	if err != nil {
		return err
	}
	e.Timeout, e.KeepAlive = t.common.timeout(), !t.common.NoReuse
	if e.TLS != nil {
		cfg, err := h.TLSClient.config()
		if err != nil {
			return err
		}
		e.TLS = withServerName(cfg, e.TLS.ServerName)
	}
	t.endpoint = e
	method := h.Method
	if method == "" {
		method = "POST"
	}
	if err := CheckHTTP(h, w); err != nil {
		return err
	}
	headers := []httpload.Header{{Name: "Content-Type", Value: "application/json"}}
	h2Headers := http.Header{"Content-Type": {"application/json"}}
	for _, hv := range h.Headers {
		name, value, _ := strings.Cut(hv, ":")
		headers = append(headers, httpload.Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
		h2Headers.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	bodies := make([][]byte, len(w.Inputs))
	for i, in := range w.Inputs {
		bodies[i], _ = fillBody(h.Body, in.JSON)
	}
	if h.HTTP2 {
		if t.h2Requests, err = newH2Requests(method, h.URL, h2Headers, bodies); err != nil {
			return err
		}
		t.h2 = newH2Pool(h.HTTP2Config.connections(), e.TLS)
	} else {
		t.requests = make([][]byte, len(bodies))
		for i, body := range bodies {
			t.requests[i] = httpload.EncodeRequest(e, method, path, headers, body)
		}
	}
	return probe(ctx, h.URL, bodies[0], t.common.timeout(), e.TLS)
}

// badHeader is the first header that is not "Name: value".
func badHeader(headers []string) (string, bool) {
	for _, hv := range headers {
		name, _, ok := strings.Cut(hv, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return hv, true
		}
	}
	return "", false
}

// badPlaceholder is where a body template holds a "{{" that opens no placeholder: what is left
// once its placeholders are taken out must hold none, since it would be sent as written, and a
// typo would pass for a body.
func badPlaceholder(body string) (string, bool) {
	rest := placeholder.ReplaceAllString(body, "")
	at := strings.Index(rest, "{{")
	if at < 0 {
		return "", false
	}
	return truncate(rest[at:], 30), true
}

// CheckHTTP finds what is wrong with the http target's headers and body template, for every
// input of w (nil: the template's syntax alone), so it can be reported before any load starts.
func CheckHTTP(h HTTPConfig, w *workload.Workload) error {
	if hv, bad := badHeader(h.Headers); bad {
		return optionError("headers", func(n func(string) string) string {
			return fmt.Sprintf("%s %q: want Name: value", n("headers"), hv)
		})
	}
	if at, bad := badPlaceholder(h.Body); bad {
		return optionError("body", func(n func(string) string) string {
			return fmt.Sprintf("%s: %q is not a placeholder: want {{input}} or {{input.field}}, closed by }}", n("body"), at)
		})
	}
	if w == nil {
		return nil
	}
	for i, in := range w.Inputs {
		if _, err := fillBody(h.Body, in.JSON); err != nil {
			where := in.Source
			if where == "" {
				where = fmt.Sprintf("workload %s input %d", w.Name, i+1)
			}
			return optionError("body", func(n func(string) string) string {
				return fmt.Sprintf("%s, %s: %v", n("body"), where, err)
			})
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// fillBody replaces each {{input...}} with the JSON of that part of the input.
func fillBody(template string, input []byte) ([]byte, error) {
	if template == "" {
		return input, nil
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var failed error
	out := placeholder.ReplaceAllStringFunc(template, func(m string) string {
		ref := placeholder.FindStringSubmatch(m)[1]
		v := doc
		for _, key := range strings.Split(ref, ".")[1:] {
			obj, ok := v.(map[string]any)
			if !ok {
				failed = fmt.Errorf("%s: the input has no field %q", ref, key)
				return m
			}
			if v, ok = obj[key]; !ok {
				failed = fmt.Errorf("%s: the input has no field %q", ref, key)
				return m
			}
		}
		b, err := json.Marshal(v)
		if err != nil {
			failed = err
		}
		return string(b)
	})
	return []byte(out), failed
}

func (t *httpTarget) Worker() Decider {
	w := &genericWorker{conn: httpload.NewConn(t.endpoint), requests: t.requests, pointer: t.pointer,
		path: t.cfg.DecisionPath, byStatus: t.byStatus, version: t.version, versionPath: t.cfg.VersionPath}
	if t.h2 != nil {
		client, spoke1 := t.h2.take()
		return &h2Worker{client: client, spoke1: spoke1, timeout: t.common.timeout(), requests: t.h2Requests, judge: w.judge}
	}
	return w
}

type genericWorker struct {
	conn     *httpload.Conn
	requests [][]byte
	pointer  []string
	path     string // the pointer as given, for messages
	byStatus map[int]bool
	parser   fastjson.Parser
	// version is the version path's tokens, versionPath as given; nil without one.
	version     []string
	versionPath string
}

func (w *genericWorker) Decide(ctx context.Context, i int) verify.Outcome {
	return withConnectTimes(w.decide(ctx, i), w.conn)
}

func (w *genericWorker) decide(ctx context.Context, i int) verify.Outcome {
	status, body, err := w.conn.Do(ctx, w.requests[i])
	if err != nil {
		return failedOutcome(w.conn, err)
	}
	return w.judge(status, body)
}

// judge reads the decision from an answer's status and body, whatever protocol brought it.
func (w *genericWorker) judge(status int, body []byte) verify.Outcome {
	if w.byStatus != nil {
		if allow, ok := w.byStatus[status]; ok {
			return verify.Outcome{Kind: verify.Decided, Allow: allow}
		}
		return statusOutcome(status, body)
	}
	// A 403 commonly carries a deny in its body; any other non-2xx status is an error, a 401
	// above all (the harness's credentials were refused, which decides nothing).
	if (status < 200 || status > 299) && status != 403 {
		return statusOutcome(status, body)
	}
	v, err := w.parser.ParseBytes(body)
	if err != nil {
		if status == 403 {
			return statusOutcome(status, body) // a refusal, not a deny in a decision document
		}
		return malformed("the body is not JSON", body)
	}
	dv := v.Get(w.pointer...)
	if dv == nil {
		// Nothing where the decision should be: the body is not the endpoint's decision
		// document (an error object, another API's answer).
		if status == 403 {
			return statusOutcome(status, body)
		}
		return malformed("no value at "+w.path+" in the body", body)
	}
	if w.version != nil {
		return versioned(pointerDecision(dv), v, w.version, w.versionPath, body)
	}
	return pointerDecision(dv)
}

// pointerDecision reads true/false, or the strings allow/deny (any case), as a decision.
func pointerDecision(v *fastjson.Value) verify.Outcome {
	if v.Type() == fastjson.TypeString {
		switch strings.ToLower(string(v.GetStringBytes())) {
		case "allow", "permit", "allowed":
			return verify.Outcome{Kind: verify.Decided, Allow: true}
		case "deny", "denied", "forbid":
			return verify.Outcome{Kind: verify.Decided, Allow: false}
		}
		return verify.Outcome{Kind: verify.NotBoolean}
	}
	return decisionOf(v)
}

func (w *genericWorker) Close() { w.conn.Close() }

// Reconnects counts requests that went out again on a new connection because the server had
// closed the kept-alive one.
func (w *genericWorker) Reconnects() int64 { return w.conn.Reconnects }

var _ interface {
	Closer
	Reconnector
} = (*genericWorker)(nil)

func (t *httpTarget) Info() Info {
	info := Info{Engine: "http", Mode: "endpoint", URL: t.cfg.URL, External: true, Connections: t.common.Workers}
	if t.h2 != nil {
		info.HTTP2, info.Connections = true, len(t.h2.clients)
	}
	if t.endpoint.TLS != nil {
		info.TLS = clientTLSInfo(&t.cfg.TLSClient)
	}
	return info
}

func (t *httpTarget) Stop(context.Context) error {
	t.h2.close()
	return nil
}
