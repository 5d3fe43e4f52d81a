package promcount

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

const text = `# HELP openfga_tuples_cache_hit_count hits
# TYPE openfga_tuples_cache_hit_count counter
openfga_tuples_cache_hit_count{method="ReadUsersetTuples",operation="check"} 7
openfga_tuples_cache_hit_count{method="Read",operation="check"} 3
openfga_tuples_cache_total_count{method="Read",operation="check"} 20
spicedb_dispatch_client_check_total 100
spicedb_dispatch_client_check_from_cache_total 90
go_goroutines 12
`

// Counters are summed over their label sets; a pattern with a star picks by prefix and suffix,
// and a counter no sample met is absent, not zero.
func TestParseAndScrape(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(text)) }))
	defer srv.Close()
	got, err := Scrape(context.Background(), srv.URL+"/metrics", "openfga_tuples_cache_hit_count", "openfga_tuples_cache_total_count",
		"spicedb_dispatch*_check_total", "spicedb_dispatch*_check_from_cache_total", "openfga_check_cache_hit_count")
	if err != nil {
		t.Fatal(err)
	}
	for m, want := range map[Match]float64{"openfga_tuples_cache_hit_count": 10, "openfga_tuples_cache_total_count": 20,
		"spicedb_dispatch*_check_total": 100, "spicedb_dispatch*_check_from_cache_total": 90} {
		if got[m] != want {
			t.Errorf("%s = %v, want %v", m, got[m], want)
		}
	}
	if _, ok := got["openfga_check_cache_hit_count"]; ok {
		t.Error("a counter the metrics do not hold read as present")
	}
	if _, err := Parse(strings.NewReader("x_total{a=\"b\"} nope\n"), "x_total"); err == nil {
		t.Error("a value that is no number read without an error")
	}
}

func TestGather(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hits_total", Help: "h"}, []string{"op"})
	reg.MustRegister(c)
	c.WithLabelValues("a").Add(2)
	c.WithLabelValues("b").Add(3)
	got, err := Gather(reg, "hits_total")
	if err != nil || got["hits_total"] != 5 {
		t.Errorf("Gather = %v, %v; want hits_total 5", got, err)
	}
}
