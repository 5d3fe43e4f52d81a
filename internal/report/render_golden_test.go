package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// The -update flag is declared in report_test.go; run
//
//	go test ./internal/report -run Golden -update
//
// to rewrite the golden files, then read the diff before committing.

// twoWorkloadsDocument is two workloads (rbac, api) through three targets, built by hand so it
// is the same on every machine: one run with errors, one partial run, and the document itself
// interrupted.
func twoWorkloadsDocument() *result.Document {
	run := func(workload, target string, workers int, rps, sd float64, n int, p50 float64) result.Run {
		return result.Run{
			Target: target, Workload: workload,
			Load: result.Load{Model: "closed", Workers: workers, DurationS: 4, WarmupS: 1},
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

// compareGolden compares got with testdata/name, rewriting it under -update.
func compareGolden(t *testing.T, name string, got []byte) {
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
		t.Errorf("%s differs (check, then run with -update):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestRenderTwoWorkloadsGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer, *result.Document) error
		golden string
		// must is what a reader has to be able to find, whatever the layout.
		must []string
	}{
		{
			name:   "table",
			render: func(b *bytes.Buffer, d *result.Document) error { return Table(b, d) },
			golden: "two_workloads_table.golden",
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
		},
		{
			name:   "markdown",
			render: func(b *bytes.Buffer, d *result.Document) error { return Markdown(b, d) },
			golden: "two_workloads_markdown.golden",
			must: []string{
				"- api on opa/server: 9 of 2009 responses were not served decisions: http_400: 7, wrong_decision: 2",
				"| 9 ! |",
				"`opa/inproc (partial)`",
				"- PARTIAL RESULT: the run was stopped before it finished (interrupted by interrupt)",
				"| rbac | `opa/server` | 4 workers | 5,123 ± 151 | 402µs |",
				"- api on opa/server: first http_400: status 400: {",
				"- api on opa/server: 3 responses took longer than 65.0s",
				"| 7.45µs | - | 11.2µs | ≥14.9µs | ≥22.4µs |",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.render(&b, twoWorkloadsDocument()); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, tc.golden, b.Bytes())
			for _, m := range tc.must {
				if !strings.Contains(b.String(), m) {
					t.Errorf("output lacks %q", m)
				}
			}
			// Two thin percentiles in the short run's row and its note; none in the long run's,
			// nor in runs whose documents predate the counts.
			if n := strings.Count(b.String(), "≥"); n != 3 {
				t.Errorf("%d ≥ marks, want 3 (two cells and a note)", n)
			}
			if n := strings.Count(b.String(), ": first "); n != 2 {
				t.Errorf("%d first messages, want 2", n)
			}
			// One table row per run, in the document's order: the rows are the lines with a
			// ratio column, after the header, and before the notes (one of which explains it).
			var order []string
			for i, line := range strings.Split(b.String(), "\n") {
				if i > 0 && strings.Contains(line, "×") && !strings.Contains(line, "× vs first:") {
					order = append(order, strings.Fields(strings.Trim(line, "| "))[0])
				}
			}
			if got, want := strings.Join(order, " "), "rbac rbac rbac api api api"; got != want {
				t.Errorf("rows by workload %q, want %q", got, want)
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
	for name, render := range map[string]func(*bytes.Buffer, *result.Document) error{
		"table":    func(b *bytes.Buffer, d *result.Document) error { return Table(b, d) },
		"markdown": func(b *bytes.Buffer, d *result.Document) error { return Markdown(b, d) },
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := render(&b, doc); err != nil {
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

func TestDurationUnits(t *testing.T) {
	for _, tc := range []struct {
		us   float64
		want string
	}{
		{0, "0ns"},
		{0.001, "1ns"},
		{0.5, "500ns"},
		{0.9994, "999ns"},
		{1, "1.00µs"},
		{6.93, "6.93µs"},
		{9.994, "9.99µs"},
		{9.996, "10.0µs"},
		{12.3, "12.3µs"},
		{99.94, "99.9µs"},
		{99.96, "100µs"},
		{181, "181µs"},
		{999.4, "999µs"},
		{999.7, "1.00ms"},
		{1000, "1.00ms"},
		{1500, "1.50ms"},
		{13600, "13.6ms"},
		{999_400, "999ms"},
		{999_700, "1.00s"},
		{2.5e6, "2.50s"},
		{60e6, "60.0s"},
	} {
		t.Run(fmt.Sprint(tc.us), func(t *testing.T) {
			if got := Duration(tc.us); got != tc.want {
				t.Errorf("Duration(%v) = %q, want %q", tc.us, got, tc.want)
			}
		})
	}
}

// TestDurationRoundsUpIntoTheNextUnit: just below 1 µs, the value rounds to 1000 ns; like
// 999.7 µs → 1.00ms, it should read 1.00µs.
func TestDurationRoundsUpIntoTheNextUnit(t *testing.T) {
	for _, us := range []float64{0.9995, 0.9996, 0.9999} {
		if got := Duration(us); got != "1.00µs" {
			t.Errorf("Duration(%v) = %q, want \"1.00µs\"", us, got)
		}
	}
}

func TestSignedDuration(t *testing.T) {
	for _, tc := range []struct {
		us   float64
		want string
	}{{0, "+0ns"}, {69, "+69.0µs"}, {-12.3, "-12.3µs"}, {4570, "+4.57ms"}, {-1500, "-1.50ms"}} {
		t.Run(fmt.Sprint(tc.us), func(t *testing.T) {
			if got := signedDuration(tc.us); got != tc.want {
				t.Errorf("signedDuration(%v) = %q, want %q", tc.us, got, tc.want)
			}
		})
	}
}

// TestOverFloorShowsItsSpread: the floor column is the difference of two medians, so it carries
// the 95 % interval of that difference, and one whose interval includes 0 is marked, not called.
func TestOverFloorShowsItsSpread(t *testing.T) {
	run := func(workload string, p50s ...float64) result.Run {
		r := result.Run{Target: "opa/inproc", Workload: workload, Load: result.Load{Model: "closed", Workers: 2}}
		for _, p := range p50s {
			r.Repetitions = append(r.Repetitions, result.Repetition{OK: 100, LatencyUS: result.Percentiles{P50: p}})
		}
		var sum float64
		for _, p := range p50s {
			sum += p
		}
		r.Summary = result.Summary{OK: 100 * uint64(len(p50s)), LatencyUS: result.Percentiles{P50: sum / float64(len(p50s))}}
		return r
	}
	for _, tc := range []struct {
		name        string
		floor, runs result.Run
		want        string
	}{
		// nop 7, 8, 9 (sd 1); rbac 29, 30, 31 (sd 1): 22 ± t(4)·√(2/3) = 22 ± 2.27.
		{"called", run("nop", 7, 8, 9), run("rbac", 29, 30, 31), "+22.0µs ±2.27µs"},
		// The same medians' difference, 3 µs, inside a spread of tens: shown, marked, not called.
		{"within the noise", run("nop", 5, 20, 2), run("rbac", 2, 30, 4), "+3.00µs ±"},
		{"one repetition: no interval", run("nop", 8), run("rbac", 30), "+22.0µs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := overFloor(tc.runs, tc.floor)
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("overFloor = %q, want it to start %q", got, tc.want)
			}
			if noise := strings.HasSuffix(got, " ~"); noise != (tc.name == "within the noise") {
				t.Errorf("overFloor = %q: marked ~ %t, want %t", got, noise, !noise)
			}
			if hasInterval := strings.Contains(got, "±"); hasInterval == (tc.name == "one repetition: no interval") {
				t.Errorf("overFloor = %q: an interval %t", got, hasInterval)
			}
		})
	}
}

func TestThousandsSeparators(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0.0"},
		{0.04, "0.0"},
		{54.66, "54.7"},
		{99.94, "99.9"},
		{100, "100"},
		{999, "999"},
		{999.5, "1,000"},
		{1000, "1,000"},
		{5080.4, "5,080"},
		{12345.5, "12,346"},
		{187656, "187,656"},
		{999999.4, "999,999"},
		{1234567, "1,234,567"},
		{1e9, "1,000,000,000"},
	} {
		t.Run(fmt.Sprint(tc.v), func(t *testing.T) {
			if got := thousands(tc.v); got != tc.want {
				t.Errorf("thousands(%v) = %q, want %q", tc.v, got, tc.want)
			}
		})
	}
}

func TestClassListOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		classes map[string]uint64
		want    string
	}{
		{"none", nil, ""},
		{"one", map[string]uint64{"timeout": 1}, "timeout: 1"},
		{"largest first", map[string]uint64{"wrong_decision": 2, "http_400": 7}, "http_400: 7, wrong_decision: 2"},
		{"ties by name", map[string]uint64{"http_503": 3, "http_400": 3, "exit_1": 3, "transport": 9},
			"transport: 9, exit_1: 3, http_400: 3, http_503: 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClassList(tc.classes); got != tc.want {
				t.Errorf("ClassList(%v) = %q, want %q", tc.classes, got, tc.want)
			}
		})
	}
}

func TestLoadLabel(t *testing.T) {
	for _, tc := range []struct {
		load result.Load
		want string
	}{
		{result.Load{Model: "closed", Workers: 1}, "1 worker"},
		{result.Load{Model: "closed", Workers: 8}, "8 workers"},
		{result.Load{Model: "open", Rate: 2000, Connections: 64}, "2,000/s x64"},
		{result.Load{Model: "open", Rate: 50, Connections: 1}, "50.0/s x1"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := loadLabel(tc.load); got != tc.want {
				t.Errorf("loadLabel(%+v) = %q, want %q", tc.load, got, tc.want)
			}
		})
	}
}
