package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// Run
//
//	go test ./internal/report -run Golden -update
//
// to rewrite the golden files, then read the diff before committing: every golden test also
// asserts what its output must say, so -update cannot bless a wrong table.
var update = flag.Bool("update", false, "rewrite the golden files")

// sampleDocument is one workload's floor (nop) and rbac through the three OPA targets, built by
// hand: errors, a partial run whose server died, no connection reuse, and an open-loop run that
// missed its rate with unsent sends.
func sampleDocument() *result.Document {
	run := func(workload, target string, rps, sd float64, n int, p50 float64, errors map[string]uint64) result.Run {
		var errCount uint64
		for _, v := range errors {
			errCount += v
		}
		return result.Run{Target: target, Workload: workload, Load: result.Load{Model: result.ClosedLoop, Workers: 4}, Summary: result.Summary{
			Requests: 1000 + errCount, OK: 1000, Errors: errCount, ErrorClasses: errors,
			ThroughputRPS: result.Spread{Mean: rps, SD: sd, N: n},
			LatencyUS:     result.Percentiles{P50: p50, P95: p50 * 1.5, P99: p50 * 2, P999: p50 * 4},
		}}
	}
	partial := run("rbac", "opa/server", 4000, 0, 1, 250, map[string]uint64{})
	partial.Partial = true
	partial.SUTResources = &result.Resources{CPUCoresMean: 1.234, CPUCoresMax: 1.9, RSSMaxMB: 61.4, Samples: 20}
	partial.Summary.Connections = &result.Connections{Opened: 1000, Expected: 1000, ConnectUS: result.Percentiles{P50: 85, P99: 410},
		TLSUS: &result.Percentiles{P50: 310, P99: 900}, ExchangeUS: &result.Percentiles{P50: 120, P99: 380}}
	partial.Error = "run stopped: opa server (pid 4242) exited: signal: killed"
	open := run("rbac", "opa/server", 1800, 0, 1, 900, nil)
	open.Load = result.Load{Model: result.OpenLoop, Rate: 2000, Connections: 64}
	open.Summary.Open = &result.OpenSummary{Intended: 20000, Sent: 18000, Unsent: 2000, LateSends: 2000, GeneratorLate: 500, LateAfterUS: 1000, RateMissed: true,
		AchievedRPS:           result.Spread{Mean: 1800, N: 1},
		LatencyIncludesUnsent: true, OKLatencyUS: result.Percentiles{P50: 850, P99: 1700},
		UncorrectedLatencyUS: result.Percentiles{P50: 300, P99: 2400}}
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

// twoWorkloadsDocument is two workloads (rbac, api) through three targets, built by hand so it
// is the same on every machine: one run with errors, one partial run, and the document itself
// interrupted.
func twoWorkloadsDocument() *result.Document {
	run := func(workload, target string, workers int, rps, sd float64, n int, p50 float64) result.Run {
		return result.Run{
			Target: target, Workload: workload,
			Load: result.Load{Model: result.ClosedLoop, Workers: workers, DurationS: 4, WarmupS: 1},
			Summary: result.Summary{
				Requests: 2000, OK: 2000, ErrorClasses: map[string]uint64{},
				ThroughputRPS: result.Spread{Mean: rps, SD: sd, N: n},
				LatencyUS:     result.Percentiles{P50: p50, P95: p50 * 1.5, P99: p50 * 2, P999: p50 * 3},
			},
		}
	}
	withErrors := run("api", "opa/server", 4, 4321.5, 87.2, 3, 612)
	withErrors.Summary.Requests, withErrors.Summary.OK = 2009, 2000
	withErrors.Summary.Errors, withErrors.Summary.WrongDecision = 9, 2
	withErrors.Summary.ErrorClasses = map[string]uint64{"http_400": 7, "wrong_decision": 2}
	withErrors.SUTResources = &result.Resources{CPUCoresMean: 0.987, CPUCoresMax: 1.5, RSSMaxMB: 48.6, Samples: 12}

	withErrors.Summary.ErrorMessages = map[string]string{
		"http_400":       `status 400: {"code":"invalid_parameter","message":"error(s) occurred while decoding input"}`,
		"wrong_decision": "expected allow, the engine decided deny",
	}
	withErrors.Summary.Clamped, withErrors.Summary.LatencyCeilingS = 3, 65

	// A short run: 400 ok responses, so its P99 has 4 beyond it and its P99.9 none.
	partial := run("api", "opa/inproc", 1, 123456.7, 0, 1, 7.45)
	partial.Partial = true
	partial.Error = "run stopped: interrupted by interrupt"
	partial.Summary.LatencyBeyond = &result.Beyond{Samples: 400, P50: 200, P75: 100, P90: 40, P95: 20, P99: 4}

	// A long one: every percentile shown rests on plenty.
	plenty := run("rbac", "opa/server", 4, 5123.4, 150.9, 3, 402)
	plenty.Summary.LatencyBeyond = &result.Beyond{Samples: 20000, P50: 10000, P75: 5000, P90: 2000, P95: 1000, P99: 200, P999: 20, P9999: 2}

	return &result.Document{
		Schema:      result.Schema,
		Interrupted: true,
		StopReason:  "interrupted by interrupt",
		Env: result.Env{CPUModel: "Hand-built CPU @ 2.40GHz", Cores: 4, GOMAXPROCS: 4, OS: "linux", Kernel: "6.1.0",
			Arch: "amd64", Go: "go1.26.0", OPA: "1.22.2", Authzbench: "v0.0.0-test", Commit: "fedcba9876543210fedcba",
			Hostname: "nowhere", Pinning: "none: generator and system under test share all cores"},
		Runs: []result.Run{
			run("rbac", "opa/cli", 2, 61.24, 3.05, 3, 31200),
			plenty,
			run("rbac", "opa/inproc", 1, 150234.4, 1200.6, 3, 6.1),
			run("api", "opa/cli", 2, 48.9, 0.44, 3, 40100),
			withErrors,
			partial,
		},
	}
}

// layersDocument is two runs whose responses reported the server's timers: rbac in open loop
// at 2,000/s with its attribution (its p99.9 band thin, and a handler timer above a client
// latency), and api in closed loop from a file written before attribution was kept.
func layersDocument() *result.Document {
	p := func(scale float64) result.Percentiles {
		return result.Percentiles{P50: 100 * scale, P75: 120 * scale, P90: 150 * scale, P95: 200 * scale, P99: 400 * scale,
			P999: 900 * scale, P9999: 1500 * scale, Max: 2000 * scale, Mean: 130 * scale}
	}
	open := result.Run{Target: "opa/server", Workload: "rbac", Load: result.Load{Model: result.OpenLoop, Rate: 2000, Connections: 64},
		SUTResources: &result.Resources{CPUCoresMean: 0.62, CPUCoresMax: 0.9, RSSMaxMB: 54.2, Samples: 40},
		Summary: result.Summary{Requests: 20000, OK: 20000, ThroughputRPS: result.Spread{Mean: 2000, N: 1}, LatencyUS: p(4),
			Open: &result.OpenSummary{Intended: 20000, Sent: 20000, LateAfterUS: 1000, AchievedRPS: result.Spread{Mean: 2000, N: 1},
				OKLatencyUS: p(4), UncorrectedLatencyUS: p(3)},
			Server: &result.ServerTimes{Sampled: 2000, HandlerUS: p(1.5), EvalUS: p(1)},
			Attribution: &result.Attribution{Sampled: 1000, Timed: 2000, Every: 2, HandlerOverClient: 3, Bands: []result.Band{
				{Name: "p0-p50", UpperUS: 400, Count: 500, WaitShare: 0.55, HandlerShare: 0.15, EvalShare: 0.30, MeanClientUS: 300, MeanHandlerUS: 135, MeanEvalUS: 90},
				{Name: "p50-p90", LowerUS: 400, UpperUS: 600, Count: 400, WaitShare: 0.6, HandlerShare: 0.13, EvalShare: 0.27, MeanClientUS: 480, MeanHandlerUS: 192, MeanEvalUS: 130},
				{Name: "p90-p99", LowerUS: 600, UpperUS: 1600, Count: 90, WaitShare: 0.65, HandlerShare: 0.12, EvalShare: 0.23, MeanClientUS: 900, MeanHandlerUS: 315, MeanEvalUS: 207},
				{Name: "p99-max", LowerUS: 1600, UpperUS: 8000, Count: 10, Thin: true, WaitShare: 0.71, QueuedShare: 0.5, HandlerShare: 0.22, EvalShare: 0.07, MeanClientUS: 3000, MeanHandlerUS: 870, MeanEvalUS: 210},
				{Name: "p99.9-max", LowerUS: 3600, UpperUS: 8000, Count: 1, Thin: true, WaitShare: 0.9, HandlerShare: 0.05, EvalShare: 0.05, MeanClientUS: 8000, MeanHandlerUS: 800, MeanEvalUS: 400},
			}}}}
	closed := result.Run{Target: "opa/server", Workload: "api", Load: result.Load{Model: result.ClosedLoop, Workers: 8},
		Summary: result.Summary{Requests: 50000, OK: 50000, ThroughputRPS: result.Spread{Mean: 5000, N: 1}, LatencyUS: p(2),
			Server: &result.ServerTimes{Sampled: 5000, HandlerUS: p(1.2), EvalUS: p(0.8)}}}
	return &result.Document{Schema: result.Schema,
		Env: result.Env{CPUModel: "Test CPU", Cores: 2, GOMAXPROCS: 2, OS: "linux", Kernel: "6.0", Go: "go1.26",
			OPA: "1.22.2", Authzbench: "devel", Commit: "0123456789abcdef", Pinning: "none"},
		Runs: []result.Run{open, closed}}
}

// rampDocument is a capacity ramp, 100 to 1,000 req/s over 3 s judged in three intervals (met,
// met, broke), and the constant-rate probe that confirmed its estimate.
func rampDocument() *result.Document {
	p := func(us float64) result.Percentiles {
		return result.Percentiles{P50: us, P75: us, P90: us, P95: us, P99: 4 * us, P999: 8 * us, P9999: 8 * us, Max: 8 * us, Mean: us}
	}
	iv := func(from, to, rateFrom, rateTo float64, due, late int64, us float64, v result.Verdict, why string) result.Interval {
		return result.Interval{FromS: from, ToS: to, RateFrom: rateFrom, RateTo: rateTo, Due: due, Sent: due, Late: late, OK: due,
			LatencyUS: p(us), Verdict: v, Why: why}
	}
	ramp := result.Run{Target: "opa/server", Workload: "rbac",
		Load: result.Load{Model: result.OpenLoop, Stages: "3s:100-1000", Connections: 32, DurationS: 3},
		Summary: result.Summary{Requests: 1650, OK: 1650, ThroughputRPS: result.Spread{Mean: 550, N: 1}, LatencyUS: p(2000),
			Open: &result.OpenSummary{Intended: 1650, Sent: 1650, LateAfterUS: 1000, AchievedRPS: result.Spread{Mean: 550, N: 1},
				OKLatencyUS: p(2000), UncorrectedLatencyUS: p(1500)}},
		Repetitions: []result.Repetition{{Requests: 1650, OK: 1650, Intervals: []result.Interval{
			iv(0, 1, 100, 400, 250, 0, 500, result.Met, "p99 2ms <= 50ms"),
			iv(1, 2, 400, 700, 550, 3, 900, result.Met, "p99 3.6ms <= 50ms"),
			iv(2, 3, 700, 1000, 850, 20, 40000, result.Broke, "p99 160ms > 50ms"),
		}}}}
	probe := result.Run{Target: "opa/server", Workload: "rbac", Load: result.Load{Model: result.OpenLoop, Rate: 550, Connections: 32, DurationS: 1},
		Summary: result.Summary{Requests: 550, OK: 550, ThroughputRPS: result.Spread{Mean: 550, N: 1}, LatencyUS: p(700),
			Open: &result.OpenSummary{Intended: 550, Sent: 550, LateAfterUS: 1000, AchievedRPS: result.Spread{Mean: 550, N: 1},
				OKLatencyUS: p(700), UncorrectedLatencyUS: p(600)}}}
	return &result.Document{Schema: result.Schema,
		Env: result.Env{CPUModel: "Test CPU", Cores: 2, GOMAXPROCS: 2, OS: "linux", Kernel: "6.0", Go: "go1.26",
			OPA: "1.22.2", Authzbench: "devel", Commit: "0123456789abcdef", Pinning: "none"},
		Runs: []result.Run{ramp, probe}}
}

// compareGolden compares got with testdata/name, rewriting it under -update.
func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (check, then run with -update):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// unwrapNotes joins the lines the terminal view wrapped (a note's continuation lines start with
// two spaces) back into one, so a test finds a note whole whatever the width.
func unwrapNotes(out string) string {
	lines := strings.Split(out, "\n")
	var joined []string
	inNote := false
	for _, line := range lines {
		if inNote && strings.HasPrefix(line, "  ") && strings.TrimSpace(line) != "" {
			joined[len(joined)-1] += " " + strings.TrimLeft(line, " ")
			continue
		}
		inNote = strings.HasPrefix(line, "- ")
		joined = append(joined, line)
	}
	return strings.Join(joined, "\n")
}

// rowOrder is the workloads of the table's rows, in order: the rows are the lines with a ratio
// column, after the header, and before the notes (one of which explains it).
func rowOrder(out string) string {
	var order []string
	for i, line := range strings.Split(out, "\n") {
		note := strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "  ") // a finding or a note, wrapped or not
		if i > 0 && strings.Contains(line, "×") && !note && !strings.HasPrefix(line, "Workload") && !strings.HasPrefix(line, "| Workload") {
			order = append(order, strings.Fields(strings.Trim(line, "| "))[0])
		}
	}
	return strings.Join(order, " ")
}

// TestRenderGolden renders the hand-built documents in each format, compares them with their
// golden files, and checks what a reader must be able to find in them whatever the layout.
func TestRenderGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		doc    func() *result.Document
		format string
		golden string
		must   []string
		rows   string // the rows' workloads, in order
		counts map[string]int
		wide   bool // every column (--wide)
	}{
		{
			name: "sample table", doc: sampleDocument, format: "table", golden: "table.golden", wide: true,
			must: []string{"15 !", "http_400: 12, wrong_decision: 3", "(partial)", "PARTIAL RESULT", "exited: signal: killed",
				"2000 of the 20000 due sends never went out", "more than 1.00ms late for 500 of the 20000 due sends",
				"1500 sends waited more than 1.00ms because all 64 connections were busy: the server fell behind",
				"the ok responses alone read p50 850µs, p99 1.70ms", "2,000/s x64", "1.23 cores, 61 MB", "+4.57ms",
				"no connection reuse: 1000 connections opened for 1000 expected; connect p50 85.0µs, p99 410µs",
				"from the actual send it would read p50 300µs, p99 2.40ms",
				"nop       opa/server              4 workers    5,080 ± 203  181µs   -             272µs   362µs   724µs   0       -                  71.4×",
				"rbac      opa/server (partial)    4 workers    4,000        250µs   +69.0µs       375µs   500µs   1.00ms  0       1.23 cores, 61 MB  73.1×",
				"Test CPU, 2 cores, GOMAXPROCS 2, linux 6.0, go1.26, OPA 1.22.2, authzbench devel (0123456789ab); pinning: none"},
			rows:   "nop nop nop rbac rbac rbac",
			counts: map[string]int{"1.00× (opa/cli)": 2, "RATE MISSED": 5, "× †": 0},
		},
		{
			name: "sample markdown", doc: sampleDocument, format: "markdown", golden: "markdown.golden",
			must: []string{"| Workload | Target | Load | req/s ± sd | P50 | P50 over nop | P95 | P99 | P99.9 | errors | SUT CPU, RSS | × vs first | P50 connect | P50 TLS | P50 exchange |\n|---|",
				// Without reuse a request's time is split in three; with reuse there is nothing to split.
				"| 73.1× | 85.0µs | 310µs | 120µs |",
				"| 2,640× | - | - | - |",
				"| nop | `opa/inproc` | 4 workers | 187,656 | 6.93µs | - | 10.4µs | 13.9µs | 27.7µs | 0 | - | 2,640× |",
				"| rbac | `opa/cli` | 4 workers | 54.7 ± 1.9 | 18.2ms | +4.57ms | 27.3ms | 36.3ms | 72.7ms | 15 ! | - | 1.00× (opa/cli) |",
				"| rbac | `opa/server` RATE MISSED | 2,000/s x64 | 1,800 | 900µs | - | 1.35ms | 1.80ms | 3.60ms | 0 | - | 32.9× |",
				"- rbac on opa/cli: 15 of 1015 responses were not served decisions: http_400: 12, wrong_decision: 3",
				"- rbac on opa/server RATE MISSED: the rate was not delivered: 2000 of the 20000 due sends never went out",
				"- PARTIAL RESULT: the run was stopped before it finished (interrupted by interrupt)"},
			rows:   "nop nop nop rbac rbac rbac",
			counts: map[string]int{"1.00× (opa/cli)": 2, "RATE MISSED": 5},
		},
		{
			name: "two workloads table", doc: twoWorkloadsDocument, format: "table", golden: "two_workloads_table.golden", wide: true,
			must: []string{
				"api on opa/server: 9 of 2009 responses were not served decisions: http_400: 7, wrong_decision: 2",
				"9 !",
				"opa/inproc (partial)",
				"api on opa/inproc (partial): run stopped: interrupted by interrupt",
				"PARTIAL RESULT: the run was stopped before it finished (interrupted by interrupt)",
				"0.99 cores, 49 MB",
				"5,123 ± 151",
				"150,234 ± 1,201",
				"1.00× (opa/cli)",
				"Hand-built CPU @ 2.40GHz, 4 cores, GOMAXPROCS 4, linux 6.1.0, go1.26.0, OPA 1.22.2, authzbench v0.0.0-test (fedcba987654)",
				`api on opa/server: first http_400: status 400: {"code":"invalid_parameter","message":"error(s) occurred while decoding input"}`,
				"api on opa/server: first wrong_decision: expected allow, the engine decided deny",
				"api on opa/server: 3 responses took longer than 65.0s, the most the latency histograms hold, and were counted at it: the slowest percentiles and the maximum read low",
				"api on opa/inproc (partial): ≥ marks a percentile with fewer than 10 of the 400 ok responses beyond it (P99: 4, P99.9: 0)",
				"7.45µs  -             11.2µs  ≥14.9µs  ≥22.4µs",
			},
			rows: "rbac rbac rbac api api api",
			// Two thin percentiles in the short run's row and its note; none in the long run's,
			// nor in runs whose documents predate the counts.
			counts: map[string]int{"≥": 3, ": first ": 2},
		},
		{
			name: "two workloads markdown", doc: twoWorkloadsDocument, format: "markdown", golden: "two_workloads_markdown.golden",
			must: []string{
				"- api on opa/server: 9 of 2009 responses were not served decisions: http_400: 7, wrong_decision: 2",
				"| 9 ! |",
				"`opa/inproc` (partial)",
				"- PARTIAL RESULT: the run was stopped before it finished (interrupted by interrupt)",
				"| rbac | `opa/server` | 4 workers | 5,123 ± 151 | 402µs |",
				"- api on opa/server: first http_400: status 400: {",
				"- api on opa/server: 3 responses took longer than 65.0s",
				"| 7.45µs | - | 11.2µs | ≥14.9µs | ≥22.4µs |",
			},
			rows:   "rbac rbac rbac api api api",
			counts: map[string]int{"≥": 3, ": first ": 2},
		},
		{
			name: "layers table", doc: layersDocument, format: "table", golden: "layers_table.golden", wide: true,
			must: []string{
				"Three layers: client latency, the server's handler, policy evaluation",
				"rbac      opa/server  2,000/s x64  client   20,000     400µs",
				"handler  2,000      150µs",
				"0.62 cores, 54 MB",
				"p90–p99  600µs–1.60ms    90         65 %     0 %           12 %     23 %",
				"> p99    1.60ms–8.00ms   10 (thin)  71 %     50 %          22 %     7 %",
				"rbac on opa/server, at 2,000 req/s: requests slower than p99 spent 71 % waiting (50 % queued before the send, 21 % in transport and the server's queues), 22 % in the handler outside evaluation, 7 % evaluating (10 sampled, thin)",
				"the sample keeps one in 2 of the 2,000 timed responses (1,000)",
				"3 sampled responses reported a handler time above their client latency",
				"api       opa/server  8 workers    client   50,000",
				"in open loop the send's delay after its intended time, since latency runs from it: the generator's own lateness and the wait for a free connection, shown as queued",
			},
			rows: "rbac api",
			// The api run predates attribution: layers, no bands.
			counts: map[string]int{"≤ p50": 1, "(thin) marks": 1, "(thin)": 3, ", thin)": 1, " \n": 0},
		},
		{
			name: "layers markdown", doc: layersDocument, format: "markdown", golden: "layers_markdown.golden",
			must: []string{
				"**Three layers: client latency, the server's handler, policy evaluation**\n\n| Workload | Target | Load | Layer | responses | P50 | P75 | P90 | P95 | P99 | P99.9 | P99.99 | mean | SUT CPU, RSS |\n|---|",
				"|  |  |  | eval | 2,000 | 100µs | 120µs | 150µs | 200µs | 400µs | 900µs | 1.50ms | 130µs |  |",
				"|  |  |  | > p99 | 1.60ms–8.00ms | 10 (thin) | 71 % | 50 % | 22 % | 7 % | 3.00ms | 870µs | 210µs |",
				"- rbac on opa/server, at 2,000 req/s: requests slower than p99 spent 71 % waiting",
			},
			rows:   "rbac api",
			counts: map[string]int{"≤ p50": 1},
		},
		{
			name: "ramp table", doc: rampDocument, format: "table", golden: "ramp_table.golden",
			must: []string{
				"Ramp, interval by interval: rbac on opa/server, under stages 100→1000/3s",
				"0s–1s     100–400      250  250   0       0 (0)               0       500µs   2.00ms  4.00ms  met",
				"2s–3s     700–1,000    850  850   0       20 (0)              0       40.0ms  160ms   320ms   BROKE: p99 160ms > 50ms",
				"rbac on opa/server, under stages 100→1000/3s: ramp estimate 550 req/s, the mean rate of the last interval that met the SLO (400–700 req/s) before the first that broke it (700–1,000 req/s)",
				"the estimate is an upper bound, not a capacity: latency lags a rising rate",
			},
			// The ramp and its probe are no series of rates: no finding reads one from them.
			counts: map[string]int{"Ramp, interval by interval": 1, "BROKE": 1, "held every rate": 0},
		},
		{
			name: "ramp markdown", doc: rampDocument, format: "markdown", golden: "ramp_markdown.golden",
			must: []string{
				"**Ramp, interval by interval: rbac on opa/server, under stages 100→1000/3s**\n\n| interval | rate, req/s | due | sent | unsent | late (generator's) | errors | P50 | P99 | P99.9 | SLO |\n|---|",
				"| 1s–2s | 400–700 | 550 | 550 | 0 | 3 (0) | 0 | 900µs | 3.60ms | 7.20ms | met |",
				"- rbac on opa/server, under stages 100→1000/3s: ramp estimate 550 req/s",
			},
			rows:   "rbac rbac",
			counts: map[string]int{"BROKE": 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Lookup(tc.format)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wide {
				f = f.Widened()
			}
			var b bytes.Buffer
			if err := f.Render(&b, tc.doc()); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, tc.golden, b.Bytes())
			out := unwrapNotes(b.String())
			for _, m := range tc.must {
				if !strings.Contains(out, m) {
					t.Errorf("output lacks %q", m)
				}
			}
			for s, n := range tc.counts {
				if got := strings.Count(out, s); got != n {
					t.Errorf("%d times %q, want %d", got, s, n)
				}
			}
			if got := rowOrder(out); got != tc.rows {
				t.Errorf("rows by workload %q, want %q", got, tc.rows)
			}
		})
	}
}

// TestRenderCompleteDocumentHasNoPartialMarks: the same document finished and without errors
// says nothing about partial results or errors.
func TestRenderCompleteDocumentHasNoPartialMarks(t *testing.T) {
	doc := twoWorkloadsDocument()
	doc.Interrupted, doc.StopReason = false, ""
	for i := range doc.Runs {
		r := &doc.Runs[i]
		r.Partial, r.Error = false, ""
		r.Summary.Errors, r.Summary.WrongDecision, r.Summary.ErrorClasses = 0, 0, map[string]uint64{}
		r.Summary.Requests = r.Summary.OK
	}
	for _, name := range []string{"table", "markdown"} {
		t.Run(name, func(t *testing.T) {
			f, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := f.Render(&b, doc); err != nil {
				t.Fatal(err)
			}
			for _, mustNot := range []string{"PARTIAL", "(partial)", "!", "not served decisions", "http_400", "wrong_decision"} {
				if strings.Contains(b.String(), mustNot) {
					t.Errorf("output of a complete, clean run contains %q:\n%s", mustNot, b.String())
				}
			}
		})
	}
}
