package historyweb

import (
	"context"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/authzbench/authzbench/internal/compare"
	"github.com/authzbench/authzbench/internal/history"
	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
)

// indexPage is the series list: filters, the latest changes, then the series grouped by
// workload, each row with what tells it from its neighbours (target, load, testbed, branch).
type indexPage struct {
	Filter    indexFilter
	Choices   indexChoices
	Changes   []changeRow
	More      int // changes found beyond those shown
	Groups    []seriesGroup
	Shown     int // series shown, after the filter
	Total     int // series the history holds
	Alpha     float64
	MinEffect float64
}

// indexFilter is what the reader narrowed the list to (the form's query): "" for any.
type indexFilter struct{ Workload, Target, Testbed string }

func (f indexFilter) Any() bool { return f.Workload != "" || f.Target != "" || f.Testbed != "" }

func (f indexFilter) keeps(se history.Series) bool {
	return (f.Workload == "" || se.Workload == f.Workload) && (f.Target == "" || se.Target == f.Target) &&
		(f.Testbed == "" || se.Testbed.Name == f.Testbed)
}

// indexChoices are every value each filter can take, sorted.
type indexChoices struct{ Workloads, Targets, Testbeds []string }

type seriesGroup struct {
	Workload string
	Anchor   string
	Series   []seriesRow
}

type changeRow struct {
	SeriesID   int64
	Label      string
	Branch     string
	Figure     string
	Size       string
	Commit     string
	Previous   string
	When       string
	Regression bool
	CompareURL string
	Also       string // what changed in the machine or the build at the same commit
}

type seriesRow struct {
	ID         int64
	Target     string
	Load       string
	Testbed    string // its name
	TestbedAll string // the machine of its latest document, on hover
	Others     string // the other branches it was measured on
	Branch     string // the one the trend is drawn along
	Commits    int
	Last       string
	LastP99    string
	Trend      template.HTML
	Changes    int
}

func (s *server) index(r *http.Request) (*pageData, error) {
	ctx := r.Context()
	all, err := s.st.Series(ctx)
	if err != nil {
		return nil, err
	}
	changes, err := s.allChanges(ctx, all)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	o := s.o.Changes
	p := &indexPage{Filter: indexFilter{Workload: q.Get("workload"), Target: q.Get("target"), Testbed: q.Get("testbed")},
		Total: len(all), Alpha: orDefault(o.Alpha, history.DefaultAlpha), MinEffect: orDefault(o.MinEffect, history.DefaultMinEffect)}
	kept := map[int64]bool{}
	for _, se := range all {
		p.Choices.Workloads = appendNew(p.Choices.Workloads, se.Workload)
		p.Choices.Targets = appendNew(p.Choices.Targets, se.Target)
		p.Choices.Testbeds = appendNew(p.Choices.Testbeds, se.Testbed.Name)
		if p.Filter.keeps(se) {
			kept[se.ID] = true
		}
	}
	for _, c := range []*[]string{&p.Choices.Workloads, &p.Choices.Targets, &p.Choices.Testbeds} {
		slices.Sort(*c)
	}
	var latest []history.Change
	for _, c := range latestFirst(changes) {
		if kept[c.Series] {
			latest = append(latest, c)
		}
	}
	for i, c := range latest {
		if i == LatestChanges {
			p.More = len(latest) - i
			break
		}
		p.Changes = append(p.Changes, rowOf(c))
	}
	perSeries := map[int64]int{}
	for _, c := range changes {
		perSeries[c.Series]++
	}
	groups := map[string]*seriesGroup{}
	for _, se := range all {
		if !kept[se.ID] {
			continue
		}
		branch := branchOf(se, "")
		points, err := s.st.Points(ctx, se.ID, branch)
		if err != nil {
			return nil, err
		}
		p99 := medians(points, history.P99)
		row := seriesRow{ID: se.ID, Target: se.Target, Load: se.Load, Testbed: se.Testbed.Name,
			TestbedAll: testbedLabel(se.Testbed), Others: strings.Join(slices.DeleteFunc(slices.Clone(se.Branches), func(b string) bool { return b == branch }), ", "), Branch: branch, Commits: len(points),
			Last: se.Last.UTC().Format("2006-01-02 15:04"), Changes: perSeries[se.ID]}
		if n := len(p99); n > 0 && usable(p99[n-1]) {
			row.LastP99 = report.Duration(p99[n-1])
		}
		row.Trend = template.HTML(report.Sparkline(fmt.Sprintf("spark-%d", se.ID),
			fmt.Sprintf("p99 along %d commits of %s: %s", len(points), branch, spanOf(p99)), p99, 0))
		g := groups[se.Workload]
		if g == nil {
			g = &seriesGroup{Workload: se.Workload, Anchor: "workload-" + url.PathEscape(se.Workload)}
			groups[se.Workload] = g
		}
		g.Series = append(g.Series, row)
		p.Shown++
	}
	for _, w := range p.Choices.Workloads {
		if g := groups[w]; g != nil {
			sort.SliceStable(g.Series, func(i, j int) bool {
				a, b := g.Series[i], g.Series[j]
				if a.Target != b.Target {
					return a.Target < b.Target
				}
				if a.Load != b.Load {
					return a.Load < b.Load
				}
				return a.Testbed < b.Testbed
			})
			p.Groups = append(p.Groups, *g)
		}
	}
	return &pageData{Title: "authzbench history", Index: p}, nil
}

func appendNew(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

func orDefault(v, d float64) float64 {
	if v <= 0 {
		return d
	}
	return v
}

func usable(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// spanOf says a sparkline's range in words: "412µs to 1.2ms".
func spanOf(vs []float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if usable(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		return "no figures"
	}
	return report.Duration(lo) + " to " + report.Duration(hi)
}

// testbedLabel is the machine a testbed's latest document was measured on.
func testbedLabel(t history.Testbed) string {
	s := fmt.Sprintf("%s: %s, %d cores, kernel %s", t.Name, t.CPUModel, t.Cores, t.Kernel)
	if t.Pinning != "" {
		s += ", pinning " + t.Pinning
	}
	return s
}

func rowOf(c history.Change) changeRow {
	size := fmt.Sprintf("%s → %s", figureValue(c.Figure, c.Before), figureValue(c.Figure, c.After))
	if c.Relative != nil {
		size = fmt.Sprintf("%+.1f %% [%+.1f, %+.1f] (%s)", *c.Relative*100, c.CI95[0]*100, c.CI95[1]*100, size)
	}
	return changeRow{SeriesID: c.Series, Label: c.Label, Branch: c.Branch, Figure: string(c.Figure), Size: size,
		Commit: short(c.Commit), Previous: short(c.Previous), When: c.Time.UTC().Format("2006-01-02 15:04"),
		Regression: c.Regression, CompareURL: compareURL(c.Previous, c.Commit, c.Series), Also: history.DescribeChanges(c.Environment)}
}

// compareURL is the comparison of two commits, of one series' runs when series is not 0.
func compareURL(base, new string, series int64) string {
	if base == "" || new == "" {
		return ""
	}
	q := url.Values{"base": {base}, "new": {new}}
	if series != 0 {
		q.Set("series", strconv.FormatInt(series, 10))
	}
	return "/compare?" + q.Encode()
}

func figureValue(f history.Figure, v float64) string {
	switch f {
	case history.Throughput:
		return report.Thousands(v) + "/s"
	case history.ErrorRate:
		return fmt.Sprintf("%.2f %%", v*100)
	}
	return report.Duration(v)
}

// medians are a figure's median over each point's repetitions (NaN for a point with none).
func medians(points []history.Point, f history.Figure) []float64 {
	out := make([]float64, len(points))
	for i, p := range points {
		out[i] = quantiles(valuesOf(p, f))[1]
	}
	return out
}

// valuesOf is a figure's values over a point's repetitions, those the change search reads.
func valuesOf(p history.Point, f history.Figure) []float64 {
	var out []float64
	for _, r := range p.Repetitions {
		if v, ok := f.Of(r); ok {
			out = append(out, v)
		}
	}
	return out
}

// quantiles are the lowest, median and highest of values; NaN each when there are none.
func quantiles(values []float64) [3]float64 {
	if len(values) == 0 {
		return [3]float64{math.NaN(), math.NaN(), math.NaN()}
	}
	v := slices.Clone(values)
	sort.Float64s(v)
	mid := v[len(v)/2]
	if len(v)%2 == 0 {
		mid = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return [3]float64{v[0], mid, v[len(v)-1]}
}

// seriesPage is one series along one branch's commits.
type seriesPage struct {
	ID          int64
	Label       string
	Testbed     string
	TestbedName string
	Branch      string
	Branches    []string
	Latency     template.HTML
	Rate        template.HTML
	Changes     []changeRow
	Points      []pointRow
	Commits     []string // for the compare form, newest first
	Alpha       float64
	MinEffect   float64
}

type pointRow struct {
	Commit     string
	Full       string
	Dirty      bool
	When       string
	Reps       int
	P50, P99   string
	Throughput string
	Errors     string
	Documents  []int64
	CompareURL string // with the commit before
	Changed    []string
	// Machine is what changed in the machine or the build since the commit before; Facts the
	// whole environment its documents recorded, on hover.
	Machine []string
	Facts   string
}

func (s *server) series(r *http.Request) (*pageData, error) {
	ctx := r.Context()
	se, all, err := s.seriesByID(ctx, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	asked := r.URL.Query().Get("branch")
	if asked != "" && !slices.Contains(se.Branches, asked) {
		return nil, notFound("series %d has no commits on branch %q; it has %s", se.ID, asked, strings.Join(se.Branches, ", "))
	}
	branch := branchOf(se, asked)
	points, err := s.st.Points(ctx, se.ID, branch)
	if err != nil {
		return nil, err
	}
	changes, err := s.allChanges(ctx, all)
	if err != nil {
		return nil, err
	}
	o := s.o.Changes
	p := &seriesPage{ID: se.ID, Label: se.Workload + " on " + se.Target + ", " + se.Load, Testbed: testbedLabel(se.Testbed), TestbedName: se.Testbed.Name,
		Branch: branch, Branches: se.Branches,
		Alpha: orDefault(o.Alpha, history.DefaultAlpha), MinEffect: orDefault(o.MinEffect, history.DefaultMinEffect)}
	at := map[string]int{}
	for i, pt := range points {
		at[pt.Commit] = i
	}
	var latencyMarks, rateMarks []report.TrendMark
	changedAt := map[int][]string{}
	for _, c := range latestFirst(changes) {
		if c.Series != se.ID || c.Branch != branch {
			continue
		}
		p.Changes = append(p.Changes, rowOf(c))
		if i, ok := at[c.Commit]; ok && c.Commit != "" {
			row := rowOf(c)
			changedAt[i] = append(changedAt[i], row.Figure+" "+row.Size)
			rel := ""
			if c.Relative != nil {
				rel = fmt.Sprintf(" %+.0f%%", *c.Relative*100)
			}
			m := report.TrendMark{At: i, Label: fmt.Sprintf("%s%s at %s", c.Figure, rel, short(c.Commit))}
			if c.Figure == history.Throughput {
				rateMarks = append(rateMarks, m)
			} else {
				latencyMarks = append(latencyMarks, m)
			}
		}
	}
	// What changed under the series is marked as its changes are, on both charts, so a step
	// at that commit reads as the machine's or the toolchain's, not only the code's.
	machineAt := map[int][]string{}
	var machineMarks []report.TrendMark
	for i := 1; i < len(points); i++ {
		ec := history.EnvironmentChanges(points[i-1], points[i])
		if len(ec) == 0 {
			continue
		}
		var facts []string
		for _, c := range ec {
			machineAt[i] = append(machineAt[i], c.String())
			facts = append(facts, c.Fact)
		}
		machineMarks = append(machineMarks, report.TrendMark{At: i, Class: "environment", Label: strings.Join(facts, ", ") + " changed",
			Title: "at " + short(points[i].Commit) + ": " + history.DescribeChanges(ec)})
	}
	latencyMarks = append(latencyMarks, machineMarks...)
	rateMarks = append(rateMarks, machineMarks...)
	commits := make([]string, len(points))
	for i, pt := range points {
		commits[i] = tickLabel(pt.Commit)
	}
	lat := report.Trend{ID: "trend-latency", Title: "Latency along commits: " + p.Label, YLabel: "latency",
		Format: report.Duration, Commits: commits, Marks: latencyMarks}
	for k, f := range []history.Figure{history.P99, history.P50} {
		lat.Bands = append(lat.Bands, bandOf(points, f, strings.ToUpper(string(f))+": median of the repetitions, band from fastest to slowest", k, k))
	}
	lat.Log = wideRange(lat.Bands)
	rate := report.Trend{ID: "trend-throughput", Title: "Throughput along commits: " + p.Label, YLabel: "ok responses per second",
		Format: report.Thousands, Commits: commits, Marks: rateMarks}
	rate.Bands = append(rate.Bands, bandOf(points, history.Throughput, "throughput: median of the repetitions, band from lowest to highest", 2, 0))
	p.Latency, p.Rate = template.HTML(lat.SVG()), template.HTML(rate.SVG())
	for i := len(points) - 1; i >= 0; i-- {
		pt := points[i]
		row := pointRow{Commit: short(pt.Commit), Full: pt.Commit, Dirty: pt.Dirty, When: pt.Time.UTC().Format("2006-01-02 15:04"),
			Reps: len(pt.Repetitions), Documents: pt.Documents, Changed: changedAt[i], Machine: machineAt[i], Facts: factsLine(pt.Environment),
			P50: valueOr(quantiles(valuesOf(pt, history.P50))[1], report.Duration), P99: valueOr(quantiles(valuesOf(pt, history.P99))[1], report.Duration),
			Throughput: valueOr(quantiles(valuesOf(pt, history.Throughput))[1], report.Thousands),
			Errors:     valueOr(quantiles(valuesOf(pt, history.ErrorRate))[1], func(v float64) string { return fmt.Sprintf("%.2f %%", v*100) })}
		if i > 0 {
			row.CompareURL = compareURL(points[i-1].Commit, pt.Commit, se.ID)
		}
		p.Points = append(p.Points, row)
		if pt.Commit != "" {
			p.Commits = append(p.Commits, pt.Commit)
		}
	}
	return &pageData{Title: "authzbench history: " + p.Label + " @" + p.TestbedName, Series: p}, nil
}

// factsLine is a point's environment in one line, for a title.
func factsLine(facts []history.Fact) string {
	parts := make([]string, len(facts))
	for i, f := range facts {
		parts[i] = f.Name + " " + f.Value
	}
	return strings.Join(parts, "; ")
}

// tickLabel is a commit as an axis labels it: seven characters, as git abbreviates.
func tickLabel(c string) string {
	if c == "" {
		return "-"
	}
	return c[:min(7, len(c))]
}

// wideRange says whether bands span more than a decade: then a linear axis would flatten the
// lower one (a P50 under a P99 ten times its size), and a logarithmic one shows both.
func wideRange(bands []report.TrendBand) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, b := range bands {
		for _, vs := range [][]float64{b.Lo, b.Hi} {
			for _, v := range vs {
				if usable(v) && v > 0 {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
	}
	return hi > 10*lo
}

func valueOr(v float64, format func(float64) string) string {
	if !usable(v) {
		return "-"
	}
	return format(v)
}

// bandOf is a figure along the points: each commit's lowest, median and highest repetition,
// and a title saying them with the commit.
func bandOf(points []history.Point, f history.Figure, name string, colour, dash int) report.TrendBand {
	b := report.TrendBand{Name: name, Colour: colour, Dash: dash}
	for _, pt := range points {
		vs := valuesOf(pt, f)
		q := quantiles(vs)
		b.Lo, b.Mid, b.Hi = append(b.Lo, q[0]), append(b.Mid, q[1]), append(b.Hi, q[2])
		tip := fmt.Sprintf("commit %s, %s: %s median %s", short(pt.Commit), pt.Time.UTC().Format("2006-01-02 15:04"), f, valueOr(q[1], func(v float64) string { return figureValue(f, v) }))
		if len(vs) > 1 {
			tip += fmt.Sprintf(", %s to %s over %d repetitions", figureValue(f, q[0]), figureValue(f, q[2]), len(vs))
		}
		b.Tips = append(b.Tips, tip)
	}
	return b
}

// comparePage is two commits compared, as `authzbench compare` compares two files.
type comparePage struct {
	Base, New   string
	BaseDocs    []int64
	NewDocs     []int64
	Table       template.HTML
	CommitsSeen int
	Series      int64 // the series the comparison is limited to; 0 for every run
	SeriesLabel string
}

// inSeries says whether a stored document's run is a point of the series: its workload,
// target, load and the testbed it was filed under.
func inSeries(se history.Series, d storedDoc, r *result.Run) bool {
	return r.Workload == se.Workload && r.Label() == se.Target && report.LoadLabel(r.Load) == se.Load &&
		d.testbed == se.Testbed.Name
}

func (s *server) compare(r *http.Request) (*pageData, error) {
	ctx := r.Context()
	q := r.URL.Query()
	base, new := strings.TrimSpace(q.Get("base")), strings.TrimSpace(q.Get("new"))
	if base == "" || new == "" {
		return nil, badRequest("compare needs two commits: /compare?base=COMMIT&new=COMMIT (a prefix of at least 4 characters each)")
	}
	docs, err := s.commitDocuments(ctx)
	if err != nil {
		return nil, err
	}
	p := &comparePage{CommitsSeen: len(docs)}
	keep := func(storedDoc, *result.Run) bool { return true }
	if raw := q.Get("series"); raw != "" {
		se, _, err := s.seriesByID(ctx, raw)
		if err != nil {
			return nil, err
		}
		p.Series, p.SeriesLabel = se.ID, se.Workload+" on "+se.Target+", "+se.Load
		keep = func(d storedDoc, r *result.Run) bool { return inSeries(se, d, r) }
	}
	var sides [2]*result.Document
	for i, want := range []string{base, new} {
		commit, ids, err := resolve(docs, want)
		if err != nil {
			return nil, err
		}
		doc, err := s.commitDocument(ctx, commit, ids, keep)
		if err != nil {
			return nil, err
		}
		sides[i] = doc
		if i == 0 {
			p.Base, p.BaseDocs = commit, ids
		} else {
			p.New, p.NewDocs = commit, ids
		}
	}
	res := compare.Compare("commit "+short(p.Base), sides[0], "commit "+short(p.New), sides[1], compare.Options{})
	var b strings.Builder
	if err := compare.NewReport(res, compare.Gate{}, nil).WriteHTML(&b); err != nil {
		return nil, err
	}
	p.Table = template.HTML(b.String())
	return &pageData{Title: fmt.Sprintf("authzbench history: %s against %s", short(p.New), short(p.Base)), Cmp: p}, nil
}

// commitDocuments are the documents of every commit the history holds, each once, in the
// order they were stored.
func (s *server) commitDocuments(ctx context.Context) (map[string][]int64, error) {
	all, err := s.st.Series(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]int64{}
	for _, se := range all {
		points, err := s.st.Points(ctx, se.ID, "")
		if err != nil {
			return nil, err
		}
		for _, pt := range points {
			if pt.Commit == "" {
				continue
			}
			for _, d := range pt.Documents {
				if !slices.Contains(out[pt.Commit], d) {
					out[pt.Commit] = append(out[pt.Commit], d)
				}
			}
		}
	}
	for c := range out {
		slices.Sort(out[c])
	}
	return out, nil
}

// resolve finds the one commit a hash or prefix names.
func resolve(docs map[string][]int64, want string) (string, []int64, error) {
	if ids, ok := docs[want]; ok {
		return want, ids, nil
	}
	if len(want) < 4 {
		return "", nil, badRequest("commit %q: give at least 4 characters of its hash", want)
	}
	var found []string
	for c := range docs {
		if strings.HasPrefix(c, want) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return "", nil, notFound("no commit %q in the history", want)
	case 1:
		return found[0], docs[found[0]], nil
	}
	sort.Strings(found)
	return "", nil, badRequest("commit %q is ambiguous: %s", want, strings.Join(found, ", "))
}

// commitDocument is a commit's documents as one: every run of each that keep keeps, so that
// compare matches the runs the two commits have in common whichever file measured them.
func (s *server) commitDocument(ctx context.Context, commit string, ids []int64, keep func(storedDoc, *result.Run) bool) (*result.Document, error) {
	var out *result.Document
	for _, id := range ids {
		sd, err := s.document(ctx, id)
		if err != nil {
			return nil, err
		}
		d := sd.doc
		var runs []result.Run
		for i := range d.Runs {
			if keep(sd, &d.Runs[i]) {
				runs = append(runs, d.Runs[i])
			}
		}
		if out == nil {
			c := *d
			c.Runs = runs
			out = &c
			continue
		}
		out.Runs = append(out.Runs, runs...)
		if d.Created.After(out.Created) {
			out.Created = d.Created
		}
	}
	if out == nil {
		return nil, notFound("commit %s has no documents", commit)
	}
	return out, nil
}
