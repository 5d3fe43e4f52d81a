package bench

import (
	"context"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
)

// Without connection reuse over TLS, every request opens a connection, and its time is split
// into the TCP connect, the handshake and the exchange after it: each part is recorded for every
// request, the handshake is not zero, and the parts add up to no more than the latency.
func TestTLSRunWithoutReuseSplitsEveryRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an OPA process")
	}
	const requests = 60
	s := &scenario.Scenario{Name: "parts", Source: "test", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: "rbac"}},
		Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: 30 * time.Second,
			Load: load.Spec{Workers: 1, Requests: requests, MaxTime: time.Minute}}}}
	setOptions(t, s, map[string]any{"tls": true})
	doc := &result.Document{}
	if err := Run(context.Background(), s, Options{Common: kinds.Common{NoReuse: true}}, doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Runs[0]
	if r.Summary.OK != requests || r.Summary.Errors != 0 {
		t.Fatalf("ok %d errors %d %v, want %d ok", r.Summary.OK, r.Summary.Errors, r.Summary.ErrorClasses, requests)
	}
	c := r.Summary.Connections
	if c == nil || c.Opened != requests || c.Reused || c.TLSUS == nil || c.ExchangeUS == nil {
		t.Fatalf("connections %+v, want %d opened, no reuse, a TLS and an exchange part", c, requests)
	}
	if c.ConnectUS.P50 <= 0 || c.TLSUS.P50 <= 0 || c.ExchangeUS.P50 <= 0 {
		t.Errorf("parts p50: connect %v, TLS %v, exchange %v µs; want each above zero", c.ConnectUS.P50, c.TLSUS.P50, c.ExchangeUS.P50)
	}
	// Means add: the parts of each request sum to at most its latency (1 % for the histograms'
	// rounding).
	if sum, lat := c.ConnectUS.Mean+c.TLSUS.Mean+c.ExchangeUS.Mean, r.Summary.LatencyUS.Mean; sum > lat*1.01 {
		t.Errorf("mean parts %.1f µs above the mean latency %.1f µs", sum, lat)
	}
}
