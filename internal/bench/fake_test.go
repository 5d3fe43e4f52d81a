package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

// userWorkload writes a policy and n inputs {"id": i} expecting allow when i is even.
func userWorkload(t *testing.T, n int) *workload.UserSpec {
	t.Helper()
	dir := t.TempDir()
	policy := filepath.Join(dir, "p.rego")
	if err := os.WriteFile(policy, []byte("package fake\n\nallow if input.id % 2 == 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := filepath.Join(dir, "inputs.jsonl")
	f, err := os.Create(inputs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		fmt.Fprintf(f, "{\"input\": {\"id\": %d}, \"expect\": %t}\n", i, i%2 == 0)
	}
	f.Close()
	return &workload.UserSpec{Name: "fake", Policies: []string{policy}, Inputs: inputs}
}

// runAgainst runs one workload through opa/server pointed at url with a request budget.
func runAgainst(t *testing.T, url string, spec *workload.UserSpec, workers int, requests int64) result.Run {
	t.Helper()
	s := &scenario.Scenario{Name: "fake", Source: "test", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: spec.Name, User: spec}},
		Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: 5 * time.Second,
			Load: load.Spec{Workers: workers, Requests: requests, MaxTime: 30 * time.Second}}}}
	setOptions(t, s, map[string]any{"url": url})
	doc := &result.Document{}
	if err := Run(context.Background(), s, Options{}, doc); err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(doc.Runs) != 1 {
		t.Fatalf("got %d runs, want 1", len(doc.Runs))
	}
	return doc.Runs[0]
}

// A server that lies in known ways must be reported exactly: every response it got wrong is
// counted in its class, and none of them counts as throughput or enters the latency histogram.
func TestFakeServerErrorsAreCountedExactly(t *testing.T) {
	// By input: id%10 == 0 → 400; id%10 == 5 → the wrong decision; id%10 == 3 → {} (undefined,
	// as OPA answers a mistyped path); id%10 == 7 → 503; id%10 == 9 → a 200 that is an HTML
	// page, no decision at all; otherwise the right decision.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Input struct{ ID int } `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := body.Input.ID
		switch id % 10 {
		case 0:
			http.Error(w, `{"code":"invalid_parameter"}`, http.StatusBadRequest)
		case 3:
			io.WriteString(w, `{}`)
		case 5:
			fmt.Fprintf(w, `{"result": %t}`, id%2 != 0)
		case 7:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 9:
			io.WriteString(w, "<html>maintenance</html>\n")
		default:
			fmt.Fprintf(w, `{"result": %t}`, id%2 == 0)
		}
	}))
	defer srv.Close()

	// 100 inputs, 4 workers, 1000 requests: every input is sent exactly 10 times.
	run := runAgainst(t, srv.URL, userWorkload(t, 100), 4, 1000)
	s := run.Summary
	want := map[string]uint64{"http_400": 100, "wrong_decision": 100, "undefined": 100, "http_503": 100, "malformed_response": 100}
	if s.Requests != 1000 || s.OK != 500 || s.Errors != 500 || s.WrongDecision != 100 {
		t.Errorf("requests %d ok %d errors %d wrong %d; want 1000 500 500 100", s.Requests, s.OK, s.Errors, s.WrongDecision)
	}
	// Each class that has something to say keeps its first message; undefined has nothing to
	// add to its name.
	wantMessages := map[string]string{
		"http_400":           `status 400: {"code":"invalid_parameter"}`,
		"http_503":           "status 503: empty body",
		"malformed_response": "the body is not JSON: <html>maintenance</html>",
		"wrong_decision":     "expected deny, the engine decided allow",
	}
	if !reflect.DeepEqual(s.ErrorMessages, wantMessages) {
		t.Errorf("first messages %q\nwant %q", s.ErrorMessages, wantMessages)
	}
	for k, v := range want {
		if s.ErrorClasses[k] != v {
			t.Errorf("class %s = %d, want %d (all: %v)", k, s.ErrorClasses[k], v, s.ErrorClasses)
		}
	}
	if len(s.ErrorClasses) != len(want) {
		t.Errorf("error classes %v, want exactly %v", s.ErrorClasses, want)
	}
	h, err := result.DecodeHistogram(run.Repetitions[0].HDR)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 500 {
		t.Errorf("ok latency histogram holds %d values, want 500 (errors must stay out)", h.TotalCount())
	}
	if want := float64(500) / run.Repetitions[0].ElapsedS; run.Repetitions[0].ThroughputRPS != want {
		t.Errorf("throughput %.1f, want ok/elapsed = %.1f", run.Repetitions[0].ThroughputRPS, want)
	}
}

// Apache Bench reported "Failed requests: 0" against a path answering 404; we must not.
func TestEveryNthRequestFailing(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Input struct{ ID int } `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if n.Add(1)%5 == 0 {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `{"result": {"allow": %t, "reasons": []}}`, body.Input.ID%2 == 0)
	}))
	defer srv.Close()
	run := runAgainst(t, srv.URL, userWorkload(t, 50), 2, 999)
	// The start-up probe is request 1, so the measured requests are 2..1000: 200 of them are
	// multiples of 5.
	if got := run.Summary.ErrorClasses["http_404"]; got != 200 || run.Summary.OK != 799 {
		t.Errorf("http_404 %d ok %d, want 200 and 799 (%v)", got, run.Summary.OK, run.Summary.ErrorClasses)
	}
}

// A server that stops answering within the timeout produces timeout errors, not successes.
func TestSlowServerTimesOut(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 1 { // the probe is answered, everything after it stalls
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		io.WriteString(w, `{"result": true}`)
	}))
	defer srv.Close()
	defer close(release)
	spec := userWorkload(t, 4)
	s := &scenario.Scenario{Name: "slow", Source: "test", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: "fake", User: spec}},
		Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: 100 * time.Millisecond,
			Load: load.Spec{Workers: 2, Requests: 6, MaxTime: 30 * time.Second}}}}
	setOptions(t, s, map[string]any{"url": srv.URL})
	doc := &result.Document{}
	if err := Run(context.Background(), s, Options{}, doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Runs[0].Summary; got.ErrorClasses["timeout"] != 6 || got.OK != 0 || got.ErrorMessages["timeout"] == "" {
		t.Errorf("ok %d, classes %v, messages %q; want 6 timeouts and what the first said", got.OK, got.ErrorClasses, got.ErrorMessages)
	}
}

// The histograms hold the longest latency a run can see, its timeout after its warm-up and
// measured phase, so a long timeout is not clamped at the default 60 s.
func TestHistogramsCoverTheTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"result": true}`)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		timeout time.Duration
		ceiling float64
	}{{time.Second, 60}, {100 * time.Second, 100}} {
		s := &scenario.Scenario{Name: "ceiling", Source: "test", Repeat: 1,
			Workloads: []scenario.WorkloadRef{{Name: "fake", User: userWorkload(t, 2)}},
			Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: tc.timeout,
				Load: load.Spec{Workers: 1, Requests: 4, MaxTime: 30 * time.Second}}}}
		setOptions(t, s, map[string]any{"url": srv.URL})
		doc := &result.Document{}
		if err := Run(context.Background(), s, Options{}, doc); err != nil {
			t.Fatal(err)
		}
		if got := doc.Runs[0].Summary; got.LatencyCeilingS != tc.ceiling || got.Clamped != 0 || got.Requests != 4 {
			t.Errorf("timeout %s: ceiling %v s, %d clamped, %d requests; want %v s, 0, 4", tc.timeout, got.LatencyCeilingS, got.Clamped, got.Requests, tc.ceiling)
		}
	}
}

func TestUnreachableURLFailsBeforeLoad(t *testing.T) {
	addr, err := sut.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s := &scenario.Scenario{Name: "x", Source: "test", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: "rbac"}},
		Targets:   []scenario.TargetRef{{Name: "opa/server", Timeout: time.Second, Load: load.Spec{Workers: 1, Requests: 1}}}}
	setOptions(t, s, map[string]any{"url": "http://" + addr})
	doc := &result.Document{}
	err = Run(context.Background(), s, Options{}, doc)
	if err == nil || !strings.Contains(err.Error(), "cannot reach url") {
		t.Fatalf("err = %v, want cannot reach url", err)
	}
	if len(doc.Runs) != 1 || doc.Runs[0].Summary.Requests != 0 || doc.Runs[0].Error == "" {
		t.Errorf("want one run marked with the error and no requests, got %+v", doc.Runs)
	}
}

// Ground truth: a server that takes 2 ms per answer is reported as taking at least that, and
// not much more, at the median.
func TestKnownServiceTimeIsMeasured(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(2 * time.Millisecond)
		io.WriteString(w, `{"result": true}`)
	}))
	defer srv.Close()
	spec := userWorkload(t, 10)
	dir := t.TempDir()
	inputs := filepath.Join(dir, "in.jsonl")
	os.WriteFile(inputs, []byte(`{"input": {"id": 0}}`+"\n"), 0o644) // unverified: the fake always allows
	spec.Inputs = inputs
	run := runAgainst(t, srv.URL, spec, 1, 200)
	p50 := run.Summary.LatencyUS.P50
	if p50 < 2000 || p50 > 4000 {
		t.Errorf("p50 %.0f µs for a 2 ms server; want 2.0 to 4.0 ms", p50)
	}
	if run.Summary.UnverifiedOK != 200 {
		t.Errorf("unverified ok %d, want 200", run.Summary.UnverifiedOK)
	}
}

// An open-loop run records its model, its schedule and both latency views in the result.
func TestOpenLoopResult(t *testing.T) {
	srv := parityServer(t)
	spec := userWorkload(t, 20)
	s := &scenario.Scenario{Name: "open", Source: "test", Repeat: 2,
		Workloads: []scenario.WorkloadRef{{Name: spec.Name, User: spec}},
		Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: 5 * time.Second,
			Load: load.Spec{Rate: 200, Connections: 4, Duration: time.Second, Warmup: 200 * time.Millisecond}}}}
	setOptions(t, s, map[string]any{"url": srv.URL})
	doc := &result.Document{}
	if err := Run(context.Background(), s, Options{}, doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Runs[0]
	o := r.Summary.Open
	if r.Load.Model != "open" || r.Load.Rate != 200 || r.Load.Connections != 4 || o == nil {
		t.Fatalf("load %+v, open %+v", r.Load, o)
	}
	if o.Intended != 400 || o.Sent < 380 || r.Summary.Errors != 0 || len(r.Repetitions) != 2 || r.Repetitions[0].Uncorrected == "" {
		t.Errorf("summary %+v, open %+v", r.Summary, o)
	}
	if o.AchievedRPS.N != 2 || o.AchievedRPS.Mean < 190 {
		t.Errorf("achieved %+v", o.AchievedRPS)
	}
}

// Every Nth request asks for the server's timers, and they are reported apart.
func TestServerTimersAreSampled(t *testing.T) {
	var timed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Query().Get("metrics") == "true" {
			timed.Add(1)
			io.WriteString(w, `{"metrics":{"timer_rego_query_eval_ns":20000,"timer_server_handler_ns":50000},"result":true}`)
			return
		}
		io.WriteString(w, `{"result":true}`)
	}))
	defer srv.Close()
	spec := userWorkload(t, 10)
	dir := t.TempDir()
	spec.Inputs = filepath.Join(dir, "in.jsonl")
	os.WriteFile(spec.Inputs, []byte(`{"input": {"id": 0}}`+"\n"), 0o644)
	s := &scenario.Scenario{Name: "timers", Source: "test", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: spec.Name, User: spec}},
		Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: 5 * time.Second,
			Load: load.Spec{Workers: 2, Requests: 100, MaxTime: 30 * time.Second}}}}
	doc := &result.Document{}
	setOptions(t, s, map[string]any{"url": srv.URL})
	o := Options{Common: kinds.Common{ServerMetricsEvery: 10}}
	if err := Run(context.Background(), s, o, doc); err != nil {
		t.Fatal(err)
	}
	st := doc.Runs[0].Summary.Server
	if st == nil || st.Sampled != 10 || st.EvalUS.P50 < 19.9 || st.EvalUS.P50 > 20.1 || st.HandlerUS.P50 < 49.9 || st.HandlerUS.P50 > 50.1 {
		t.Errorf("server timers %+v (server saw %d timed requests)", st, timed.Load())
	}
}

// --no-reuse opens a connection per request, and the result says so, with the connect time.
func TestNoReuseOpensAConnectionPerRequest(t *testing.T) {
	srv := parityServer(t)
	for _, noReuse := range []bool{true, false} {
		spec := userWorkload(t, 10)
		s := &scenario.Scenario{Name: "reuse", Source: "test", Repeat: 1,
			Workloads: []scenario.WorkloadRef{{Name: spec.Name, User: spec}},
			Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: 5 * time.Second,
				Load: load.Spec{Workers: 2, Requests: 60, MaxTime: 30 * time.Second}}}}
		doc := &result.Document{}
		setOptions(t, s, map[string]any{"url": srv.URL})
		o := Options{Common: kinds.Common{NoReuse: noReuse}}
		if err := Run(context.Background(), s, o, doc); err != nil {
			t.Fatal(err)
		}
		c := doc.Runs[0].Summary.Connections
		switch {
		case noReuse && (c == nil || c.Opened != 60 || c.Expected != 60 || c.Reused || c.ConnectUS.P50 <= 0):
			t.Errorf("no reuse: %+v", c)
		case !noReuse && (c == nil || c.Opened != 2 || c.Expected != 2 || !c.Reused):
			t.Errorf("reuse: %+v", c)
		}
		if doc.Runs[0].Summary.OK != 60 {
			t.Errorf("ok %d, want 60", doc.Runs[0].Summary.OK)
		}
	}
}

// parityServer answers like the userWorkload policy: allow for even ids.
func parityServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Input struct{ ID int } `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		fmt.Fprintf(w, `{"result": %t}`, body.Input.ID%2 == 0)
	}))
	t.Cleanup(srv.Close)
	return srv
}
