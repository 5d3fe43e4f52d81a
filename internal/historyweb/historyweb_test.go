package historyweb

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/history"
	"github.com/authzbench/authzbench/internal/result"
)

// The test history: 40 commits on main, 3 repetitions each, of two series measured in one
// document per commit: rbac on opa/server, whose service time steps 15 % slower at commit 20,
// and nop on cedar/server, the same all along (an A/A series). The documents are generated
// with known distributions rather than measured, as history's own change tests are: real runs
// on a shared 2-core machine would be too slow and too noisy for 40 commits.
const (
	commits  = 40
	stepAt   = 20
	stepBy   = 1.15
	rbacUS   = 800.0
	nopUS    = 300.0
	noiseRel = 0.02
)

// commitOf is the i-th commit's hash: two digits, then a's, so that a 4-character prefix names
// one commit.
func commitOf(i int) string { return fmt.Sprintf("%02d", i) + strings.Repeat("a", 38) }

func hdrOf(serviceUS float64) string {
	h := hdrhistogram.New(1, 60e9, 3)
	h.RecordValues(int64(serviceUS*1e3), 98)
	h.RecordValues(int64(1.5*serviceUS*1e3), 2)
	s, err := result.EncodeHistogram(h)
	if err != nil {
		panic(err)
	}
	return s
}

func runOf(target, workload string, created time.Time, serviceUS []float64) result.Run {
	run := result.Run{Target: target, Workload: workload, Load: result.Load{Model: result.ClosedLoop, Workers: 4, DurationS: 1}}
	merged := hdrhistogram.New(1, 60e9, 3)
	var rps []float64
	for i, s := range serviceUS {
		rep := result.Repetition{ID: result.NewRepetitionID(), Requests: 1000, OK: 1000, ElapsedS: 1,
			ThroughputRPS: 4e6 / s, LatencyUS: result.Percentiles{P50: s, P90: 1.2 * s, P99: 1.5 * s, P999: 2 * s},
			HDR: hdrOf(s), Started: created.Add(time.Duration(i) * time.Second)}
		run.Repetitions = append(run.Repetitions, rep)
		h, _ := result.DecodeHistogram(rep.HDR)
		merged.Merge(h)
		run.Summary.Requests += rep.Requests
		run.Summary.OK += rep.OK
		rps = append(rps, rep.ThroughputRPS)
	}
	run.Summary.ThroughputRPS = result.SpreadOf(rps)
	run.Summary.LatencyUS = result.PercentilesOf(merged, 0)
	return run
}

// testHistory builds the test history in a fresh SQLite file.
func testHistory(t testing.TB) history.Store {
	t.Helper()
	return testHistoryWith(t, func(int, *result.Env) {})
}

// testHistoryWith builds the test history, each commit's environment edited first.
func testHistoryWith(t testing.TB, edit func(commit int, env *result.Env)) history.Store {
	t.Helper()
	ctx := context.Background()
	st, err := history.Open(ctx, filepath.Join(t.TempDir(), "history.db"), history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rng := rand.New(rand.NewPCG(27, 3))
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	noisy := func(level float64) []float64 {
		var out []float64
		for range 3 {
			out = append(out, level*(1+noiseRel*rng.NormFloat64()))
		}
		return out
	}
	for i := range commits {
		created := start.Add(time.Duration(i) * time.Hour)
		rbac := rbacUS
		if i >= stepAt {
			rbac *= stepBy
		}
		doc := &result.Document{Schema: result.Schema, Created: created, Scenario: "test",
			Env:  result.Env{CPUModel: "Test CPU", Cores: 2, Kernel: "6.1", Pinning: "none", Commit: commitOf(i)},
			Runs: []result.Run{runOf("opa/server", "rbac", created, noisy(rbac)), runOf("cedar/server", "nop", created, noisy(nopUS))}}
		edit(i, &doc.Env)
		body, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		in, err := history.ParseInput(fmt.Sprintf("commit-%02d.json", i), body, "main")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Add(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// seriesIDs are the test history's series by workload.
func seriesIDs(t testing.TB, st history.Store) map[string]int64 {
	t.Helper()
	all, err := st.Series(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, se := range all {
		out[se.Workload] = se.ID
	}
	if len(out) != 2 {
		t.Fatalf("the test history has series %v, want rbac and nop", out)
	}
	return out
}

func get(t *testing.T, srv *httptest.Server, path string) (int, string, http.Header) {
	t.Helper()
	res, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(body), res.Header
}

func count(page, s string) int { return strings.Count(page, s) }

// The series list: both series, each with its sparkline, and the step's change first among
// the changes, at the commit where it began, as a regression of p50 and p99 and throughput,
// with a link to the comparison with the commit before. The A/A series has no change.
func TestIndex(t *testing.T) {
	st := testHistory(t)
	srv := httptest.NewServer(Handler(st, Options{}))
	defer srv.Close()
	status, page, header := get(t, srv, "/")
	if status != http.StatusOK {
		t.Fatalf("GET / = %d:\n%s", status, page)
	}
	if csp := header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q: want default-src 'none' (the page loads nothing)", csp)
	}
	if n := count(page, `<tr class="series-row">`); n != 2 {
		t.Errorf("%d series rows, want 2", n)
	}
	if n := count(page, `class="chart spark"`); n != 2 {
		t.Errorf("%d sparklines, want 2", n)
	}
	changes := regexp.MustCompile(`(?s)<tr class="change">.*?</tr>`).FindAllString(page, -1)
	if len(changes) == 0 {
		t.Fatalf("no change listed; the rbac series steps %.0f %% at commit %d:\n%s", (stepBy-1)*100, stepAt, page)
	}
	figures := map[string]bool{}
	for _, c := range changes {
		if !strings.Contains(c, "rbac") {
			t.Errorf("a change in the A/A series: %s", c)
		}
		if !strings.Contains(c, "<code>"+commitOf(stepAt)[:10]+"</code>") || !strings.Contains(c, "regression") {
			t.Errorf("a change that is not the step's regression at %s: %s", commitOf(stepAt)[:10], c)
		}
		if !strings.Contains(c, `href="/compare?base=`+commitOf(stepAt-1)+`&amp;new=`+commitOf(stepAt)+`&amp;series=`) {
			t.Errorf("the change links no comparison with the commit before: %s", c)
		}
		for _, f := range []string{"p50", "p99", "throughput"} {
			if strings.Contains(c, `<td class="figure">`+f+"</td>") {
				figures[f] = true
			}
		}
	}
	if len(figures) != 3 {
		t.Errorf("changes found in %v; want p50, p99 and throughput", figures)
	}
}

// A series page: the latency chart with a band and a median line for P50 and for P99, one
// titled point per commit and figure saying the commit and its values, the change marked at
// its commit; a table of the commits with links to their reports; and the A/A series' page
// says it found no change.
func TestSeriesPage(t *testing.T) {
	st := testHistory(t)
	ids := seriesIDs(t, st)
	srv := httptest.NewServer(Handler(st, Options{}))
	defer srv.Close()

	status, page, _ := get(t, srv, fmt.Sprintf("/series/%d", ids["rbac"]))
	if status != http.StatusOK {
		t.Fatalf("series page = %d:\n%s", status, page)
	}
	latency := regexp.MustCompile(`(?s)<svg[^>]*id="trend-latency".*?</svg>`).FindString(page)
	if latency == "" {
		t.Fatalf("no latency chart:\n%s", page)
	}
	if n := count(latency, `<g class="band`); n != 2 {
		t.Errorf("%d bands in the latency chart, want 2 (P50, P99)", n)
	}
	if n := count(latency, `<polyline`); n != 2 {
		t.Errorf("%d median lines, want 2", n)
	}
	if n := count(latency, `<circle class="point"`); n != 2*commits {
		t.Errorf("%d points, want %d (a point per commit and figure)", n, 2*commits)
	}
	tip := fmt.Sprintf("<title>commit %s, ", commitOf(stepAt)[:10])
	if !strings.Contains(latency, tip) || !strings.Contains(latency, "over 3 repetitions</title>") {
		t.Errorf("no point titled with commit %s and its repetitions' range", commitOf(stepAt)[:10])
	}
	if !regexp.MustCompile(`<g class="knee change"><title>p50 \+1[0-9]% at ` + commitOf(stepAt)[:10]).MatchString(latency) {
		t.Errorf("the change is not marked at %s in the latency chart", commitOf(stepAt)[:10])
	}
	if !strings.Contains(page, `id="trend-throughput"`) {
		t.Error("no throughput chart")
	}
	if n := count(page, `<tr class="point">`); n != commits {
		t.Errorf("%d commits in the table, want %d", n, commits)
	}
	if !strings.Contains(page, `<a href="/report/1">report 1</a>`) {
		t.Error("the first commit links no report")
	}

	_, aa, _ := get(t, srv, fmt.Sprintf("/series/%d", ids["nop"]))
	if !strings.Contains(aa, `id="no-changes"`) || strings.Contains(aa, `<li class="change">`) {
		t.Error("the A/A series' page lists a change")
	}
}

// Any stored run's report is the report's own HTML; two commits compare as compare does.
func TestReportAndCompare(t *testing.T) {
	st := testHistory(t)
	srv := httptest.NewServer(Handler(st, Options{}))
	defer srv.Close()

	status, page, _ := get(t, srv, "/report/3")
	if status != http.StatusOK || !strings.Contains(page, `id="findings"`) || !strings.Contains(page, "commit "+commitOf(2)[:12]) && !strings.Contains(page, commitOf(2)[:12]) {
		t.Errorf("/report/3 = %d, want the HTML report of commit %s:\n%.2000s", status, commitOf(2), page)
	}

	status, page, _ = get(t, srv, "/compare?base="+commitOf(stepAt - 1)[:4]+"&new="+commitOf(stepAt)[:4])
	if status != http.StatusOK {
		t.Fatalf("compare = %d:\n%s", status, page)
	}
	rows := regexp.MustCompile(`(?s)<tbody>.*?</tbody>`).FindString(page)
	if count(rows, "<tr") != 2 {
		t.Errorf("compare table rows:\n%s\nwant 2 (rbac and nop)", rows)
	}
	if !strings.Contains(page, `<a href="/report/`+fmt.Sprint(stepAt+1)+`">`) {
		t.Errorf("the comparison links no report of the new commit's document %d", stepAt+1)
	}

	// From a series' page: its runs only (3 repetitions a side are too few for compare's test
	// to call the step: its row says "?").
	ids := seriesIDs(t, st)
	status, page, _ = get(t, srv, fmt.Sprintf("/compare?base=%s&new=%s&series=%d", commitOf(stepAt-1), commitOf(stepAt), ids["rbac"]))
	if status != http.StatusOK {
		t.Fatalf("compare of a series = %d:\n%s", status, page)
	}
	rows = regexp.MustCompile(`(?s)<tbody>.*?</tbody>`).FindString(page)
	if count(rows, "<tr") != 1 || !strings.Contains(rows, `<td>rbac</td>`) {
		t.Errorf("compare of the rbac series at the step:\n%s\nwant its one row", rows)
	}
}

// Every wrong address gets a page saying what is wrong, with the status that says it.
func TestBadRequests(t *testing.T) {
	st := testHistory(t)
	srv := httptest.NewServer(Handler(st, Options{}))
	defer srv.Close()
	for _, c := range []struct {
		path   string
		status int
		says   string
	}{
		{"/series/999", 404, "no series 999"},
		{"/series/x", 400, "not a number"},
		{"/series/1?branch=nope", 404, `no commits on branch &#34;nope&#34;`},
		{"/report/999", 404, "no such document"},
		{"/report/x", 400, "not a number"},
		{"/compare", 400, "compare needs two commits"},
		{"/compare?base=aa&new=" + commitOf(1), 400, "at least 4 characters"},
		{"/compare?base=ffff&new=" + commitOf(1), 404, "no commit"},
		{"/nothing", 404, "no such page"},
	} {
		t.Run(c.path, func(t *testing.T) {
			status, page, _ := get(t, srv, c.path)
			if status != c.status || !strings.Contains(page, c.says) {
				t.Errorf("GET %s = %d, want %d saying %q:\n%.1500s", c.path, status, c.status, c.says, page)
			}
		})
	}
	res, err := srv.Client().Post(srv.URL+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST / = %d, want 405: the pages only read", res.StatusCode)
	}
}

// stalledStore is a history whose reads wait until the request gives up.
type stalledStore struct{ history.Store }

func (stalledStore) Series(ctx context.Context) ([]history.Series, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A page that cannot be built in time is answered 503 when the time is up, not left hanging.
func TestEveryRequestBounded(t *testing.T) {
	st := testHistory(t)
	srv := httptest.NewServer(Handler(stalledStore{st}, Options{Timeout: 200 * time.Millisecond}))
	defer srv.Close()
	// The client gives up long after the bound, so an unbounded handler fails the test
	// rather than hanging it.
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := client.Get(srv.URL + "/")
	if err != nil {
		t.Fatalf("a stalled store: no answer: %v", err)
	}
	defer res.Body.Close()
	page, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(page), "timed out") {
		t.Errorf("a stalled store: %d, want 503 saying it timed out:\n%s", res.StatusCode, page)
	}
}

// The series list grouped by workload, each row naming its target, load, testbed and branch,
// and filtered on the server by workload, target and testbed (a form that works without
// script); a filter that matches nothing says so.
func TestIndexGroupsAndFilters(t *testing.T) {
	st := testHistory(t)
	srv := httptest.NewServer(Handler(st, Options{}))
	defer srv.Close()
	_, page, _ := get(t, srv, "/")
	groups := regexp.MustCompile(`<h3 class="workload" id="workload-(\w+)">`).FindAllStringSubmatch(page, -1)
	if len(groups) != 2 || groups[0][1] != "nop" || groups[1][1] != "rbac" {
		t.Fatalf("groups %v, want nop and rbac", groups)
	}
	for _, want := range []string{`<option value="cedar/server">`, `<option value="test-2c">`, `<td title="test-2c: Test CPU, 2 cores, kernel 6.1, pinning none">test-2c</td>`, "<td>main, 40 commits</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the list lacks %q", want)
		}
	}
	for _, tc := range []struct {
		query     string
		rows      int
		changes   bool
		noneMatch bool
	}{
		{"?workload=rbac", 1, true, false},
		{"?target=cedar%2Fserver", 1, false, false},
		{"?testbed=test-2c&workload=nop", 1, false, false},
		{"?testbed=other", 0, false, true},
	} {
		status, page, _ := get(t, srv, "/"+tc.query)
		if status != http.StatusOK || count(page, `<tr class="series-row">`) != tc.rows || (count(page, `<tr class="change">`) > 0) != tc.changes ||
			strings.Contains(page, `id="no-series"`) != tc.noneMatch || !strings.Contains(page, `<a href="/">every series</a>`) {
			t.Errorf("%s: status %d, %d rows, %d changes; want %d rows, changes %v", tc.query, status,
				count(page, `<tr class="series-row">`), count(page, `<tr class="change">`), tc.rows, tc.changes)
		}
	}
}

// A kernel that changed between two commits is marked on both of the series' charts and in its
// commit table, beside the change it coincides with, and history's changes say so too.
func TestSeriesPageMarksMachineChange(t *testing.T) {
	st := testHistoryWith(t, func(i int, env *result.Env) {
		if i >= stepAt {
			env.Kernel = "6.2"
		}
	})
	ids := seriesIDs(t, st)
	srv := httptest.NewServer(Handler(st, Options{}))
	defer srv.Close()
	_, page, _ := get(t, srv, fmt.Sprintf("/series/%d", ids["rbac"]))
	mark := `<g class="knee environment"><title>at ` + commitOf(stepAt)[:10] + `: kernel 6.1 → 6.2</title>`
	if n := count(page, mark); n != 2 {
		t.Errorf("%d charts mark the kernel's change, want 2 (latency, throughput)", n)
	}
	if n := count(page, `<small class="machine">kernel 6.1 → 6.2</small>`); n != 1 {
		t.Errorf("the commit table marks the kernel's change %d times, want once", n)
	}
	_, index, _ := get(t, srv, "/")
	if !strings.Contains(index, `<td class="machine">kernel 6.1 → 6.2</td>`) {
		t.Error("the latest changes do not say the kernel changed at their commit")
	}
}
