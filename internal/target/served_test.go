package target

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// A Cedar server named by --url with a path is asked at that path, and the result says so: the
// recorded URL is the one that was measured, not the built-in server's endpoint.
func TestCedarServerAtURLPath(t *testing.T) {
	var hits, elsewhere atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/authz/cedar" {
			elsewhere.Add(1)
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		w.Write([]byte(`{"decision":"allow","reasons":["p0"]}`))
	}))
	defer srv.Close()

	w, err := workload.Builtin("nop")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := New("cedar/server", Options{URL: srv.URL + "/authz/cedar"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	defer tg.Stop(context.Background())
	d := tg.Worker()
	defer d.(*httpWorker).Close()
	if got := d.Decide(context.Background(), 0); got.Kind != verify.Decided || !got.Allow {
		t.Errorf("decision %+v, want an allow", got)
	}
	if hits.Load() != 2 || elsewhere.Load() != 0 { // the probe, then the decision
		t.Errorf("%d requests at /authz/cedar and %d elsewhere, want 2 and 0", hits.Load(), elsewhere.Load())
	}
	info := tg.Info()
	if info.URL != srv.URL+"/authz/cedar" || !info.External || info.PID != 0 || info.Command != nil {
		t.Errorf("info %+v: want the --url endpoint, external, no process", info)
	}
}
