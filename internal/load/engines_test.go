package load

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
)

// The open loop has two engines: the goroutines call a target's deciders in process; the event
// loop (evloop_linux.go) drives plain keep-alive HTTP/1.1 deciders (kinds.PlainHTTP) over
// sockets it owns. The open-loop tests hold for both: each runs its fake target as it is (the
// goroutines serve it), and again behind an HTTP/1.1 front (the event loop serves it, where
// there is one), whose server asks the same fake target for every decision. The truth a test
// asserts is the fake target's, whichever engine brings it the requests.

// openEngine is one way to serve a test's target: serve returns the target the run is given.
type openEngine struct {
	name  string
	serve func(t *testing.T, target kinds.Target) kinds.Target
	// sender is the Schedule.Sender a run served this way records.
	sender string
}

var openEngines = []openEngine{
	{"goroutines", func(_ *testing.T, target kinds.Target) kinds.Target { return target }, SenderGoroutines},
	{"event loop", serveOverHTTP, loopSender()},
}

// loopSender is the sender of a run the event loop can serve: itself, where there is one.
func loopSender() string {
	if loopsSupported {
		return SenderEventLoop
	}
	return SenderGoroutines
}

// httpFront serves a fake target over HTTP/1.1 on loopback: GET /<worker>/<input> is answered
// with the outcome of that worker's decider for that input, as JSON. Its deciders are
// kinds.PlainHTTP, so the event loop serves the runs it is given; where the loop cannot (not
// Linux), their Decide sends the same request through httpload.Conn.
type httpFront struct {
	kinds.Target
	endpoint httpload.Endpoint
	mu       sync.Mutex
	workers  []kinds.Decider
	// decided counts Decide calls: none when the event loop served the run.
	decided atomic.Int64
}

// frontAnswer is an outcome as the front's server writes it.
type frontAnswer struct {
	Kind      verify.Kind
	Allow     bool
	Status    int
	HandlerNS int64
	EvalNS    int64
	Err       string
	NotSent   bool
	// Versioned and Version: the version of the world the answer was decided at (a run whose
	// world changes).
	Versioned bool
	Version   int64
}

// serveOverHTTP starts a front for target, stopped when the test ends; on Linux the test fails
// if any decision went through Decide rather than the event loop.
func serveOverHTTP(t *testing.T, target kinds.Target) kinds.Target {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &httpFront{Target: target, endpoint: httpload.Endpoint{Addr: l.Addr().String(), Host: l.Addr().String(), KeepAlive: true}}
	srv := &http.Server{Handler: http.HandlerFunc(f.answer)}
	go srv.Serve(l)
	t.Cleanup(func() {
		srv.Close()
		if n := f.decided.Load(); loopsSupported && n > 0 {
			t.Errorf("%d decisions went through Decide: the event loop did not serve the run", n)
		}
	})
	return f
}

func (f *httpFront) Worker() kinds.Decider {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.workers = append(f.workers, f.Target.Worker())
	return &frontDecider{f: f, worker: len(f.workers) - 1, conn: httpload.NewConn(f.endpoint)}
}

func (f *httpFront) answer(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	worker, err1 := strconv.Atoi(parts[0])
	input, err2 := strconv.Atoi(parts[len(parts)-1])
	f.mu.Lock()
	known := err1 == nil && err2 == nil && len(parts) == 2 && worker < len(f.workers)
	var d kinds.Decider
	if known {
		d = f.workers[worker]
	}
	f.mu.Unlock()
	if !known {
		http.Error(w, "want /<worker>/<input>", http.StatusNotFound)
		return
	}
	out := d.Decide(r.Context(), input)
	a := frontAnswer{Kind: out.Kind, Allow: out.Allow, Status: out.Status, HandlerNS: out.ServerHandlerNS, EvalNS: out.ServerEvalNS, NotSent: out.NotSent,
		Versioned: out.Versioned, Version: out.Version}
	if out.Err != nil {
		a.Err = out.Err.Error()
	}
	json.NewEncoder(w).Encode(a)
}

// frontDecider is one connection to the front, for one of its workers.
type frontDecider struct {
	f      *httpFront
	worker int
	conn   *httpload.Conn
}

func (d *frontDecider) request(i int) []byte {
	return httpload.EncodeRequest(d.f.endpoint, "GET", "/"+strconv.Itoa(d.worker)+"/"+strconv.Itoa(i), nil, nil)
}

// judge reads back the outcome the front's server wrote.
func (d *frontDecider) judge(status int, body []byte) verify.Outcome {
	if status != http.StatusOK {
		return verify.Outcome{Kind: verify.HTTPStatus, Status: status, Err: errors.New(string(body))}
	}
	var a frontAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return verify.Outcome{Kind: verify.Malformed, Err: err}
	}
	out := verify.Outcome{Kind: a.Kind, Allow: a.Allow, Status: a.Status, ServerHandlerNS: a.HandlerNS, ServerEvalNS: a.EvalNS, NotSent: a.NotSent,
		Versioned: a.Versioned, Version: a.Version}
	if a.Err != "" {
		out.Err = errors.New(a.Err)
	}
	return out
}

func (d *frontDecider) PlainHTTP() (kinds.HTTPExchange, bool) {
	return kinds.HTTPExchange{Endpoint: d.f.endpoint, Request: d.request, Judge: d.judge}, true
}

func (d *frontDecider) Decide(ctx context.Context, i int) verify.Outcome {
	d.f.decided.Add(1)
	status, body, err := d.conn.Do(ctx, d.request(i))
	if err != nil {
		return verify.Outcome{Kind: verify.TransportFailure, Err: err}
	}
	return d.judge(status, body)
}

func (d *frontDecider) Close() { d.conn.Close() }

// forEachEngine runs test once per open-loop engine, as a subtest named after it.
func forEachEngine(t *testing.T, test func(t *testing.T, e openEngine)) {
	for _, e := range openEngines {
		t.Run(e.name, func(t *testing.T) { test(t, e) })
	}
}
