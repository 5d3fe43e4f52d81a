// Package decisionserver is the HTTP side of the small decision servers authzbench runs for
// engines that ship none of their own as a Go module (Cedar's, Casbin's): one JSON document in
// and one out per request over net/http, built alike so that comparing the engines' served
// modes compares the engines, not the plumbing. The engine says how a request is read and
// decided (Decide); the handler, the health endpoint, the errors' form, the server's own timers
// and the process's flags and shutdown are here.
//
// It knows no engine: an engine's package builds its server on it, never the reverse.
package decisionserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
)

// HealthPath is where every decision server answers readiness: 200 {}.
const HealthPath = "/health"

// Decide decides one request. body is its document as read; Decide appends the answer's
// members to answer (the answer object without its braces: `"allow":true`) and returns how
// long the engine's decision alone took, the timer_eval_ns of ?metrics=true. An error is a
// request the engine cannot read, answered 400 with its message; a decision the engine fails
// to reach is an answer of the engine's own form, not an error here.
type Decide func(body []byte, answer *bytes.Buffer) (eval time.Duration, err error)

// Handler answers POST path with decide, GET /health with {}, and anything else 404, every
// refusal as {"error": "..."}; a body over maxBody bytes is refused. With ?metrics=true, an
// answer adds the server's own timers in ns: {"metrics": {"timer_eval_ns": ...,
// "timer_server_handler_ns": ...}}, as OPA's REST API does.
func Handler(path string, maxBody int64, decide Decide) http.Handler {
	h := &handler{path: path, maxBody: maxBody, decide: decide}
	h.exchanges.New = func() any { return new(exchange) }
	return h
}

type handler struct {
	path      string
	maxBody   int64
	decide    Decide
	exchanges sync.Pool
}

// exchange is one request's buffers, reused: the body as read and the answer written, apart,
// so that a decision may read its body while its answer is written.
type exchange struct{ body, answer bytes.Buffer }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case h.path:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			WriteError(w, http.StatusMethodNotAllowed, "use POST")
			return
		}
		h.serveDecision(w, r)
	case HealthPath:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}\n")
	default:
		WriteError(w, http.StatusNotFound, "no such endpoint; decisions are at POST "+h.path)
	}
}

func (h *handler) serveDecision(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	x := h.exchanges.Get().(*exchange)
	defer h.exchanges.Put(x)
	x.body.Reset()
	x.answer.Reset()
	if _, err := x.body.ReadFrom(http.MaxBytesReader(w, r.Body, h.maxBody)); err != nil {
		WriteError(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	x.answer.WriteByte('{')
	eval, err := h.decide(x.body.Bytes(), &x.answer)
	if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	if r.URL.RawQuery != "" && strings.Contains(r.URL.RawQuery, "metrics=true") {
		x.answer.WriteString(`,"metrics":{"timer_eval_ns":`)
		x.answer.WriteString(strconv.FormatInt(eval.Nanoseconds(), 10))
		x.answer.WriteString(`,"timer_server_handler_ns":`)
		x.answer.WriteString(strconv.FormatInt(time.Since(start).Nanoseconds(), 10))
		x.answer.WriteByte('}')
	}
	x.answer.WriteString("}\n")
	w.Header().Set("Content-Type", "application/json")
	w.Write(x.answer.Bytes())
}

// WithWrites answers POST path with apply, given the request's body: 204 once it is applied (a
// run whose world changes counts the write acknowledged then, so apply returns only once the next
// decision sees it), 400 with its error otherwise; every other request goes to decisions.
func WithWrites(decisions http.Handler, path string, maxBody int64, apply func(body []byte) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			decisions.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			WriteError(w, http.StatusMethodNotAllowed, "use POST")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			WriteError(w, http.StatusBadRequest, "read body: "+err.Error())
			return
		}
		if err := apply(body); err != nil {
			WriteError(w, http.StatusBadRequest, err.Error())
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// WriteJSONString writes s as a JSON string.
func WriteJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always encodes
	buf.Write(b)
}

// WriteError answers status with {"error": msg}.
func WriteError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var buf bytes.Buffer
	buf.WriteString(`{"error":`)
	WriteJSONString(&buf, msg)
	buf.WriteString("}\n")
	w.Write(buf.Bytes())
}

// ParseFlags parses a server's arguments with fs, which writes to stderr. A mistake is one line
// on stderr, the error first, since whoever started the server reads its first error line. ok
// is false when the server is not to start, code then its exit status: 0 after --help, 2 for a
// mistake or an argument that is no flag.
func ParseFlags(fs *pflag.FlagSet, args []string, stderr io.Writer, name string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0, false
		}
		fmt.Fprintf(stderr, "%s: %v (see authzbench %s --help)\n", name, err, name)
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments %q\n", name, fs.Args())
		return 2, false
	}
	return 0, true
}

// Serve serves srv on l until ctx ends (the process's SIGINT or SIGTERM, by the caller's
// signal.NotifyContext), then shuts it down, giving the requests in flight 2 s. Over TLS when
// srv has a TLS configuration: ServeTLS, not a TLS listener of our own, offers HTTP/2 by ALPN
// as OPA's server does. A server shut down returns nil.
func Serve(ctx context.Context, srv *http.Server, l net.Listener) error {
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	serve := srv.Serve
	if srv.TLSConfig != nil {
		serve = func(l net.Listener) error { return srv.ServeTLS(l, "", "") }
	}
	if err := serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
