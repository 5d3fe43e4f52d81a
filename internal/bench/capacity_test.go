package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/target"
)

func TestParseSLO(t *testing.T) {
	s, err := ParseSLO("p99=5ms,errors=0.1%")
	if err != nil || s.Percentile != 99 || s.Latency != 5*time.Millisecond || s.ErrorRatio != 0.001 {
		t.Errorf("%+v %v", s, err)
	}
	if s, err := ParseSLO("p99.9=20ms"); err != nil || s.Percentile != 99.9 || s.ErrorRatio != 0 {
		t.Errorf("%+v %v", s, err)
	}
	for _, bad := range []string{"", "p99", "p100=1ms", "p99=fast", "errors=1%", "p99=1ms,errors=1", "p99=1ms,latency=2ms"} {
		if _, err := ParseSLO(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A server that answers one request at a time in 2 ms holds about 500 req/s; beyond, its queue
// grows without bound. The search must put the knee there.
func TestCapacityFindsTheKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("several seconds of load")
	}
	one := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		one <- struct{}{}
		time.Sleep(2 * time.Millisecond)
		<-one
		io.WriteString(w, `{"result": true}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	policy := filepath.Join(dir, "p.rego")
	os.WriteFile(policy, []byte("package fake\nallow := true\n"), 0o644)
	inputs := filepath.Join(dir, "in.jsonl")
	os.WriteFile(inputs, []byte(`{"input": {}}`+"\n"), 0o644)

	c := CapacitySearch{Target: "opa/server", Workload: "nop", SLO: SLO{Percentile: 99, Latency: 50 * time.Millisecond},
		Start: 100, Max: 10000, Connections: 32, Step: time.Second, Warmup: 200 * time.Millisecond, MaxSteps: 7, Resolution: 0.1}
	doc := &result.Document{}
	knee, err := Capacity(context.Background(), c, Options{Target: target.Options{OPA: selfOPA(t), URL: srv.URL + "/v1/data/authzbench/nop/allow"}}, doc)
	if err != nil {
		t.Fatal(err)
	}
	var trace []string
	for _, p := range knee.Probes {
		trace = append(trace, p.Run.Target+" "+strings.TrimSpace(formatProbe(p)))
	}
	t.Logf("probes:\n%s", strings.Join(trace, "\n"))
	if knee.Pass == nil || knee.Fail == nil {
		t.Fatalf("no knee: %+v", knee)
	}
	if knee.Pass.Rate < 200 || knee.Pass.Rate > 500 || knee.Fail.Rate <= knee.Pass.Rate || knee.Fail.Rate > 800 {
		t.Errorf("knee between %.0f and %.0f req/s; the server holds about 500", knee.Pass.Rate, knee.Fail.Rate)
	}
	if len(doc.Runs) != len(knee.Probes) || len(knee.Probes) > 7 {
		t.Errorf("%d runs for %d probes (at most 7)", len(doc.Runs), len(knee.Probes))
	}
}
