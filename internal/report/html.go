package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

func init() {
	Register(Format{Name: "html", Render: HTML, Several: htmlSeveral})
}

// HTML writes one self-contained page: the findings, the warnings in words, the summary table
// (the columns a reader needs first, every column one <details> away and in print), the charts
// (inline SVG drawn here: first latency against N, rate or workers when the document holds such
// a series, then throughput, the latency percentile spectrum from the HDR histograms, the
// server's CPU and memory against load), the notes grouped by kind, then the environment and
// provenance. It has no script and fetches nothing when viewed; it reads in light and dark mode
// (prefers-color-scheme) and prints. Everything from the document is escaped by html/template
// or, inside the charts, by esc.
func HTML(w io.Writer, doc *result.Document) error {
	sec, err := htmlSection(doc, "", "")
	if err != nil {
		return err
	}
	return pageTemplate.Execute(w, page{Title: pageTitle(doc), Sections: []section{sec}})
}

// htmlSeveral writes several documents as one page, a section each under its file's name; each
// keeps its own table, charts and environment.
func htmlSeveral(w io.Writer, names []string, docs []*result.Document) error {
	p := page{Title: "authzbench: " + strings.Join(names, ", ")}
	for i, doc := range docs {
		sec, err := htmlSection(doc, names[i], fmt.Sprintf("f%d-", i+1))
		if err != nil {
			return err
		}
		p.Sections = append(p.Sections, sec)
	}
	return pageTemplate.Execute(w, p)
}

func pageTitle(doc *result.Document) string {
	t := "authzbench result"
	if doc.Scenario != "" {
		t += ": " + doc.Scenario
	}
	if !doc.Created.IsZero() {
		t += ", " + doc.Created.UTC().Format("2006-01-02 15:04 UTC")
	}
	return t
}

type page struct {
	Title    string
	Sections []section
}

// Stylesheet is the page's stylesheet.
func (page) Stylesheet() template.CSS { return Stylesheet() }

// Stylesheet is the report's stylesheet: its colours in light and dark mode, its tables and the
// charts svg.go draws. Other pages drawing those charts (the history's) use it as it is.
func Stylesheet() template.CSS {
	return template.CSS(styleBase + palette() + styleEnd)
}

// palette is the stylesheet's rules colouring series c0…c7 from the page's colour variables.
func palette() string {
	var b strings.Builder
	for i := range paletteSize {
		fmt.Fprintf(&b, "svg .c%d polyline, svg .c%d line { stroke: var(--c%d); } svg .c%d circle, svg .c%d rect { fill: var(--c%d); }\n", i, i, i, i, i, i)
	}
	return b.String()
}

type section struct {
	File     string
	IDPrefix string // "f2-" for the second of several files: the ids stay unique on the page
	Findings []string
	Warnings []string
	// Columns and Rows are the table a reader needs first (DefaultColumns), fitting the page;
	// WideColumns and WideRows every column, folded under it on screen and printed instead.
	Columns, WideColumns []string
	Rows, WideRows       [][]string
	Notes                []noteGroup
	Charts               []chart
	// Ramps are the runs read interval by interval (a capacity ramp's), a table each, and
	// RampNotes what their estimates are and are not.
	Ramps     []htmlTable
	RampNotes []string
	// Capacity is the table of the capacity searches, a line each, and CapacityNotes what
	// the lines alone do not say (capacity.go); nil when the document holds none.
	Capacity      *htmlTable
	CapacityNotes []string
	// Changes are the runs whose world changed: their operations, judging and timeline.
	Changes []changesBlock
	Env     [][2]string
}

type htmlTable struct {
	Title  string
	Header []string
	Rows   [][]string
}

type chart struct {
	ID      string
	Caption string
	SVG     template.HTML // drawn by svg.go, every text in it escaped
	// Full charts take the page's width (the bars of every run).
	Full bool
	// Folded charts are one control away, under the others: the percentile curves of a
	// sweep's middle sizes, which nobody needs one by one.
	Folded bool
}

// Shown and Folded split a section's charts for the template.
func (s section) ShownCharts() []chart  { return chartsWhere(s.Charts, false) }
func (s section) FoldedCharts() []chart { return chartsWhere(s.Charts, true) }

func chartsWhere(cs []chart, folded bool) []chart {
	var out []chart
	for _, c := range cs {
		if c.Folded == folded {
			out = append(out, c)
		}
	}
	return out
}

func htmlSection(doc *result.Document, file, idPrefix string) (section, error) {
	v := Build(doc)
	sec := section{File: file, IDPrefix: idPrefix, Findings: v.Findings, Warnings: warnings(doc, v)}
	sec.Columns, sec.Rows = grid(v, false, label)
	sec.WideColumns, sec.WideRows = grid(v, true, label)
	// The notes are those of the wide table: it is one control away, and printed.
	sec.Notes = noteGroups(v, sec.WideColumns)
	charts, err := htmlCharts(doc, v, idPrefix)
	if err != nil {
		return sec, err
	}
	sec.Charts = charts
	for _, r := range v.Ramps {
		sec.Ramps = append(sec.Ramps, htmlTable{Title: fmt.Sprintf("%s on %s, %s", r.Workload, r.Target, atLoad(r.Load)),
			Header: rampHeader, Rows: rampRows(r.Intervals)})
	}
	if len(v.Ramps) > 0 {
		sec.RampNotes = rampNotes(v)
	}
	if len(doc.Capacity) > 0 {
		sec.Capacity = &htmlTable{Header: capacityHeader, Rows: capacityRows(doc.Capacity)}
		sec.CapacityNotes = capacityNotes(doc.Capacity)
	}
	sec.Changes = htmlChanges(doc, idPrefix)
	sec.Env = provenance(doc)
	return sec, nil
}

// warnings say at the top, in words, what should make a reader distrust a figure: a rate not
// delivered, responses that were not served decisions, a cut-short run, a generator sharing
// cores with the server, percentiles resting on few samples.
func warnings(doc *result.Document, v *View) []string {
	var out []string
	if line := NoRuns(doc); line != "" {
		out = append(out, strings.ToUpper(line[:1])+line[1:]+".")
	}
	if doc.Interrupted {
		out = append(out, "Partial result: the run was stopped before it finished ("+doc.StopReason+").")
	}
	var missed, generator, errs, partial, thin []string
	for i, r := range v.Rows {
		at := fmt.Sprintf("%s on %s at %s", r.Workload, r.Target, LoadLabel(r.Load))
		if r.RateMissed {
			if o := doc.Runs[i].Summary.Open; o != nil && o.Unsent == 0 && (o.LateSends-o.GeneratorLate)*100 <= o.Intended {
				generator = append(generator, at)
			} else {
				missed = append(missed, at)
			}
		}
		if r.Errors > 0 {
			errs = append(errs, fmt.Sprintf("%s (%d)", at, r.Errors))
		}
		if r.Partial {
			partial = append(partial, at)
		}
		switch {
		case r.Thin.P99:
			thin = append(thin, at+" (P99, P99.9)")
		case r.Thin.P999:
			thin = append(thin, at+" (P99.9)")
		}
	}
	if missed != nil {
		out = append(out, "Rate missed: "+strings.Join(missed, "; ")+". The rate asked for was not delivered: latency is still measured from the intended send times, but the server saw less load than asked.")
	}
	if generator != nil {
		out = append(out, "Rate missed by the generator: "+strings.Join(generator, "; ")+". The generator itself was late for over 1 % of the sends (short of CPU), not the server: latency counts that lateness, so read its tail as an upper bound on the server's.")
	}
	if errs != nil {
		out = append(out, "Errors, responses that were not served decisions: "+strings.Join(errs, "; ")+". They are in neither throughput nor latency; the notes under the table say what they were.")
	}
	if partial != nil {
		out = append(out, "Cut short: "+strings.Join(partial, "; ")+".")
	}
	if thin != nil {
		out = append(out, fmt.Sprintf("Few samples: the percentiles named rest on fewer than %d ok responses beyond them (marked %s in the table), so a longer run is likely to read them higher: %s.",
			result.FewBeyond, thinTail, strings.Join(thin, "; ")))
	}
	if strings.HasPrefix(doc.Env.Pinning, "none") {
		for i := range doc.Runs {
			if doc.Runs[i].Where() != result.InProcess {
				out = append(out, "Unpinned: the generator and the servers shared the machine's cores ("+doc.Env.Pinning+"), so each one's figures include contention with the other.")
				break
			}
		}
	}
	return out
}

// provenance is the environment and what produced the document, as key and value.
func provenance(doc *result.Document) [][2]string {
	e := doc.Env
	kv := [][2]string{
		{"created", doc.Created.UTC().Format("2006-01-02 15:04:05 UTC")},
		{"command", strings.Join(doc.Command, " ")},
		{"scenario", doc.Scenario},
		{"order", doc.Order},
		{"authzbench", e.Authzbench},
		{"commit", strings.TrimSpace(e.Commit + " " + e.CommitSource)},
		{"modified checkout", e.Modified},
		{"CPU", fmt.Sprintf("%s, %d cores, GOMAXPROCS %d", e.CPUModel, e.Cores, e.GOMAXPROCS)},
		{"OS", strings.TrimSpace(e.OS + " " + e.Kernel + " " + e.Arch)},
		{"Go", e.Go},
	}
	for _, v := range e.EngineVersions() {
		kv = append(kv, [2]string{v.Label, v.Version})
	}
	kv = append(kv, [][2]string{
		{"pinning", e.Pinning},
		{"generator CPUs", e.GeneratorCPUs},
		{"host", e.Hostname},
		{"schema", doc.Schema},
	}...)
	out := kv[:0]
	for _, p := range kv {
		if strings.TrimSpace(p[1]) != "" && p[1] != "0001-01-01 00:00:00 UTC" {
			out = append(out, p)
		}
	}
	return out
}

// htmlCharts draws the charts a document has data for, each with an id a test can find.
func htmlCharts(doc *result.Document, v *View, prefix string) ([]chart, error) {
	var charts []chart
	rps := axis{Label: "ok responses per second (log)", Log: true, Format: rateTick}
	var bars []bar
	colour := pageStyles(doc)
	for i, r := range v.Rows {
		b := bar{Label: r.Workload + " · " + r.Target + " · " + LoadLabel(r.Load), Value: r.Throughput.Mean, Spread: r.Throughput.SD,
			Text: formatRPS(r.Throughput), Colour: colour[styleKey(&doc.Runs[i])]}
		if r.RateMissed {
			b.Comment = "RATE MISSED"
		}
		bars = append(bars, b)
	}
	throughput := chart{ID: prefix + "chart-throughput", Full: true, Caption: "Throughput of each run (bars: mean of the repetitions; whiskers: ± one sd). Log axis.",
		SVG: template.HTML(barChart(prefix+"chart-throughput", "throughput", "Throughput by workload and target", rps, bars))}

	// The charts that answer a sweep's or a rate matrix's question come first: latency
	// against N, rate or workers; then every run's throughput and percentile curves.
	charts = append(charts, growthPanels(doc, prefix, colour)...)

	us := axis{Label: "latency (log)", Log: true, Format: Duration}
	for _, s := range []struct {
		id, what, caption string
		key               func(r *result.Run) (float64, bool)
		x                 axis
		knees             func(*result.Document) []tick
	}{
		{"chart-latency-vs-rate", "rate", "Latency against the arrival rate asked for (open loop, from the intended send time): P99 solid, P50 dashed; a dotted line marks the first rate a target did not hold (the findings say why).",
			onRateAxis,
			axis{Label: "requests per second asked for", Format: rateTick}, rateKnees},
		{"chart-latency-vs-workers", "workers", "Latency against closed-loop workers (concurrent requests): P99 solid, P50 dashed; a dotted line marks the knee, past which more workers only queue (the USL peak where the document holds a fit).",
			func(r *result.Run) (float64, bool) {
				return float64(r.Load.Workers), !r.Load.Open() && r.Scale == nil
			},
			axis{Label: "workers", Log: true, Format: func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }}, workerKnees},
	} {
		series, xlabel := latencyAgainst(doc, s.key, colour)
		if series == nil {
			continue
		}
		x := s.x
		if xlabel != "" {
			x.Label = xlabel
		}
		x.Marks = s.knees(doc)
		charts = append(charts, chart{ID: prefix + s.id, Caption: s.caption,
			SVG: template.HTML(lineChart(prefix+s.id, "latency-vs", "Latency against "+s.what, x, us, series))})
	}

	charts = append(charts, throughput)
	spectra, err := spectrumCharts(doc, prefix, colour)
	if err != nil {
		return nil, err
	}
	charts = append(charts, spectra...)
	if cpu, mem := resourceSeries(doc, colour); cpu != nil {
		x := axis{Label: "ok responses per second", Format: rateTick}
		charts = append(charts,
			chart{ID: prefix + "chart-cpu", Caption: "CPU cores the server authzbench started used (mean over the measured phases), against the throughput it served.",
				SVG: template.HTML(lineChart(prefix+"chart-cpu", "resources", "Server CPU against load", x,
					axis{Label: "CPU cores", Format: func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }}, cpu))},
			chart{ID: prefix + "chart-memory", Caption: "Largest resident memory of the server authzbench started, against the throughput it served.",
				SVG: template.HTML(lineChart(prefix+"chart-memory", "resources", "Server memory against load", x,
					axis{Label: "RSS, MB", Format: func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }}, mem))})
	}
	return charts, nil
}

// rateTick labels a rate on an axis: "10", "2.5", "1,000".
func rateTick(v float64) string {
	if v >= 1000 {
		return Thousands(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// styleKey is what one colour and dash stand for on the whole page: a run's target, and in a
// scaling series its style as well ("rego-indexed · opa/inproc"), so that an engine written
// one way looks the same on every panel and every chart.
func styleKey(r *result.Run) string {
	if r.Scale != nil {
		if _, style, ok := strings.Cut(r.Scale.Series, "/"); ok {
			return style + " · " + r.Label()
		}
	}
	return r.Label()
}

// pageStyles numbers the page's style keys in the order the runs first name them; styleOf
// turns a number into a colour and a dash.
func pageStyles(doc *result.Document) map[string]int {
	c := map[string]int{}
	for i := range doc.Runs {
		if k := styleKey(&doc.Runs[i]); true {
			if _, ok := c[k]; !ok {
				c[k] = len(c)
			}
		}
	}
	return c
}

// groupStyles numbers a chart's groups (named by names, of the page's style keys): each by its
// key's page-wide number while the keys tell the groups apart, else (two workloads on one
// target) by its place in the chart, so that a colour still names one group and a P99 and its
// P50 still read as solid and dashed.
func groupStyles(names, keys []string, colour map[string]int) map[string]int {
	out := map[string]int{}
	seen := map[string]bool{}
	apart := true
	for _, k := range keys {
		apart = apart && !seen[k]
		seen[k] = true
	}
	for i, n := range names {
		if apart {
			out[n] = colour[keys[i]]
		} else {
			out[n] = i
		}
	}
	return out
}

// distinctStyles gives a series whose colour and dash an earlier series of the same chart
// already has the next free pattern of its colour, two at a time so that a P99 and its P50
// stay a pair: no two lines of one chart look alike.
func distinctStyles(series []chartSeries) {
	used := map[[2]int]bool{}
	for i := range series {
		s := &series[i]
		s.Colour, s.Dash = s.Colour%paletteSize, s.Dash%len(dashes)
		// Past every pattern of its colour, the next colour's: bounded, whatever the count.
		for try := 0; used[[2]int{s.Colour, s.Dash}] && try < paletteSize*len(dashes); try++ {
			if s.Dash+2 < len(dashes) {
				s.Dash += 2
			} else {
				s.Colour, s.Dash = (s.Colour+1)%paletteSize, s.Dash%2
			}
		}
		used[[2]int{s.Colour, s.Dash}] = true
	}
}

// spectrumCharts draw, per workload, the latency of every run at each percentile, from the
// repetitions' HDR histograms merged: the x axis is in nines (p90, p99, p99.9, …), so the tail
// gets the room it deserves, and it stops where the run's responses run out.
func spectrumCharts(doc *result.Document, prefix string, colour map[string]int) ([]chart, error) {
	var order []string
	byWorkload := map[string][]int{}
	for i := range doc.Runs {
		w := doc.Runs[i].Workload
		if _, ok := byWorkload[w]; !ok {
			order = append(order, w)
		}
		byWorkload[w] = append(byWorkload[w], i)
	}
	ticks := []tick{{0, "p0"}, {1, "p90"}, {2, "p99"}, {3, "p99.9"}, {4, "p99.99"}, {5, "p99.999"}}
	// A sweep's percentile curves are shown at each series' smallest and largest N; the sizes
	// between are folded.
	ends := map[string][2]int{}
	for i := range doc.Runs {
		if sc := doc.Runs[i].Scale; sc != nil {
			e, ok := ends[sc.Series]
			if !ok {
				e = [2]int{sc.N, sc.N}
			}
			ends[sc.Series] = [2]int{min(e[0], sc.N), max(e[1], sc.N)}
		}
	}
	middle := func(runs []int) bool {
		for _, i := range runs {
			sc := doc.Runs[i].Scale
			if sc == nil || sc.N == ends[sc.Series][0] || sc.N == ends[sc.Series][1] {
				return false
			}
		}
		return true
	}
	var charts []chart
	for _, w := range order {
		var series []chartSeries
		loads := map[string]bool{}
		for _, i := range byWorkload[w] {
			loads[LoadLabel(doc.Runs[i].Load)] = true
		}
		maxNines := 0.0
		named := map[string]int{}
		for _, i := range byWorkload[w] {
			r := &doc.Runs[i]
			h, err := result.OKHistogram(r)
			if err != nil {
				return nil, fmt.Errorf("%s on %s: %w", r.Workload, r.Label(), err)
			}
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			name := r.Label()
			if len(loads) > 1 {
				name += " " + LoadLabel(r.Load)
			}
			// The same target under the same load run twice (a floor measured at the start
			// and the end): the legend tells the two lines apart.
			named[name]++
			if named[name] > 1 {
				name += fmt.Sprintf(" (run %d)", named[name])
			}
			top := math.Min(5, math.Log10(float64(h.TotalCount())))
			maxNines = math.Max(maxNines, top)
			var pts []chartPoint
			for n := 0.0; n <= top+1e-9; n += 0.05 {
				q := 100 * (1 - math.Pow(10, -n))
				pts = append(pts, chartPoint{n, float64(h.ValueAtQuantile(q)) / 1e3})
			}
			c, d := styleOf(colour[styleKey(r)], 1)
			series = append(series, chartSeries{Name: name, Points: pts, Colour: c, Dash: d})
		}
		if series == nil {
			continue
		}
		// One target under several loads: a colour per line, not per target.
		if len(loads) > 1 {
			for k := range series {
				series[k].Colour, series[k].Dash = styleOf(k, 1)
			}
		}
		distinctStyles(series)
		var shown []tick
		for _, t := range ticks {
			if t.V <= math.Ceil(maxNines) {
				shown = append(shown, t)
			}
		}
		id := prefix + "chart-spectrum-" + slug(w)
		charts = append(charts, chart{ID: id, Folded: middle(byWorkload[w]),
			Caption: "Latency at each percentile, " + w + ": every ok response of all repetitions merged (HDR histograms); each line stops where its responses run out.",
			SVG: template.HTML(lineChart(id, "spectrum", "Latency by percentile: "+w,
				axis{Label: "percentile", Ticks: shown}, axis{Label: "latency (log)", Log: true, Format: Duration}, series))})
	}
	return charts, nil
}

// latencyAgainst groups the runs key accepts by workload and target, and returns a P99 and a P50
// series for each group with at least two distinct x values; nil when none has. With a scaling
// series the x label says what grew.
func latencyAgainst(doc *result.Document, key func(*result.Run) (float64, bool), colour map[string]int) ([]chartSeries, string) {
	type group struct {
		name  string
		style string // styleKey: its colour on the whole page
		pts   map[float64]result.Percentiles
	}
	var order []string
	groups := map[string]*group{}
	param := ""
	for i := range doc.Runs {
		r := &doc.Runs[i]
		x, ok := key(r)
		if !ok || r.Summary.OK == 0 {
			continue
		}
		name := r.Workload + " · " + r.Label()
		if r.Scale != nil {
			name = r.Scale.Series + " · " + r.Label()
			param = r.Scale.Param
		}
		if r.Load.Open() && r.Scale == nil {
			name += fmt.Sprintf(" x%d", r.Load.Connections)
		}
		g, ok := groups[name]
		if !ok {
			g = &group{name: name, style: styleKey(r), pts: map[float64]result.Percentiles{}}
			groups[name] = g
			order = append(order, name)
		}
		g.pts[x] = r.Summary.LatencyUS
	}
	var keys []string
	for _, name := range order {
		keys = append(keys, groups[name].style)
	}
	styles := groupStyles(order, keys, colour)
	var series []chartSeries
	for _, name := range order {
		g := groups[name]
		if len(g.pts) < 2 {
			continue
		}
		xs := make([]float64, 0, len(g.pts))
		for x := range g.pts {
			xs = append(xs, x)
		}
		sort.Float64s(xs)
		var p99, p50 []chartPoint
		for _, x := range xs {
			p99 = append(p99, chartPoint{x, g.pts[x].P99})
			p50 = append(p50, chartPoint{x, g.pts[x].P50})
		}
		c, d := styleOf(styles[name], 2)
		series = append(series, chartSeries{Name: name + " P99", Points: p99, Colour: c, Dash: d},
			chartSeries{Name: name + " P50", Points: p50, Colour: c, Dash: d + 1})
	}
	distinctStyles(series)
	if param != "" {
		param = "N (" + param + ")"
	}
	return series, param
}

// onRateAxis places a run on the latency-against-rate chart at the one rate its schedule held:
// a run of stages or a replay has none to stand at, and a scaling series has its own chart.
func onRateAxis(r *result.Run) (float64, bool) {
	rate, ok := r.Load.Schedule().Rate()
	return rate, ok && r.Scale == nil
}

// rateKnees mark, on the latency-against-rate chart, the first rate each target did not hold,
// one mark per rate naming the workloads and targets it stopped.
func rateKnees(doc *result.Document) []tick {
	var order []float64
	who := map[float64][]string{}
	for _, sat := range saturations(doc) {
		if sat.broke == nil {
			continue
		}
		x := rateOf(sat.broke)
		if who[x] == nil {
			order = append(order, x)
		}
		who[x] = append(who[x], sat.workload+" · "+sat.target)
	}
	var marks []tick
	for _, x := range order {
		marks = append(marks, tick{x, "not held: " + strings.Join(who[x], ", ")})
	}
	return marks
}

// workerKnees mark, on the latency-against-workers chart, each sweep's knee: the USL peak of
// a good fit, else the worker count past which req/s grew by less than a tenth.
func workerKnees(doc *result.Document) []tick {
	var marks []tick
	for _, f := range doc.Scalability {
		if f.Param == "workers" && f.Fitted && f.R2 >= 0.9 && f.PeakN > 0 {
			marks = append(marks, tick{f.PeakN, fmt.Sprintf("USL peak %s · %s ≈ %.1f", f.Workload, f.Target, f.PeakN)})
		}
	}
	var order []float64
	who := map[float64][]string{}
	for _, p := range plateaus(doc) {
		if p.knee == nil {
			continue
		}
		x := float64(p.knee.Load.Workers)
		if who[x] == nil {
			order = append(order, x)
		}
		who[x] = append(who[x], p.workload)
	}
	for _, x := range order {
		marks = append(marks, tick{x, "knee: " + strings.Join(who[x], ", ")})
	}
	return marks
}

// growthPanels draw latency against N for the scaling series of a document: one panel per
// family (rules-path, rules-ip: what the series before the "/" names), each with the styles
// and targets of that family, all panels on the same axes so that a slope reads the same
// from one to the next; one family gets one chart.
func growthPanels(doc *result.Document, prefix string, colour map[string]int) []chart {
	var families []string
	seen := map[string]bool{}
	var xs, ys []float64
	for i := range doc.Runs {
		r := &doc.Runs[i]
		if r.Scale == nil || r.Summary.OK == 0 {
			continue
		}
		f, _, _ := strings.Cut(r.Scale.Series, "/")
		if !seen[f] {
			seen[f] = true
			families = append(families, f)
		}
		xs = append(xs, float64(r.Scale.N))
		ys = append(ys, r.Summary.LatencyUS.P50, r.Summary.LatencyUS.P99)
	}
	var charts []chart
	for _, f := range families {
		series, param := latencyAgainst(doc, func(r *result.Run) (float64, bool) {
			if r.Scale == nil {
				return 0, false
			}
			family, _, _ := strings.Cut(r.Scale.Series, "/")
			return float64(r.Scale.N), family == f
		}, colour)
		if series == nil {
			continue
		}
		for k := range series {
			series[k].Name = strings.TrimPrefix(series[k].Name, f+"/")
		}
		x := axis{Label: "N", Log: true, Format: func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }, Include: xs}
		if param != "" {
			x.Label = param
		}
		y := axis{Label: "latency (log)", Log: true, Format: Duration, Include: ys}
		id, title, caption := prefix+"chart-latency-vs-n", "Latency against N", "Latency against the size of a scaling series (result's scale.n): P99 solid, P50 dashed."
		if len(families) > 1 {
			id, title = id+"-"+slug(f), "Latency against N: "+f
			caption = fmt.Sprintf("Latency against N, %s: P99 solid, P50 dashed; every panel has the same axes, and each engine and style the same colour.", f)
		}
		charts = append(charts, chart{ID: id, Caption: caption, SVG: template.HTML(lineChart(id, "latency-vs", title, x, y, series))})
	}
	return charts
}

// resourceSeries are, per workload and target with a server authzbench started, its CPU cores
// and largest RSS against the throughput served; nil when no run has them.
func resourceSeries(doc *result.Document, colour map[string]int) (cpu, mem []chartSeries) {
	var order, keys []string
	idx := map[string]int{}
	for i := range doc.Runs {
		r := &doc.Runs[i]
		res := r.SUTResources
		if res == nil || r.Summary.OK == 0 {
			continue
		}
		name := r.Workload + " · " + r.Label()
		j, ok := idx[name]
		if !ok {
			j = len(order)
			idx[name] = j
			order = append(order, name)
			keys = append(keys, styleKey(r))
			cpu = append(cpu, chartSeries{Name: name})
			mem = append(mem, chartSeries{Name: name})
		}
		x := r.Summary.ThroughputRPS.Mean
		cpu[j].Points = append(cpu[j].Points, chartPoint{x, res.CPUCoresMean})
		mem[j].Points = append(mem[j].Points, chartPoint{x, res.RSSMaxMB})
	}
	styles := groupStyles(order, keys, colour)
	for j := range cpu {
		c, d := styleOf(styles[cpu[j].Name], 1)
		cpu[j].Colour, cpu[j].Dash = c, d
		mem[j].Colour, mem[j].Dash = c, d
	}
	distinctStyles(cpu)
	distinctStyles(mem)
	for j := range cpu {
		sort.Slice(cpu[j].Points, func(a, b int) bool { return cpu[j].Points[a].X < cpu[j].Points[b].X })
		sort.Slice(mem[j].Points, func(a, b int) bool { return mem[j].Points[a].X < mem[j].Points[b].X })
	}
	return cpu, mem
}

// slug keeps letters, digits and '-' for an id.
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			return r
		}
		return '_'
	}, s)
}

const styleBase = `:root { --bg: #ffffff; --fg: #1b1f24; --muted: #57606a; --grid: #d8dee4; --warn-bg: #fff4d6; --warn-fg: #6b4a00; --row: #f6f8fa;
  --c0: #0969da; --c1: #cf222e; --c2: #1a7f37; --c3: #8250df; --c4: #bc4c00; --c5: #0598bc; --c6: #bf3989; --c7: #6e7781; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --grid: #30363d; --warn-bg: #3b2e00; --warn-fg: #f2cc60; --row: #161b22;
    --c0: #4493f8; --c1: #ff7b72; --c2: #3fb950; --c3: #bc8cff; --c4: #f0883e; --c5: #39c5cf; --c6: #ff80c8; --c7: #9198a1; }
}
body { background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5rem auto; max-width: 1200px; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid var(--grid); }
.warnings { background: var(--warn-bg); color: var(--warn-fg); border-radius: 6px; padding: .6rem 1rem .6rem 2rem; }
html { overflow-wrap: anywhere; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 12.5px; }
th, td { padding: 3px 8px; border-bottom: 1px solid var(--grid); text-align: right; white-space: nowrap; }
th:nth-child(-n+3), td:nth-child(-n+3) { text-align: left; }
table.fit { width: 100%; }
table.fit th, table.fit td:first-child { white-space: normal; }
table.ramp th:last-child, table.ramp td:last-child { white-space: normal; text-align: left; min-width: 16em; }
tbody tr:nth-child(even) { background: var(--row); }
.scroll { overflow-x: auto; }
details.more-charts > summary { cursor: pointer; color: var(--muted); }
details.wide > summary { cursor: pointer; color: var(--muted); margin: .4rem 0; }
.print-only { display: none; }
.findings { font-size: 15px; } .findings li { margin: .15rem 0; }
.notes { color: var(--muted); font-size: 12.5px; } h3.notes { margin: .8rem 0 .2rem; font-weight: 600; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 0 1.5rem; }
.charts figure.full { grid-column: 1 / -1; }
figure { margin: 1rem 0; } figcaption { color: var(--muted); font-size: 12.5px; }
svg.chart { max-width: 100%; height: auto; font: 11px system-ui, sans-serif; }
svg .heading { fill: var(--fg); font-size: 13px; font-weight: 600; }
svg .tick, svg .label, svg .value, svg .legend text, svg .axis, svg .note { fill: var(--fg); }
svg .tick, svg .note { fill: var(--muted); }
svg .grid { stroke: var(--grid); stroke-width: 1; } svg .frame { stroke: var(--muted); }
svg .series polyline, svg .legend line { stroke-width: 2; fill: none; }
svg .whisker { stroke: var(--fg); stroke-width: 1.5; }
svg .knee line { stroke: var(--warn-fg); stroke-width: 1.5; stroke-dasharray: 2 3; }
svg .marks line { stroke: var(--warn-fg); stroke-width: 1; opacity: 0.45; }
`

const styleEnd = `dl.env { display: grid; grid-template-columns: max-content 1fr; gap: 2px 1rem; } dl.env dt { color: var(--muted); } dl.env dd { margin: 0; }
@media print {
  :root { --bg: #ffffff; --fg: #000000; --muted: #444444; --grid: #cccccc; --warn-bg: #ffffff; --warn-fg: #000000; --row: #f2f2f2; }
  body { margin: 0; max-width: none; } .warnings { border: 1px solid #000; }
  .screen-only, details.wide { display: none; } .print-only { display: block; }
  .print-only table { font-size: 9px; } .print-only th, .print-only td { white-space: normal; padding: 2px 4px; }
  figure, table, .warnings { break-inside: avoid; } h2 { break-after: avoid; }
}
`

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{.Title}}</title>
<style>
{{.Stylesheet}}</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Sections}}<section>
{{if .File}}<h2 class="file">{{.File}}</h2>{{end}}
<div class="findings" id="{{.IDPrefix}}findings"><h2>Findings</h2>
{{if .Findings}}<ul>{{range .Findings}}<li>{{.}}</li>{{end}}</ul>{{else}}<p>This run holds no sweep, rate matrix, worker sweep or called comparison to draw a finding from: the table says what it measured.</p>{{end}}</div>
{{if .Warnings}}<ul class="warnings" id="{{.IDPrefix}}warnings">{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>Summary</h2>
<div class="screen-only"><table class="summary fit">
<thead><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table></div>
<details class="wide"><summary>Every column ({{len .WideColumns}})</summary>
<div class="scroll"><table class="summary wide">
<thead><tr>{{range .WideColumns}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .WideRows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table></div></details>
<div class="print-only"><table class="summary wide">
<thead><tr>{{range .WideColumns}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .WideRows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table></div>

<h2>Charts</h2>
<div class="charts">
{{range .ShownCharts}}<figure{{if .Full}} class="full"{{end}}>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}</div>
{{with .FoldedCharts}}<details class="more-charts"><summary>{{len .}} more charts: latency by percentile at the sizes between each series' smallest and largest</summary>
<div class="charts">
{{range .}}<figure>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}</div></details>{{end}}
{{if .Ramps}}<h2>Ramp, interval by interval</h2>
{{range .Ramps}}<h3 class="notes">{{.Title}}</h3>
<div class="scroll"><table class="summary wide ramp">
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table></div>
{{end}}<ul class="notes">{{range .RampNotes}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{with .Capacity}}<h2>Capacity, one search per workload and target</h2>
<div class="scroll"><table class="summary wide">
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table></div>
{{end}}{{with .CapacityNotes}}<ul class="notes">{{range .}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{if .Changes}}<h2>Changes during the run, every answer judged</h2>
{{range .Changes}}<h3 class="notes">{{.Title}}</h3>
<div class="scroll"><table class="summary wide">
<thead><tr>{{range .Operations.Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Operations.Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table></div>
{{with .Changes}}<div class="scroll"><table class="summary wide changes">
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table></div>
{{end}}{{if .Timeline}}<div class="charts"><figure class="full">{{.Timeline}}<figcaption>Each point is a step of the sends due in it (a tenth of a second; coarser in long runs), each vertical line a change's acknowledgement: a change that stops the reads shows as a rise that starts at its line, on every line alike.</figcaption></figure></div>
{{end}}{{with .TimelineNote}}<p class="notes">{{.}}</p>
{{end}}<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{end}}<h2>Notes</h2>
{{range .Notes}}<h3 class="notes">{{.Title}}</h3>
<ul class="notes">{{range .Items}}<li>{{.}}</li>{{end}}</ul>
{{end}}
<h2>Environment and provenance</h2>
<dl class="env">{{range .Env}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>{{end}}</dl>
</section>
{{end}}</body>
</html>
`))
