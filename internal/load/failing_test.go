package load

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// decisionServer is a raw TCP server answering every request with {"allow":true}. It closes a
// connection right after its closeAfter-th answer (0: never), without Connection: close, as
// servers with a limit on requests per connection do. kill closes the listener and every
// connection: a server that died.
func decisionServer(t *testing.T, closeAfter int) (url string, kill func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	kill = func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for c := range conns {
			c.Close()
		}
	}
	t.Cleanup(kill)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for answered := 1; ; answered++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\n{\"allow\":true}")
					if answered == closeAfter {
						return
					}
				}
			}()
		}
	}()
	return "http://" + l.Addr().String() + "/v1/authorize", kill
}

// startHTTP starts the generic http target against url, reading the decision at /allow.
func startHTTP(t *testing.T, url string, timeout time.Duration) (kinds.Target, []workload.Input) {
	t.Helper()
	tg, err := kinds.New("http", kinds.Common{Timeout: timeout}, &kinds.HTTPConfig{URL: url, DecisionPath: "/allow"})
	if err != nil {
		t.Fatal(err)
	}
	w := &workload.Workload{Name: "one", Inputs: []workload.Input{{JSON: []byte(`{"user":"alice"}`), Expect: workload.ExpectAllow}}}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Stop(context.Background()) })
	return tg, w.Inputs
}

// A server that closes every connection after its 5th answer, without saying so, costs
// reconnects and no errors (67 of 400 requests were transport errors before).
func TestServerClosingKeptAliveConnectionsCostsNoErrors(t *testing.T) {
	url, _ := decisionServer(t, 5)
	tg, in := startHTTP(t, url, 5*time.Second)
	out := Spec{Workers: 4, Requests: 400, MaxTime: time.Minute, Timeout: 5 * time.Second}.Run(context.Background(), tg, in, nil)
	if out.Stopped != nil {
		t.Fatal(out.Stopped)
	}
	rec := out.Recorder
	if rec.Counts[verify.OK] != 400 || rec.Counts[verify.Transport] != 0 {
		t.Errorf("ok %d, transport %d; want 400 ok and no transport errors", rec.Counts[verify.OK], rec.Counts[verify.Transport])
	}
	// 100 requests a worker, 5 a connection: 20 connections each, of which 19 replace one the
	// server closed.
	if rec.Reconnects != 4*19 {
		t.Errorf("reconnects %d, want %d", rec.Reconnects, 4*19)
	}
}

// The same server in open loop, where the http target's connections are the event loop's
// (on Linux): a connection the server closed after its 5th answer is found closed, while idle
// or by the next request, which goes out on a new connection and counts as a reconnect; no
// request fails.
func TestOpenLoopServerClosingKeptAliveConnectionsCostsNoErrors(t *testing.T) {
	url, _ := decisionServer(t, 5)
	tg, in := startHTTP(t, url, 5*time.Second)
	out := Spec{Rate: 400, Connections: 4, Duration: time.Second, Timeout: 5 * time.Second}.Run(context.Background(), tg, in, nil)
	if out.Stopped != nil {
		t.Fatal(out.Stopped)
	}
	rec := out.Recorder
	if rec.Counts[verify.OK] != 400 || rec.Counts[verify.Transport] != 0 {
		t.Errorf("ok %d, transport %d; want 400 ok and no transport errors", rec.Counts[verify.OK], rec.Counts[verify.Transport])
	}
	// 400 requests, 5 a connection: 80 connections, of which all but the first on each
	// connection used (1 to 4) replace one the server closed; a connection that carried a count
	// not a multiple of 5 opened one more.
	if rec.Reconnects < 76 || rec.Reconnects > 83 {
		t.Errorf("reconnects %d, want 76 to 83", rec.Reconnects)
	}
}

// A --url server that dies mid-run ends the run with the reason and what was measured, after a
// bounded number of connects (146,365 transport errors in 6 s before).
func TestServerThatStopsAnsweringEndsTheRun(t *testing.T) {
	// Both drivers end the run the same way; the open loop's sends keep coming due while the
	// server is gone, so without the watch it would run its whole minute.
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"closed loop", Spec{Workers: 4, Duration: time.Minute, Timeout: 200 * time.Millisecond}},
		{"open loop", Spec{Rate: 200, Connections: 4, Duration: time.Minute, Timeout: 200 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, kill := decisionServer(t, 0)
			tg, in := startHTTP(t, url, 200*time.Millisecond)
			time.AfterFunc(300*time.Millisecond, kill)
			start := time.Now()
			out := tc.spec.Run(context.Background(), tg, in, nil)
			took := time.Since(start)
			if out.Stopped == nil || !strings.Contains(out.Stopped.Error(), "no answer from the target") ||
				!strings.Contains(out.Stopped.Error(), "connection refused") {
				t.Fatalf("stopped: %v; want the run ended, saying the target stopped answering and why", out.Stopped)
			}
			if took > 20*time.Second {
				t.Errorf("the run went on for %s after the server died at 0.3 s (silence allowed: 2 s)", took)
			}
			rec := out.Recorder
			if rec.Counts[verify.OK] == 0 {
				t.Error("the answers from before the server died were not kept")
			}
			// 4 connections, each waiting 10 ms doubling to 1 s between connects.
			if n := rec.Counts[verify.Transport]; n == 0 || n > 200 {
				t.Errorf("%d transport errors in %s; want a few, at a pace bounded by the backoff", n, took)
			}
		})
	}
}

// notSentTarget never gets a request out: its timeout passes before anything is sent.
type notSentTarget struct{ fakeTarget }

func (f *notSentTarget) Worker() kinds.Decider { return f }
func (f *notSentTarget) Decide(context.Context, int) verify.Outcome {
	return verify.Outcome{Kind: verify.TimedOut, NotSent: true, Err: errors.New("not sent: the 1ns timeout passed")}
}

func TestNothingSentIsNoRequestAndEndsTheRun(t *testing.T) {
	start := time.Now()
	out := Spec{Workers: 2, Duration: time.Minute}.Run(context.Background(), &notSentTarget{}, inputs(2), nil)
	if out.Stopped == nil || !strings.Contains(out.Stopped.Error(), "nothing could be sent") ||
		!strings.Contains(out.Stopped.Error(), "1ns timeout") {
		t.Fatalf("stopped: %v", out.Stopped)
	}
	if n := out.Recorder.Requests(); n != 0 {
		t.Errorf("%d requests recorded; none was sent", n)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s to give up", took)
	}
}

// --timeout holds for an engine inside authzbench too: at 1 ns every decision is a timeout,
// and the run ends with the reason instead of counting timeouts for a minute. (OPA's:
// internal/engine/opa's TestInprocTimeoutIsHonoured.)
func TestInprocTimeoutIsHonoured(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cedar/inproc"} {
		t.Run(name, func(t *testing.T) {
			tg, err := kinds.New(name, kinds.Common{TempDir: t.TempDir(), Timeout: time.Nanosecond}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := tg.Start(context.Background(), w); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out := Spec{Workers: 2, Duration: time.Minute, Timeout: time.Nanosecond}.Run(context.Background(), tg, w.Inputs, nil)
			rec := out.Recorder
			if rec.Counts[verify.Timeout] == 0 || rec.Counts[verify.OK] != 0 {
				t.Errorf("timeouts %d, ok %d; want every decision a timeout", rec.Counts[verify.Timeout], rec.Counts[verify.OK])
			}
			if out.Stopped == nil || !strings.HasPrefix(out.Stopped.Error(), "the timeout is too short") || !strings.Contains(out.Stopped.Error(), "1ns timeout") {
				t.Errorf("stopped: %v; want the run ended saying first that the 1ns timeout is too short", out.Stopped)
			}
			if took, n := time.Since(start), rec.Requests(); took > 20*time.Second || n > 200_000 {
				t.Errorf("%d requests in %s before giving up", n, took)
			}
		})
	}
}

// When every failure since the last answer ran out of time, the timeout is named first, before
// the target: an in-process engine given 1ns is cut off, it never stops answering. Failures of
// the transport, or a mix, still say the target stopped answering.
func TestWatcherNamesTheTimeoutWhenEveryFailureTimedOut(t *testing.T) {
	start := time.Now()
	for _, tc := range []struct {
		name             string
		failed, timedOut uint64
		want             string
	}{
		{"every failure a timeout", 10_000, 10_000, "the timeout is too short, or the target stopped answering: the 10000 requests since the last answer all ran past the 200ms timeout"},
		{"some refused", 10_000, 9_000, "no answer from the target"},
		{"none a timeout", 10_000, 0, "no answer from the target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := new(Attempts)
			w := watcher{all: []*Attempts{a}, silence: 2 * time.Second, timeout: 200 * time.Millisecond, lastAnswerAt: start}
			a.failed.Store(tc.failed)
			a.timedOut.Store(tc.timedOut)
			if err := w.check(start); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err %v, want one starting %q", err, tc.want)
			}
		})
	}
}

// The rules that end a run, on counts set by hand: what ends it, and what must not.
func TestWatcherRules(t *testing.T) {
	start := time.Now()
	for _, tc := range []struct {
		name                      string
		answered, failed, notSent uint64
		after                     time.Duration
		want                      string // in the error; "" for none
	}{
		{"slow target, requests still in flight", 0, 0, 0, time.Hour, ""},
		{"answers keep coming", 5, 3, 0, time.Hour, ""},
		{"failures, but not silent for long", 0, 50, 0, time.Second, ""},
		{"silent past the limit while requests fail", 0, 50, 0, 3 * time.Second, "no answer from the target for 3s"},
		{"10,000 failures in a row", 0, 10_000, 0, 0, "the 10000 requests since the last answer"},
		{"990 of 1,000 never sent", 0, 10, 990, 0, "990 of 1000 attempts ended before a byte left"},
		{"98 % never sent is not almost all", 20, 0, 980, 0, ""},
		{"too few attempts to judge", 0, 0, 999, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := new(Attempts)
			w := watcher{all: []*Attempts{a}, silence: 2 * time.Second, lastAnswerAt: start}
			if err := w.check(start); err != nil {
				t.Fatalf("before anything happened: %v", err)
			}
			a.answered.Store(tc.answered)
			a.failed.Store(tc.failed)
			a.notSent.Store(tc.notSent)
			err := w.check(start.Add(tc.after))
			if tc.answered > 0 && err == nil {
				err = w.check(start.Add(tc.after + time.Millisecond)) // an answer just seen resets the clock
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("stopped: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}
