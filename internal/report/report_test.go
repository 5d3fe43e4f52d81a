package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/sut"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func sampleDocument() *result.Document {
	run := func(workload, target string, rps, sd float64, n int, p50 float64, errors map[string]uint64) result.Run {
		var errCount uint64
		for _, v := range errors {
			errCount += v
		}
		return result.Run{Target: target, Workload: workload, Load: result.Load{Model: "closed", Workers: 4}, Summary: result.Summary{
			Requests: 1000 + errCount, OK: 1000, Errors: errCount, ErrorClasses: errors,
			ThroughputRPS: metrics.Spread{Mean: rps, SD: sd, N: n},
			LatencyUS:     metrics.Percentiles{P50: p50, P95: p50 * 1.5, P99: p50 * 2, P999: p50 * 4},
		}}
	}
	partial := run("rbac", "opa/server", 4000, 0, 1, 250, map[string]uint64{})
	partial.Partial = true
	partial.SUTResources = &sut.Resources{CPUCoresMean: 1.234, CPUCoresMax: 1.9, RSSMaxMB: 61.4, Samples: 20}
	partial.Summary.Connections = &result.Connections{Opened: 1000, Expected: 1000, ConnectUS: metrics.Percentiles{P50: 85, P99: 410}}
	partial.Error = "run stopped: opa server (pid 4242) exited: signal: killed"
	open := run("rbac", "opa/server", 1800, 0, 1, 900, nil)
	open.Load = result.Load{Model: "open", Rate: 2000, Connections: 64}
	open.Summary.Open = &result.OpenSummary{Intended: 20000, Sent: 18000, Unsent: 2000, LateSends: 2000, GeneratorLate: 500, LateAfterUS: 1000, RateMissed: true,
		AchievedRPS:           metrics.Spread{Mean: 1800, N: 1},
		LatencyIncludesUnsent: true, OKLatencyUS: metrics.Percentiles{P50: 850, P99: 1700},
		UncorrectedLatencyUS: metrics.Percentiles{P50: 300, P99: 2400}}
	return &result.Document{
		Schema: result.Schema, Interrupted: true, StopReason: "interrupted by interrupt",
		Env: result.Env{CPUModel: "Test CPU", Cores: 2, GOMAXPROCS: 2, OS: "linux", Kernel: "6.0", Go: "go1.26",
			OPA: "1.22.2", Authzbench: "devel", Commit: "0123456789abcdef", Pinning: "none"},
		Runs: []result.Run{
			run("nop", "opa/cli", 71.1, 7.1, 5, 13600, nil),
			run("nop", "opa/server", 5080, 203, 5, 181, nil),
			run("nop", "opa/inproc", 187656, 0, 1, 6.93, nil),
			run("rbac", "opa/cli", 54.7, 1.9, 5, 18170, map[string]uint64{"http_400": 12, "wrong_decision": 3}),
			partial,
			open,
		},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update after checking):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestTableGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Table(&b, sampleDocument()); err != nil {
		t.Fatal(err)
	}
	golden(t, "table.golden", b.Bytes())
	for _, must := range []string{"15 !", "http_400: 12, wrong_decision: 3", "(partial)", "PARTIAL RESULT", "exited: signal: killed",
		"2000 of the 20000 due sends never went out", "more than 1.00ms late for 500 of the 20000 due sends", "1500 sends waited more than 1.00ms because all 64 connections were busy: the server fell behind", "the ok responses alone read p50 850µs, p99 1.70ms", "2,000/s x64", "1.23 cores, 61 MB", "+4.57ms", "no connection reuse: 1000 connections opened for 1000 expected; connect p50 85.0µs, p99 410µs", "from the actual send it would read p50 300µs, p99 2.40ms"} {
		if !bytes.Contains(b.Bytes(), []byte(must)) {
			t.Errorf("table lacks %q", must)
		}
	}
}

func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, sampleDocument()); err != nil {
		t.Fatal(err)
	}
	golden(t, "markdown.golden", b.Bytes())
}

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		us   float64
		want string
	}{{0.5, "500ns"}, {6.93, "6.93µs"}, {12.3, "12.3µs"}, {181, "181µs"}, {999.7, "1.00ms"}, {1500, "1.50ms"},
		{13600, "13.6ms"}, {2.5e6, "2.50s"}} {
		if got := Duration(tc.us); got != tc.want {
			t.Errorf("Duration(%v) = %q, want %q", tc.us, got, tc.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for v, want := range map[float64]string{54.66: "54.7", 100: "100", 5080.4: "5,080", 187656: "187,656", 1234567: "1,234,567"} {
		if got := thousands(v); got != want {
			t.Errorf("thousands(%v) = %q, want %q", v, got, want)
		}
	}
}

// Sends that waited for a free worker of an engine inside authzbench are not a server falling
// behind: the engine and the generator share the process's CPU.
func TestOpenLoopWaitNoteInProcess(t *testing.T) {
	for _, tc := range []struct {
		target, placement, must, mustNot string
	}{
		{"opa/inproc", "in-process", "because all 64 workers were busy", "fell behind"},
		{"opa/server", "launched-server", "the server fell behind", "workers were busy"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			r := result.Run{Target: tc.target, Workload: "rbac", Load: result.Load{Model: "open", Rate: 2000, Connections: 64},
				Summary: result.Summary{Requests: 1000, OK: 1000, Open: &result.OpenSummary{Intended: 1000, Sent: 1000,
					LateSends: 100, GeneratorLate: 5, LateAfterUS: 1000}}}
			r.SUT.Placement = tc.placement // the report reads where the engine ran from the result
			var b bytes.Buffer
			if err := Table(&b, &result.Document{Schema: result.Schema, Runs: []result.Run{r}}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b.Bytes(), []byte("95 sends waited")) || !bytes.Contains(b.Bytes(), []byte(tc.must)) || bytes.Contains(b.Bytes(), []byte(tc.mustNot)) {
				t.Errorf("want %q and not %q:\n%s", tc.must, tc.mustNot, b.String())
			}
			if bytes.Contains(b.Bytes(), []byte("RATE MISSED")) {
				t.Errorf("5 of 1000 generator-late sends (0.5 %%) marked the run:\n%s", b.String())
			}
		})
	}
}
