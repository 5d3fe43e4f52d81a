package kinds

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/verify"
)

func init() {
	DeclareOption(Option{Key: "version_path", Flag: "version-path", Help: "http target, with --changes: JSON pointer to the version of the world an answer was decided at (a whole number: 0 before any change, k after the k-th), judged by it exactly"})
}

// jsonPointer splits a JSON pointer (/a/b) into its unescaped tokens.
func jsonPointer(p string) []string {
	var out []string
	for _, tok := range strings.Split(p[1:], "/") {
		out = append(out, strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
	}
	return out
}

// checkVersionPath refuses a version path that is no JSON pointer, or one beside a decision
// read from the status alone (with no body to find it in).
func checkVersionPath(h HTTPConfig) error {
	if h.VersionPath == "" {
		return nil
	}
	if !strings.HasPrefix(h.VersionPath, "/") {
		return optionError("version_path", func(n func(string) string) string {
			return fmt.Sprintf("%s %q: a JSON pointer starts with /, such as /version", n("version_path"), h.VersionPath)
		})
	}
	if h.DecisionStatus != "" {
		return optionError("version_path", func(n func(string) string) string {
			return fmt.Sprintf("%s reads the version from the answer's body, and %s reads the decision from its status alone: give %s instead",
				n("version_path"), n("decision_status"), n("decision_path"))
		})
	}
	return nil
}

// versioned reads the version an answer names, at the version path, into a decision read from
// the same body; an answer without a whole number there is malformed, as one without its
// decision is.
func versioned(out verify.Outcome, v *fastjson.Value, pointer []string, path string, body []byte) verify.Outcome {
	if out.Kind != verify.Decided || pointer == nil {
		return out
	}
	vv := v.Get(pointer...)
	if vv == nil {
		return malformed("no version at "+path+" in the body", body)
	}
	var n int64
	var ok bool
	if vv.Type() == fastjson.TypeString {
		// Read in place: OPA's revision is a string, on every answer of a run that asks for it.
		n, ok = wholeNumber(vv.GetStringBytes())
	} else {
		var err error
		n, err = vv.Int64()
		ok = err == nil
	}
	if !ok {
		return malformed("the version at "+path+" is not a whole number", body)
	}
	out.Versioned, out.Version = true, n
	return out
}

// wholeNumber reads decimal digits, an optional minus sign before them, without allocating.
func wholeNumber(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// WritesRequests: the http target's writes are the changes' own requests (RequestWriter).
func (t *httpTarget) WritesRequests() {}

// Writer sends each change's request to the target's host: any authorization service's writes.
func (t *httpTarget) Writer() (change.Applier, error) {
	base, err := url.Parse(t.cfg.URL)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	if base.Scheme == "https" {
		cfg, err := t.cfg.TLSClient.config()
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = cfg
		if cfg == nil {
			tr.TLSClientConfig = &tls.Config{}
		}
	}
	headers := http.Header{"Content-Type": {"application/json"}}
	for _, hv := range t.cfg.Headers {
		name, value, _ := strings.Cut(hv, ":")
		headers.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return &httpWriter{client: &http.Client{Transport: tr}, base: base, headers: headers}, nil
}

type httpWriter struct {
	client  *http.Client
	base    *url.URL
	headers http.Header
}

// Apply sends the change's request; a 2xx acknowledges it, anything else is an error of its
// class (http_<code>, timeout, transport).
func (w *httpWriter) Apply(ctx context.Context, _ int, c change.Change) change.Ack {
	r := c.Request
	if r == nil {
		return change.Ack{Class: "refused", Err: errors.New("the change has no request for the http target")}
	}
	target := r.Path
	if strings.HasPrefix(target, "/") {
		u := *w.base
		u.Path, u.RawPath, u.RawQuery = "", "", ""
		target = u.String() + r.Path
	}
	var body io.Reader
	if len(r.Body) > 0 {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, target, body)
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	req.Header = w.headers.Clone()
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	return SendWrite(w.client, req)
}

// SendWrite sends one write and says what became of it: a 2xx acknowledges it; anything else
// is an error of its class (http_<code>, timeout, transport), its message the server's words.
func SendWrite(client *http.Client, req *http.Request) change.Ack {
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return change.Ack{Class: "timeout", Err: err}
		}
		return change.Ack{Class: "transport", Err: err}
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return change.Ack{Class: "http_" + strconv.Itoa(resp.StatusCode),
			Err: fmt.Errorf("%s %s: %s: %s", req.Method, req.URL, resp.Status, truncate(strings.TrimSpace(string(answer)), 200))}
	}
	return change.Ack{}
}

// WriteClient is an HTTP client for writes to the server reached (a run whose world changes):
// it trusts and presents what the decisions' connections do.
func (s *Server) WriteClient() *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	if s.clientTLS != nil {
		host := s.url
		if u, err := url.Parse(s.url); err == nil {
			host = u.Hostname()
		}
		tr.TLSClientConfig = withServerName(s.clientTLS, host)
	}
	return &http.Client{Transport: tr}
}
