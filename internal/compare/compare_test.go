package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/result"
)

// shape is what one run's repetitions hold: most responses near the median, a tail of 3 %
// that sets p99 and p99.9.
type shape struct {
	target, workload string
	medianUS, tailUS float64
	rps              float64
	reps             int
}

// runOf builds a run the way authzbench records one: a histogram per repetition (each a little
// slower than the last, as a drifting machine makes them), the repetitions' percentiles read
// from their histograms, and the summary from the histograms merged.
func runOf(t *testing.T, s shape) result.Run {
	t.Helper()
	r := result.Run{Target: s.target, Workload: s.workload, Load: result.Load{Model: result.ClosedLoop, Workers: 4, DurationS: 1}}
	merged := hdrhistogram.New(1, int64(time.Minute), 3)
	var rpsSum float64
	var ok uint64
	for i := range s.reps {
		drift := 1 + 0.01*float64(i)
		h := hdrhistogram.New(1, int64(time.Minute), 3)
		for k := range 1000 {
			us := s.medianUS * drift * (1 + 0.001*float64(k%7))
			if k%100 < 3 {
				us = s.tailUS * drift
			}
			if err := h.RecordValue(int64(us * 1e3)); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := result.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		merged.Merge(h)
		rps := s.rps * (1 + 0.002*float64(i))
		rpsSum += rps
		ok += 1000
		r.Repetitions = append(r.Repetitions, result.Repetition{Requests: 1000, OK: 1000, ElapsedS: 1000 / rps, ThroughputRPS: rps,
			LatencyUS: result.PercentilesOf(h, 0), HDR: enc, Turn: i + 1})
	}
	r.Summary = result.Summary{Requests: ok, OK: ok, LatencyUS: result.PercentilesOf(merged, 0)}
	if s.reps > 0 {
		r.Summary.ThroughputRPS = result.Spread{Mean: rpsSum / float64(s.reps), N: s.reps}
	}
	return r
}

func docOf(runs ...result.Run) *result.Document {
	return &result.Document{Schema: result.Schema, Env: result.Env{CPUModel: "test CPU", Cores: 2, GOMAXPROCS: 2}, Runs: runs}
}

func mustGate(t *testing.T, expr string) Gate {
	t.Helper()
	g, err := ParseGate(expr)
	if err != nil {
		t.Fatalf("ParseGate(%q): %v", expr, err)
	}
	return g
}

// A p99 twice the base's over 5 repetitions each is flagged, in the right direction, with a
// p-value the test can reach; the median that did not move is within the noise; the gate on
// p99 fails and names the row and the figure.
func TestCompareFlagsDoubledP99(t *testing.T) {
	base := docOf(runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 5}))
	slower := docOf(runOf(t, shape{"opa/server", "rbac", 500, 4000, 3000, 5}))
	res := Compare("base.json", base, "new.json", slower, Options{})
	if len(res.Rows) != 1 || res.Rows[0].Problem != "" {
		t.Fatalf("rows %+v; want one comparable row", res.Rows)
	}
	row := res.Rows[0]
	p99 := row.Cell(P99)
	if !p99.Significant || !p99.Worse() || p99.Change < 0.95 || p99.Change > 1.05 || p99.P > 0.01 || p99.NBase != 5 || p99.NNew != 5 {
		t.Errorf("p99 %+v; want +100%%, significant at p≈0.008 over 5+5 repetitions", *p99)
	}
	if c := row.Cell(P50); c.Significant {
		t.Errorf("p50 %+v called; it did not move", *c)
	}
	if c := row.Cell(Throughput); c.Significant {
		t.Errorf("throughput %+v called; it did not move", *c)
	}

	v := mustGate(t, "p99>+10%,throughput<-5%").Check(res)
	if v.Passed || len(v.Failures) != 1 || v.Failures[0].Figure != P99 || !strings.Contains(v.Failures[0].Row, "rbac opa/server") {
		t.Fatalf("verdict %+v; want one failure, on p99 of rbac opa/server", v)
	}
	// A threshold beyond the change passes: the gate is about the threshold, not any change.
	if v := mustGate(t, "p99>+150%").Check(res); !v.Passed {
		t.Errorf("p99 +100%% failed a +150%% gate: %+v", v)
	}
	// The same change seen from the other side is an improvement, and passes.
	if v := mustGate(t, "p99>+10%").Check(Compare("new.json", slower, "base.json", base, Options{})); !v.Passed {
		t.Errorf("p99 halved failed the gate: %+v", v)
	}

	var out bytes.Buffer
	if err := NewReport(res, nil, &v).Write(&out, Table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+100.0% (p=0.008)", "gate p99>+10%,throughput<-5%: FAIL", "rbac opa/server 4 workers: p99:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// A result compared with itself passes, every figure of every row within the noise.
func TestCompareWithItself(t *testing.T) {
	doc := docOf(runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 5}), runOf(t, shape{"opa/inproc", "rbac", 60, 300, 25000, 5}))
	res := Compare("a.json", doc, "a.json", doc, Options{})
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(res.Rows))
	}
	for _, row := range res.Rows {
		if len(row.Cells) != len(Figures) {
			t.Fatalf("%s: %d figures, want %d", row.Name(), len(row.Cells), len(Figures))
		}
		for _, c := range row.Cells {
			if c.Significant || c.Untestable != "" || c.Change != 0 {
				t.Errorf("%s %s: %+v; want ~", row.Name(), c.Figure, c)
			}
		}
	}
	g := mustGate(t, "p99>+10%,throughput<-5%,p50>+1%,mean>+1%,p90>+1%,p999>+1%")
	v := g.Check(res)
	if !v.Passed {
		t.Errorf("a result failed against itself: %+v", v)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings comparing a result with itself: %v", res.Warnings)
	}
	var out bytes.Buffer
	if err := NewReport(res, g, &v).Write(&out, Markdown); err != nil {
		t.Fatal(err)
	}
	md := out.String()
	// Every Δ cell of both rows reads ~: six figures shown (the gate names them all) a row.
	if n := strings.Count(md, "| ~ (p=1.00)"); n != 12 {
		t.Errorf("%d ~ cells, want 12:\n%s", n, md)
	}
	if !strings.Contains(md, "pass** (2 rows)") {
		t.Errorf("markdown lacks the verdict:\n%s", md)
	}
}

// The gate never passes on nothing: a side without samples, a row one side lacks, repetitions
// too few for the test, wrong decisions, or no runs at all fail it, each with its reason.
func TestGateFailsOnWhatItCannotJudge(t *testing.T) {
	rbac := shape{"opa/server", "rbac", 500, 2000, 3000, 5}
	risk := shape{"opa/server", "risk", 5000, 20000, 500, 5}
	empty := runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 0})
	empty.Error = "start opa server: exit status 1"
	wrong := runOf(t, rbac)
	wrong.Summary.WrongDecision = 7
	timeouts := runOf(t, rbac)
	timeouts.Summary.Errors, timeouts.Summary.Requests = 30, timeouts.Summary.Requests+30
	for _, tc := range []struct {
		name      string
		base, new *result.Document
		want      string
	}{
		{"empty new side", docOf(runOf(t, rbac)), docOf(empty), "no samples to compare: new: 0 ok responses (start opa server: exit status 1)"},
		{"empty base side", docOf(empty), docOf(runOf(t, rbac)), "no samples to compare: base: 0 ok responses"},
		{"row missing from new", docOf(runOf(t, rbac), runOf(t, risk)), docOf(runOf(t, rbac)), "risk opa/server 4 workers: only in the base"},
		{"row missing from base", docOf(runOf(t, rbac)), docOf(runOf(t, rbac), runOf(t, risk)), "risk opa/server 4 workers: only in the new result"},
		{"three repetitions a side", docOf(runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 3})),
			docOf(runOf(t, shape{"opa/server", "rbac", 500, 8000, 3000, 3})), "p99: too few repetitions (base 3, new 3): the test cannot go below p=0.100; 4 a side"},
		{"wrong decisions", docOf(runOf(t, rbac)), docOf(wrong), "7 wrong decisions on the new side"},
		{"nothing on either side", docOf(), docOf(), "no runs on either side"},
		{"errors rose, the ok ones as fast", docOf(runOf(t, rbac)), docOf(timeouts), "errors rose from 0.00% to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := mustGate(t, "p99>+10%").Check(Compare("base.json", tc.base, "new.json", tc.new, Options{}))
			if v.Passed {
				t.Fatalf("gate passed; want it to fail with %q", tc.want)
			}
			var all []string
			for _, f := range v.Failures {
				all = append(all, f.String())
			}
			if !strings.Contains(strings.Join(all, "\n"), tc.want) {
				t.Errorf("failures %q; want one saying %q", all, tc.want)
			}
		})
	}
}

// Runs match by workload, target with its TLS mode, and load; ab matches across workloads.
func TestMatching(t *testing.T) {
	plain := runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 5})
	tls := runOf(t, shape{"opa/server", "rbac", 700, 2500, 2000, 5})
	tls.SUT.TLS = &result.TLS{Mode: "mtls"}
	eight := runOf(t, shape{"opa/server", "rbac", 900, 3000, 3500, 5})
	eight.Load.Workers = 8
	base := docOf(plain, tls, eight)
	// The new document lists them in another order: matching is by key, not position.
	res := Compare("b", base, "n", docOf(eight, plain, tls), Options{})
	if len(res.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(res.Rows))
	}
	for _, row := range res.Rows {
		if row.Problem != "" || row.Cell(P50).Change != 0 {
			t.Errorf("%s matched the wrong run: %+v", row.Name(), row)
		}
	}
	if got := res.Rows[1].Name(); got != "rbac opa/server mtls 4 workers" {
		t.Errorf("second row %q; want the mTLS run", got)
	}

	nop := runOf(t, shape{"opa/inproc", "nop", 10, 40, 100000, 5})
	risk := runOf(t, shape{"opa/inproc", "risk", 1000, 5000, 1500, 5})
	if res := Compare("a", docOf(nop), "b", docOf(risk), Options{}); len(res.Rows) != 2 {
		t.Errorf("nop and risk matched without IgnoreWorkload: %+v", res.Rows)
	}
	res = Compare("a", docOf(nop), "b", docOf(risk), Options{IgnoreWorkload: true})
	if len(res.Rows) != 1 || res.Rows[0].Workload != "nop → risk" || !res.Rows[0].Cell(P50).Worse() {
		t.Errorf("ab rows %+v; want one row nop → risk, P50 worse", res.Rows)
	}
}

func TestEnvironmentWarnings(t *testing.T) {
	a, b := docOf(runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 5})), docOf(runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 5}))
	b.Env.CPUModel, b.Env.GOMAXPROCS, b.Env.Pinning = "other CPU", 8, "generator on CPUs 0"
	b.Runs[0].SUT.Version = "v1.10.0"
	b.Runs[0].Summary.Errors, b.Runs[0].Summary.Requests = 12, 5012
	b.Runs[0].Summary.Open = &result.OpenSummary{RateMissed: true}
	a.Runs[0].SUT.Version = "v1.22.2"
	res := Compare("a", a, "b", b, Options{})
	joined := strings.Join(res.Warnings, "\n")
	for _, want := range []string{"CPU model differs: base test CPU, new other CPU", "GOMAXPROCS differs: base 2, new 8",
		"pinning differs: base (not recorded), new generator on CPUs 0", "rbac opa/server 4 workers: engine version differs: base v1.22.2, new v1.10.0",
		"rbac opa/server 4 workers: 12 of the new side's 5012 responses were not served decisions",
		"rbac opa/server 4 workers: the new side missed its rate"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
}

// With both sides' engines recorded by name, every engine's version is compared, one linked on
// one side only too; a side written before the engines map compares the OPA and cedar-go
// versions it recorded.
func TestEnvironmentWarningsNameEveryEngine(t *testing.T) {
	a, b := docOf(runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 5})), docOf(runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 5}))
	a.Env.OPA, b.Env.OPA = "1.22.2", "1.22.2"
	a.Env.Engines = map[string]string{"opa": "1.22.2", "openfga": "v1.22.1"}
	b.Env.Engines = map[string]string{"opa": "1.22.2", "openfga": "v1.23.0", "newengine": "v0.1.0"}
	joined := strings.Join(Compare("a", a, "b", b, Options{}).Warnings, "\n")
	for _, want := range []string{"openfga (linked) differs: base v1.22.1, new v1.23.0", "newengine (linked) differs: base "} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "opa (linked)") || strings.Contains(joined, "OPA (linked)") {
		t.Errorf("the same OPA on both sides is called a difference:\n%s", joined)
	}
	b.Env.Engines, b.Env.OPA = nil, "1.10.0"
	if joined := strings.Join(Compare("a", a, "b", b, Options{}).Warnings, "\n"); !strings.Contains(joined, "opa (linked) differs: base 1.22.2, new 1.10.0") {
		t.Errorf("without the engines map on one side, the opa field is not compared:\n%s", joined)
	}
}

// Open-loop runs sent by different engines are compared with a warning that says so: the event
// loop and the goroutines keep one schedule by different means, so lateness may differ by
// design. The same sender on both sides is no warning.
func TestEnvironmentWarningsNameADifferentOpenLoopSender(t *testing.T) {
	a, b := docOf(runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 5})), docOf(runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 5}))
	a.Runs[0].Summary.Open = &result.OpenSummary{Sender: "goroutines"}
	b.Runs[0].Summary.Open = &result.OpenSummary{Sender: "event_loop"}
	joined := strings.Join(Compare("a", a, "b", b, Options{}).Warnings, "\n")
	if !strings.Contains(joined, "open-loop sender differs: base goroutines, new event_loop") {
		t.Errorf("warnings lack the senders:\n%s", joined)
	}
	b.Runs[0].Summary.Open.Sender = "goroutines"
	if joined := strings.Join(Compare("a", a, "b", b, Options{}).Warnings, "\n"); strings.Contains(joined, "sender") {
		t.Errorf("the same sender on both sides is called a difference:\n%s", joined)
	}
}

func TestJSONCarriesTheVerdict(t *testing.T) {
	doc := docOf(runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 5}))
	res := Compare("a", doc, "b", docOf(), Options{})
	g := mustGate(t, "p99>+10%")
	v := g.Check(res)
	var out bytes.Buffer
	if err := NewReport(res, g, &v).Write(&out, JSON); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Rows []Row   `json:"rows"`
		Gate Verdict `json:"gate"`
	}
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if back.Gate.Passed || len(back.Rows) != 1 || back.Rows[0].Missing != "new" {
		t.Errorf("json %s; want the missing row and a failed gate", out.String())
	}
}

func TestParseGate(t *testing.T) {
	g, err := ParseGate(" p99>+10% , throughput<-5%,P50>7.5%")
	if err != nil {
		t.Fatal(err)
	}
	want := Gate{{P99, true, 10}, {Throughput, false, -5}, {P50, true, 7.5}}
	if len(g) != len(want) {
		t.Fatalf("%+v, want %+v", g, want)
	}
	for i := range want {
		if g[i] != want[i] {
			t.Errorf("clause %d %+v, want %+v", i, g[i], want[i])
		}
	}
	for _, tc := range []struct{ expr, want string }{
		{"", "empty expression"},
		{"  ", "empty expression"},
		{"p98>+10%", `"p98>+10%": unknown figure "p98"; known: throughput, p50, p90, p99, p999, mean`},
		{"p99>+10%,", `"": empty clause`},
		{"p99+10%", `"p99+10%": no operator`},
		{">+10%", `">+10%": no figure before ">"`},
		{"p99>=+10%", `"p99>=+10%": operator ">=": want >`},
		{"p99=10%", `"p99=10%": operator "=": want >`},
		{"p99>+10", `"p99>+10": "+10": want a percentage`},
		{"p99>ten%", `"p99>ten%": "ten%": not a number`},
		{"throughput<-100%", `"throughput<-100%": "-100%": a figure cannot fall by 100% or more`},
		{"p99>+10%,p99>+10%", `"p99>+10%": given twice`},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := ParseGate(tc.expr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseGate(%q) = %v; want an error containing %q", tc.expr, err, tc.want)
			}
		})
	}
}

func TestUntestable(t *testing.T) {
	for _, tc := range []struct {
		n1, n2 int
		ok     bool
	}{{0, 5, false}, {3, 3, false}, {3, 4, false}, {4, 4, true}, {3, 5, true}, {2, 8, true}, {2, 7, false}, {1, 38, false}, {1, 40, true}} {
		if got := untestable(tc.n1, tc.n2, DefaultAlpha) == ""; got != tc.ok {
			t.Errorf("untestable(%d, %d): testable %t, want %t (min p %.4f)", tc.n1, tc.n2, got, tc.ok, minUTestP(tc.n1, tc.n2))
		}
	}
}

func FuzzParseGate(f *testing.F) {
	for _, s := range []string{"p99>+10%", "throughput<-5%,p50>1%", ">", "p99>%", "mean<-99.9%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		g, err := ParseGate(expr)
		if err != nil {
			return
		}
		// What parses prints as an expression that parses to the same gate.
		again, err := ParseGate(g.String())
		if err != nil || len(again) != len(g) {
			t.Fatalf("%q parsed to %q, which reparses to %v, %v", expr, g.String(), again, err)
		}
		for i := range g {
			if again[i] != g[i] {
				t.Fatalf("%q: clause %d %+v reparsed as %+v", expr, i, g[i], again[i])
			}
		}
	})
}

// A percentile with few responses beyond it on either side is marked, in the cell and the table.
func TestThinTailsAreMarked(t *testing.T) {
	base := runOf(t, shape{"opa/cli", "rbac", 30000, 60000, 60, 5})
	base.Summary.LatencyBeyond = &result.Beyond{Samples: 300, P50: 150, P90: 30, P99: 3, P999: 0}
	res := Compare("a", docOf(base), "b", docOf(runOf(t, shape{"opa/cli", "rbac", 30000, 60000, 60, 5})), Options{})
	row := res.Rows[0]
	for f, want := range map[Figure]bool{P50: false, P90: false, P99: true, P999: true, Throughput: false} {
		if got := row.Cell(f).Thin; got != want {
			t.Errorf("%s thin %t, want %t", f, got, want)
		}
	}
	var out bytes.Buffer
	if err := NewReport(res, nil, nil).Write(&out, Table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "≥ 61.8ms → 61.8ms") || !strings.Contains(out.String(), "≥ marks a percentile with fewer than 10") {
		t.Errorf("table does not mark the thin P99:\n%s", out.String())
	}
}

// The HTML table the history's pages show: the runs both sides hold in the table, a
// significant change's row marked, the runs one side holds folded under it (and not repeated in
// the notes), every text escaped.
func TestWriteHTML(t *testing.T) {
	base := runOf(t, shape{"opa/server", "rbac", 500, 2000, 3000, 5})
	slower := runOf(t, shape{"opa/server", "rbac", 1000, 4000, 1500, 5})
	alone := runOf(t, shape{"opa/server", "<b>risk</b>", 900, 3000, 1000, 5})
	var b strings.Builder
	if err := NewReport(Compare("base.json", docOf(base), "new.json", docOf(slower, alone), Options{}), Gate{}, nil).WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	table := page[:strings.Index(page, "</table>")]
	if strings.Count(table, "<tr") != 2 || !strings.Contains(table, `<tr class="changed"><td>rbac</td>`) {
		t.Errorf("want a header and rbac's row marked changed:\n%s", table)
	}
	if !strings.Contains(page, `<summary>1 run only one side holds</summary>`) || strings.Count(page, "only in the new result") != 1 {
		t.Errorf("the run only the new side holds is not folded once under the table:\n%s", page)
	}
	if strings.Contains(page, "<b>risk") || !strings.Contains(page, "&lt;b&gt;risk&lt;/b&gt;") {
		t.Errorf("a workload's name is not escaped:\n%s", page)
	}
}

// Sides whose engine had other caches on, or whose inputs were drawn otherwise, are compared
// with a warning that says so: a cache answers repeated checks without the work, and the skew
// sets how often they repeat. The same on both sides is no warning.
func TestEnvironmentWarningsNameOtherCachesAndSkew(t *testing.T) {
	a, b := docOf(runOf(t, shape{"openfga/inproc", "rbac", 500, 2000, 3000, 5})), docOf(runOf(t, shape{"openfga/inproc", "rbac", 500, 2000, 3000, 5}))
	a.Runs[0].SUT.Caches = []result.Cache{{Name: "check_query_cache"}}
	b.Runs[0].SUT.Caches = []result.Cache{{Name: "check_query_cache", On: true, TTLS: 10}}
	b.Runs[0].Load.InputSkew = "hot:90/10"
	joined := strings.Join(Compare("a", a, "b", b, Options{}).Warnings, "\n")
	for _, want := range []string{"caches on differs: base none, new check_query_cache", "input skew differs: base cycle, new hot:90/10"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
	b.Runs[0].SUT.Caches[0].On, b.Runs[0].Load.InputSkew = false, ""
	if joined := strings.Join(Compare("a", a, "b", b, Options{}).Warnings, "\n"); strings.Contains(joined, "caches") || strings.Contains(joined, "skew") {
		t.Errorf("the same caches and draw on both sides are called a difference:\n%s", joined)
	}
}
