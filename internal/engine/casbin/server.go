package casbin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	casbinv3 "github.com/casbin/casbin/v3"
	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/engine"
)

// Casbin ships no server as a Go module (casbin-server, its gRPC service, is not on the module
// proxy), so to measure Casbin behind a network hop, as OPA's REST server and the Cedar server
// are measured, authzbench serves it itself: "authzbench casbin-server", a process of its own
// that casbin/server starts on a free loopback port, probes and stops by PID. It is built like
// the Cedar server, net/http with one JSON document in and one out per request, so that the
// modes compare engines, not plumbing:
//
//	POST /v1/enforce  ["alice", "data1", "read"]   (the request's values, as the model defines them)
//	→ 200 {"allow":true} | {"allow":false} | {"error": "..."} (an Enforce that failed)
//	GET  /health      → 200 {}

// ServerArg is the first argument that turns an authzbench (or test) process into the Casbin
// server.
const ServerArg = "casbin-server"

// ServerPath is where the server takes decisions.
const ServerPath = "/v1/enforce"

// maxRequestBody bounds a request body: a request's values are rarely more than a few KB.
const maxRequestBody = 1 << 20

func init() {
	engine.RegisterCommand(engine.Command{
		Arg:   ServerArg,
		Use:   ServerArg + " --model FILE [--policy FILE] [--addr HOST:PORT]",
		Short: "Serve a Casbin model and policy over HTTP (Casbin ships no server module; the casbin/server target runs this)",
		Long: `Casbin ships no server as a Go module, so authzbench serves a Casbin SyncedEnforcer itself, in its
own process, over a small JSON API: POST ` + ServerPath + ` with the request's values as a JSON array,
in the order of the model's request definition, answered {"allow":true} or {"allow":false}
({"error": "..."} when Enforce fails). The casbin/server target starts it; run it yourself to
put your own load tool in front of Casbin.`,
		Example: `  authzbench casbin-server --model model.conf --policy policy.csv
  curl -s localhost:8180` + ServerPath + ` -d '["alice", "data1", "read"]'`,
		Main: ServerMain,
	})
}

// ServerMain parses the server's flags, loads the model and policy and serves until SIGINT or
// SIGTERM. What Casbin refuses is its first line on stderr, and exit status 2.
func ServerMain(args []string, stderr io.Writer) int {
	fs := pflag.NewFlagSet("authzbench "+ServerArg, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	modelPath := fs.String("model", "", "Casbin model `file` (.conf)")
	policyPath := fs.String("policy", "", "Casbin policy `file` (.csv, one rule a line); none for a model whose matcher reads no policy")
	addr := fs.String("addr", "127.0.0.1:8180", "listen on this address")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: authzbench %s --model FILE [--policy FILE] [--addr HOST:PORT]

Serves a Casbin model and policy (a SyncedEnforcer) over HTTP:
  POST %s  ["alice", "data1", "read"]  (the request's values, as the model's request definition orders them)
    -> {"allow":true} | {"allow":false} | {"error": "..."}
  GET  /health -> 200
Add ?metrics=true to a decision request for the server's own timers (enforce, handler) in ns.

Flags:
`, ServerArg, ServerPath)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v (see authzbench %s --help)\n", ServerArg, err, ServerArg)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments %q\n", ServerArg, fs.Args())
		return 2
	}
	if *modelPath == "" {
		fmt.Fprintf(stderr, "%s: give the model with --model FILE (see authzbench %s --help)\n", ServerArg, ServerArg)
		return 2
	}
	files, err := ReadFiles(*modelPath, *policyPath)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ServerArg, err)
		return 2
	}
	e, err := NewEnforcer(files)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ServerArg, err)
		return 2
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ServerArg, err)
		return 1
	}
	srv := &http.Server{Handler: Handler(e), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "%s: %v\n", ServerArg, err)
		return 1
	}
	return 0
}

// Handler answers decision and health requests with the enforcer e, shared by every request as
// a service shares one.
func Handler(e *casbinv3.SyncedEnforcer) http.Handler {
	h := &handler{enforcer: e, size: len(RequestTokens(e.GetModel()))}
	h.buffers.New = func() any { return new(bytes.Buffer) }
	return h
}

type handler struct {
	enforcer *casbinv3.SyncedEnforcer
	size     int // the request definition's values
	buffers  sync.Pool
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case ServerPath:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, "use POST")
			return
		}
		h.enforce(w, r)
	case "/health":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}\n")
	default:
		writeError(w, http.StatusNotFound, "no such endpoint; decisions are at POST "+ServerPath)
	}
}

func (h *handler) enforce(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	buf := h.buffers.Get().(*bytes.Buffer)
	defer h.buffers.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxRequestBody)); err != nil {
		writeError(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	vals, err := ParseRequest(buf.Bytes())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if len(vals) != h.size {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%d request values, and the model's request definition has %d", len(vals), h.size))
		return
	}
	enforceStart := time.Now()
	allowed, err := h.enforcer.Enforce(vals...)
	enforceNS := time.Since(enforceStart).Nanoseconds()

	buf.Reset()
	switch {
	case err != nil:
		buf.WriteString(`{"error":`)
		writeJSONString(buf, err.Error())
	case allowed:
		buf.WriteString(allowBody[:len(allowBody)-1])
	default:
		buf.WriteString(denyBody[:len(denyBody)-1])
	}
	if r.URL.RawQuery != "" && strings.Contains(r.URL.RawQuery, "metrics=true") {
		buf.WriteString(`,"metrics":{"timer_eval_ns":`)
		buf.WriteString(strconv.FormatInt(enforceNS, 10))
		buf.WriteString(`,"timer_server_handler_ns":`)
		buf.WriteString(strconv.FormatInt(time.Since(start).Nanoseconds(), 10))
		buf.WriteByte('}')
	}
	buf.WriteString("}\n")
	w.Header().Set("Content-Type", "application/json")
	w.Write(buf.Bytes())
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always encodes
	buf.Write(b)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var buf bytes.Buffer
	buf.WriteString(`{"error":`)
	writeJSONString(&buf, msg)
	buf.WriteString("}\n")
	w.Write(buf.Bytes())
}
