package kinds

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// A Cedar server named by --url with a path is asked at that path, query kept, and the result
// says so: the recorded URL is the one that was measured, not the built-in server's endpoint.
// Requests sampled for the server's timers add their parameter to the query.
func TestCedarServerAtURLPath(t *testing.T) {
	var hits, elsewhere, timed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Method != http.MethodPost || r.URL.Path != "/authz/cedar" || q.Get("tenant") != "a b" {
			elsewhere.Add(1)
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		if q.Get("metrics") == "true" {
			timed.Add(1)
		}
		w.Write([]byte(`{"decision":"allow","reasons":["p0"]}`))
	}))
	defer srv.Close()

	w, err := workload.Builtin("nop")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := New("cedar/server", Common{ServerMetricsEvery: 2}, configOf("cedar/server", ServerConfig{URL: srv.URL + "/authz/cedar?tenant=a%20b"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	defer tg.Stop(context.Background())
	d := tg.Worker()
	defer d.(*httpWorker).Close()
	for i := range 2 {
		if got := d.Decide(context.Background(), i); got.Kind != verify.Decided || !got.Allow {
			t.Errorf("decision %d: %+v, want an allow", i, got)
		}
	}
	if hits.Load() != 3 || elsewhere.Load() != 0 || timed.Load() != 1 { // the probe, then two decisions, one timed
		t.Errorf("%d requests at /authz/cedar (%d timed) and %d elsewhere, want 3 (1) and 0", hits.Load(), timed.Load(), elsewhere.Load())
	}
	info := tg.Info()
	if info.URL != srv.URL+"/authz/cedar?tenant=a%20b" || !info.External || info.PID != 0 || info.Command != nil {
		t.Errorf("info %+v: want the --url endpoint, external, no process", info)
	}
}
