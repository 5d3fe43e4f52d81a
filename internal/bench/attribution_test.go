package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
)

// Ground truth for the attribution: a fake OPA whose handler spends a known 2 ms "evaluating"
// and reports its own timers as OPA does, then, outside its handler's timer, holds the answer
// back for a known delay, as a queue or a slow network would. Without the delay most of each
// request's time is the handler's; with 10 ms of it most is waiting. The margins are wide: a
// busy 2-core machine stretches every figure, but not past them.
func TestAttributionFindsAnInjectedDelay(t *testing.T) {
	const evaluating = 2 * time.Millisecond
	serverWith := func(delay time.Duration) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			var body struct {
				Input struct{ ID int } `json:"input"`
			}
			json.NewDecoder(r.Body).Decode(&body)
			evalStart := time.Now()
			time.Sleep(evaluating)
			eval := time.Since(evalStart)
			handler := time.Since(start)
			time.Sleep(delay) // outside the handler's timer: the client's wait
			fmt.Fprintf(w, `{"metrics":{"timer_rego_query_eval_ns":%d,"timer_server_handler_ns":%d},"result":%t}`,
				eval.Nanoseconds(), handler.Nanoseconds(), body.Input.ID%2 == 0)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	spec := userWorkload(t, 10)
	measure := func(delay time.Duration) *result.Attribution {
		s := &scenario.Scenario{Name: "attribution", Source: "test", Repeat: 1,
			Workloads: []scenario.WorkloadRef{{Name: spec.Name, User: spec}},
			Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: 5 * time.Second,
				Load: load.Spec{Workers: 2, Requests: 60, MaxTime: 30 * time.Second}}}}
		setOptions(t, s, map[string]any{"url": serverWith(delay).URL})
		doc := &result.Document{Schema: result.Schema}
		if err := Run(context.Background(), s, Options{Common: kinds.Common{ServerMetricsEvery: 1}}, doc); err != nil {
			t.Fatal(err)
		}
		a := doc.Runs[0].Summary.Attribution
		if a == nil || a.Timed != 60 || a.Sampled != 60 || len(a.Bands) < 4 {
			t.Fatalf("delay %s: attribution %+v, want all 60 responses sampled in 4 bands or more", delay, a)
		}
		// The server times a part of the client's request on the same host's monotonic clock.
		if a.HandlerOverClient != 0 || a.EvalOverHandler != 0 {
			t.Errorf("delay %s: %d handler and %d evaluation times clamped, want none", delay, a.HandlerOverClient, a.EvalOverHandler)
		}
		return a
	}
	quick, held := measure(0), measure(10*time.Millisecond)
	for _, band := range []int{0, 1} { // at most p50, p50 to p90: 30 and 24 responses
		q, h := quick.Bands[band], held.Bands[band]
		t.Logf("band %s: waiting %.2f / %.2f, evaluating %.2f / %.2f (without / with the delay)", q.Name, q.WaitShare, h.WaitShare, q.EvalShare, h.EvalShare)
		if q.WaitShare > 0.5 || q.EvalShare < 0.4 {
			t.Errorf("no delay, band %s: waiting %.2f, evaluating %.2f; want under half waiting, over 0.4 evaluating", q.Name, q.WaitShare, q.EvalShare)
		}
		if h.WaitShare < 0.6 || h.EvalShare > 0.3 {
			t.Errorf("10 ms delay, band %s: waiting %.2f, evaluating %.2f; want over 0.6 waiting, under 0.3 evaluating", h.Name, h.WaitShare, h.EvalShare)
		}
		if q.QueuedShare != 0 || h.QueuedShare != 0 {
			t.Errorf("band %s: queued %.2f and %.2f in closed loop, where every send goes out at once; want 0", q.Name, q.QueuedShare, h.QueuedShare)
		}
		if h.WaitShare <= q.WaitShare {
			t.Errorf("band %s: waiting %.2f with the delay, %.2f without; want it larger", q.Name, h.WaitShare, q.WaitShare)
		}
		if h.MeanEvalUS < 2000 || h.MeanClientUS < 12000 {
			t.Errorf("10 ms delay, band %s: mean evaluation %.0f µs, client %.0f µs; want at least 2,000 and 12,000", h.Name, h.MeanEvalUS, h.MeanClientUS)
		}
	}
}
