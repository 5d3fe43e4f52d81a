package opa

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/verify"
)

// runLogged starts kind on the first n inputs of rbac with decision logging cfg, asks every
// input rounds times, stops it and returns its decision log record.
func runLogged(t *testing.T, kind string, cfg kinds.Config, n, rounds int) *result.DecisionLogs {
	t.Helper()
	return runLoggedOn(t, kind, "rbac", cfg, n, rounds)
}

// runLoggedOn is runLogged on the built-in workload name.
func runLoggedOn(t *testing.T, kind, name string, cfg kinds.Config, n, rounds int) *result.DecisionLogs {
	t.Helper()
	w := builtin(t, name, n)
	tg, err := kinds.New(kind, kinds.Common{TempDir: t.TempDir()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Stop(context.Background()) })
	d := tg.Worker()
	for range rounds {
		for i, in := range w.Inputs {
			out := d.Decide(context.Background(), i)
			if c := verify.Classify(in.Expect, out); c != verify.OK {
				t.Fatalf("input %d: %s (%v)", i+1, verify.Name(c, out.Status), out.Err)
			}
		}
	}
	kinds.CloseDecider(d)
	if err := tg.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := tg.Info().DecisionLogs
	if r == nil || r.Account == nil {
		t.Fatalf("no decision log account: %+v", r)
	}
	t.Logf("%s", r.Account)
	return r
}

func TestSDKDecisionLogsHealthy(t *testing.T) {
	cfg := &SDKConfig{DecisionLogConfig{DecisionLogs: logsService}}
	r := runLogged(t, "opa/sdk", cfg, 50, 2)
	a := r.Account
	if a.Logged != 100 || a.Received+a.StillBuffered != 100 || a.Missing != 0 || a.Duplicated != 0 || a.Error != "" {
		t.Errorf("account %s (error %q)", a, a.Error)
	}
}

// Against the log service set to drop (OPA's own limits), fail and stall, every decision the
// SDK logged is accounted for exactly: nothing missing, nothing twice, and each where OPA's
// counters and the service say it went.
func TestSDKDecisionLogsAccounted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   DecisionLogConfig
		check func(t *testing.T, a *result.DecisionLogAccount)
	}{
		// OPA's event buffer holds 10 decisions and uploads a minute apart, so nearly all but
		// the last 10 are dropped, and OPA counts each; the 10 are uploaded by the final flush.
		// (OPA's uploader makes its first upload as it starts, which a loaded machine may run
		// after the first decisions: those few are received too.)
		{"drop by buffer", DecisionLogConfig{DecisionLogs: logsService, Reporting: eventBufferOf10},
			func(t *testing.T, a *result.DecisionLogAccount) { checkDroppedByBuffer(t, a) }},
		// At 5 decisions a second, the limiter's burst of 5 passes and the rest are dropped.
		{"drop by rate", DecisionLogConfig{DecisionLogs: logsService, Reporting: []string{"max_decisions_per_second=5", "min_delay_seconds=60", "max_delay_seconds=120"}},
			func(t *testing.T, a *result.DecisionLogAccount) {
				if a.DroppedRateLimit < 80 || a.Received+a.DroppedRateLimit != 100 {
					t.Errorf("want most dropped by rate limit and the rest received, got %s", a)
				}
			}},
		// A service answering 500 receives nothing: every decision is still in OPA's buffer
		// after its final flush, retried in vain, and is drained after it.
		{"fail", DecisionLogConfig{DecisionLogs: logsService, Service: string(ServiceFailing), FlushTimeout: 1},
			func(t *testing.T, a *result.DecisionLogAccount) {
				if a.Received != 0 || a.StillBuffered != 100 || a.Uploads.Refused == 0 {
					t.Errorf("want 100 still buffered after refused uploads, got %s, uploads %+v", a, a.Uploads)
				}
			}},
		// A service slower than OPA's final flush: the upload in flight at the end is
		// abandoned by OPA, which keeps its decisions; they are drained after. (An upload OPA
		// began as it started, on a loaded machine after the first decisions, is answered.)
		{"stall", DecisionLogConfig{DecisionLogs: logsService, Service: string(ServiceSlow), Latency: "3s", FlushTimeout: 1, Reporting: []string{"min_delay_seconds=60", "max_delay_seconds=120"}},
			func(t *testing.T, a *result.DecisionLogAccount) {
				if a.StillBuffered < 50 || a.Received+a.StillBuffered != 100 {
					t.Errorf("want (nearly) all 100 still buffered after the final flush stalled, got %s, uploads %+v", a, a.Uploads)
				}
			}},
		{"down", DecisionLogConfig{DecisionLogs: logsService, Service: string(ServiceDown), FlushTimeout: 1},
			func(t *testing.T, a *result.DecisionLogAccount) {
				if a.Received != 0 || a.StillBuffered != 100 {
					t.Errorf("want 100 still buffered, got %s", a)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runLogged(t, "opa/sdk", &SDKConfig{tc.cfg}, 50, 2)
			a := r.Account
			if a.Logged != 100 || a.Missing != 0 || a.Duplicated != 0 || a.Unexpected != 0 || a.Error != "" {
				t.Errorf("want 100 logged, none missing or twice, got %s (error %q)", a, a.Error)
			}
			if sum := a.Received + a.DroppedRateLimit + a.DroppedBuffer + a.DroppedEither + a.StillBuffered + a.Missing; sum != a.Logged {
				t.Errorf("the account adds up to %d, not the %d logged: %s", sum, a.Logged, a)
			}
			tc.check(t, a)
		})
	}
}

// OPA's server, started by authzbench with decision logging, accounts for every decision the
// same way at its stop (SIGTERM): what OPA's REST API logged, and what authzbench's ext_authz
// plugin logged as OPA-Envoy does.
func TestServedDecisionLogsAccounted(t *testing.T) {
	for _, tc := range []struct {
		name, kind, workload string
		cfg                  kinds.Config
		check                func(t *testing.T, a *result.DecisionLogAccount)
	}{
		{"server healthy", "opa/server", "rbac", &ServerConfig{DecisionLogConfig: DecisionLogConfig{DecisionLogs: logsService}},
			func(t *testing.T, a *result.DecisionLogAccount) {
				if a.Received != a.Logged {
					t.Errorf("want every decision received, got %s", a)
				}
			}},
		{"server failing", "opa/server", "rbac", &ServerConfig{DecisionLogConfig: DecisionLogConfig{DecisionLogs: logsService, Service: string(ServiceFailing), FlushTimeout: 1}},
			func(t *testing.T, a *result.DecisionLogAccount) {
				if a.Received != 0 || a.StillBuffered != a.Logged {
					t.Errorf("want every decision still buffered, got %s", a)
				}
			}},
		{"server console", "opa/server", "rbac", &ServerConfig{DecisionLogConfig: DecisionLogConfig{DecisionLogs: logsConsole}},
			func(t *testing.T, a *result.DecisionLogAccount) {
				if a.Console != a.Logged || a.Received != 0 || a.Uploads != (result.DecisionLogUploads{}) {
					t.Errorf("want every decision written to the console and no upload, got %s, uploads %+v", a, a.Uploads)
				}
			}},
		{"extauthz drop by buffer", "opa/extauthz", "envoy", &ExtAuthzConfig{DecisionLogConfig: DecisionLogConfig{DecisionLogs: logsService, Reporting: eventBufferOf10}},
			func(t *testing.T, a *result.DecisionLogAccount) { checkDroppedByBuffer(t, a) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runLoggedOn(t, tc.kind, tc.workload, tc.cfg, 50, 2)
			a := r.Account
			// OPA also logs the checks authzbench's start sent to see the server answer (the
			// ext_authz target's probe), so at least the 100 asked.
			if a.Logged < 100 || a.Logged > 110 || a.Missing != 0 || a.Duplicated != 0 || a.Unexpected != 0 || a.Error != "" {
				t.Errorf("want the 100 asked logged, none missing or twice, got %s (error %q)", a, a.Error)
			}
			if sum := a.Received + a.DroppedRateLimit + a.DroppedBuffer + a.DroppedEither + a.StillBuffered + a.Missing; a.Console == 0 && sum != a.Logged {
				t.Errorf("the account adds up to %d, not the %d logged: %s", sum, a.Logged, a)
			}
			tc.check(t, a)
		})
	}
}

// What OPA's counters can say of the decisions neither received nor buffered: counted one by one
// they are taken as counts, a chunk counted once leaves only the cause, and what no counter
// explains is missing.
func TestAttribute(t *testing.T) {
	for _, tc := range []struct {
		name          string
		logged, recvd int64
		buffer        string
		counters      map[string]int64
		failed        int64
		want          result.DecisionLogAccount
	}{
		{"nothing lost", 100, 100, bufferTypeSize, nil, 0, result.DecisionLogAccount{}},
		{"lost uncounted", 100, 90, bufferTypeSize, nil, 0, result.DecisionLogAccount{Missing: 10}},
		{"event buffer, per event", 100, 70, bufferTypeEvent, map[string]int64{counterRateLimit: 10, counterBuffer: 15}, 0,
			result.DecisionLogAccount{DroppedRateLimit: 10, DroppedBuffer: 15, Missing: 5}},
		{"size buffer counts chunks", 100, 40, bufferTypeSize, map[string]int64{counterBuffer: 2}, 0,
			result.DecisionLogAccount{DroppedBuffer: 60}},
		{"size buffer, rate per event, chunks by buffer", 100, 40, bufferTypeSize, map[string]int64{counterRateLimit: 20, counterBuffer: 1}, 0,
			result.DecisionLogAccount{DroppedRateLimit: 20, DroppedBuffer: 40}},
		{"event buffer after failed uploads, both causes", 100, 40, bufferTypeEvent, map[string]int64{counterRateLimit: 3, counterBuffer: 1}, 2,
			result.DecisionLogAccount{DroppedEither: 60}},
		{"more received than logged", 100, 103, bufferTypeSize, nil, 0, result.DecisionLogAccount{Unexpected: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &result.DecisionLogAccount{Logged: tc.logged, Received: tc.recvd, BufferType: tc.buffer, OPACounters: tc.counters}
			attribute(a, tc.failed)
			got := result.DecisionLogAccount{DroppedRateLimit: a.DroppedRateLimit, DroppedBuffer: a.DroppedBuffer,
				DroppedEither: a.DroppedEither, Missing: a.Missing, Unexpected: a.Unexpected}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// eventBufferOf10 is OPA's event buffer holding 10 decisions, uploaded no sooner than a minute.
var eventBufferOf10 = []string{"buffer_type=event", "buffer_size_limit_events=10", "min_delay_seconds=60", "max_delay_seconds=120"}

// checkDroppedByBuffer: with eventBufferOf10, the 10 left in the buffer and any the uploader's
// first upload took are received, and every other decision is dropped by the buffer, each
// counted by OPA.
func checkDroppedByBuffer(t *testing.T, a *result.DecisionLogAccount) {
	t.Helper()
	if a.Received < 10 || a.DroppedBuffer < a.Logged/2 || a.Received+a.DroppedBuffer != a.Logged || a.DroppedBuffer != a.OPACounters[counterBuffer] {
		t.Errorf("want 10 (or a few more) received and the rest dropped by buffer as OPA counted, got %s; OPA's counters %v", a, a.OPACounters)
	}
}

// An upload of OPA's final flush that the failing service reads only after OPA reported the
// flush over (a loaded machine runs its handler late) is refused as the behaviour says, not
// taken as the drain: OPA, never answered, puts its chunk back and sends it again in the drain,
// which would otherwise count every decision of the chunk twice.
func TestLogServiceLateUploadOfFinalFlush(t *testing.T) {
	s, err := startLogService("127.0.0.1:0", ServiceFailing, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	body := gzipEvents(t, "d1", "d2", "d3")

	// The final flush's upload: headers and half its body before the report, the rest after.
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /logs HTTP/1.1\r\nHost: %s\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n", s.addr, len(body))
	conn.Write(body[:len(body)/2])
	waitFor(t, "the upload's handler", func() bool { return activeUploads(s) })
	report(t, s.controlURL+"/flushed", countReport{Logged: 3, BufferType: bufferTypeSize, Buffer: int64(len(body))})
	conn.Write(body[len(body)/2:])
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("the final flush's late upload was answered %d, want the failing service's 500", resp.StatusCode)
	}

	// The drain sends the chunk again, on a connection of its own.
	dr, err := http.DefaultClient.Do(gzipRequest(t, s.URL()+"/logs", body))
	if err != nil {
		t.Fatal(err)
	}
	dr.Body.Close()
	report(t, s.controlURL+"/drained", countReport{Logged: 3, BufferType: bufferTypeSize})
	if !s.wait(5 * time.Second) {
		t.Fatal("no final report")
	}
	s.settle()
	a := s.account()
	if a.StillBuffered != 3 || a.Duplicated != 0 || a.Received != 0 || a.Uploads.Refused != 1 || a.Uploads.Drained != 1 {
		t.Errorf("want 3 still buffered, none twice, the late upload refused; got %s, uploads %+v", a, a.Uploads)
	}
}

func gzipEvents(t *testing.T, ids ...string) []byte {
	t.Helper()
	var events []map[string]string
	for _, id := range ids {
		events = append(events, map[string]string{"decision_id": id})
	}
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	if err := json.NewEncoder(z).Encode(events); err != nil {
		t.Fatal(err)
	}
	z.Close()
	return b.Bytes()
}

func gzipRequest(t *testing.T, url string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Encoding", "gzip")
	return req
}

func report(t *testing.T, url string, rep countReport) {
	t.Helper()
	b, _ := json.Marshal(rep)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", url, resp.Status)
	}
}

// activeUploads says whether an upload's handler is running.
func activeUploads(s *logService) bool {
	done := make(chan struct{})
	go func() { s.active.Wait(); close(done) }()
	select {
	case <-done:
		return false
	case <-time.After(10 * time.Millisecond):
		return true
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("%s did not come within 5s", what)
}
