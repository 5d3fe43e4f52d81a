package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"
)

// Charts along commits, for the history's pages: a figure per commit as a band from the
// fastest to the slowest repetition with its median as a line, the commits where it changed
// marked, and a sparkline for a list. They are drawn with the report's own axes, frame,
// palette and legend (svg.go), so a series looks the same in a report and in the history.

// Trend is a chart of figures along commits.
type Trend struct {
	ID, Title string
	YLabel    string
	Format    func(float64) string // a tick's label
	Log       bool                 // a logarithmic y axis
	// Commits label the x axis, one per point, oldest first; every band has a value (or NaN)
	// for each.
	Commits []string
	Bands   []TrendBand
	// Marks are the commits where a change was found, by their index in Commits.
	Marks []TrendMark
}

// TrendBand is one figure along the commits: per commit its lowest, median and highest value
// over the commit's repetitions (NaN where the commit has none), and what hovering over the
// commit's point says.
type TrendBand struct {
	Name         string
	Lo, Mid, Hi  []float64
	Tips         []string
	Colour, Dash int
}

// TrendMark marks a commit where a change begins.
type TrendMark struct {
	At    int
	Label string
	// Class tells the mark's kind apart: "" for a change found in the figures, or another
	// class, styled by the page (the history marks where the machine or the build changed).
	Class string
	// Title, when set, is what hovering the mark says in place of Label: the whole of what a
	// short label names.
	Title string
}

// maxCommitTicks bounds the commits labelled under a chart: more would overlap.
const maxCommitTicks = 8

// SVG draws the chart.
func (t Trend) SVG() string {
	var ys []float64
	for _, b := range t.Bands {
		for _, vs := range [][]float64{b.Lo, b.Mid, b.Hi} {
			for _, v := range vs {
				if usable(v, t.Log) {
					ys = append(ys, v)
				}
			}
		}
	}
	series := make([]chartSeries, len(t.Bands))
	for i, b := range t.Bands {
		series[i] = chartSeries{Name: b.Name, Colour: b.Colour, Dash: b.Dash}
	}
	places, rows := legendLayout(series)
	var b strings.Builder
	open(&b, t.ID, "trend", t.Title, legendTop+legendRow*rows)
	if len(ys) == 0 || len(t.Commits) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="note">no data</text></svg>`, marginLeft, plotBottom/2)
		return b.String()
	}
	x := axis{Label: "commit, oldest first", Ticks: commitTicks(t.Commits)}
	y := axis{Label: t.YLabel, Log: t.Log, Format: t.Format}
	xs := []float64{0, float64(len(t.Commits) - 1)}
	if len(t.Commits) == 1 {
		xs = []float64{-0.5, 0.5} // one commit sits in the middle
		x.Ticks = append([]tick{{-0.5, ""}}, append(x.Ticks, tick{0.5, ""})...)
	}
	xScale := newScale(xs, x, marginLeft, chartWidth-marginRight)
	yScale := newScale(ys, y, plotBottom, marginTop)
	frame(&b, xScale, yScale, x, y)
	for k, m := range t.Marks {
		px := xScale.at(float64(m.At))
		anchor, tx := "start", px+4
		if px > (marginLeft+chartWidth)/2 {
			anchor, tx = "end", px-4
		}
		class, title := m.Class, m.Title
		if class == "" {
			class = "change"
		}
		if title == "" {
			title = m.Label
		}
		fmt.Fprintf(&b, `<g class="knee %s"><title>%s</title><line x1="%.1f" x2="%.1f" y1="%d" y2="%d"/><text class="note" x="%.1f" y="%d" text-anchor="%s">%s</text></g>`,
			esc(class), esc(title), px, px, marginTop, plotBottom, tx, marginTop+12+12*(k%4), anchor, esc(m.Label))
	}
	for i, band := range t.Bands {
		colour := band.Colour % paletteSize
		// The band: along the highest values, back along the lowest, one polygon per run of
		// commits that have values.
		for _, run := range runsOf(band.Mid, t.Log) {
			var pts []string
			for _, c := range run {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", xScale.at(float64(c)), yScale.at(clampTo(band.Hi[c], band.Mid[c], t.Log))))
			}
			for k := len(run) - 1; k >= 0; k-- {
				c := run[k]
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", xScale.at(float64(c)), yScale.at(clampTo(band.Lo[c], band.Mid[c], t.Log))))
			}
			fmt.Fprintf(&b, `<g class="band c%d"><polygon points="%s"/></g>`, colour, strings.Join(pts, " "))
		}
		fmt.Fprintf(&b, `<g class="series c%d" data-dash="%d"><title>%s</title>`, colour, band.Dash%len(dashes), esc(band.Name))
		for _, run := range runsOf(band.Mid, t.Log) {
			if len(run) < 2 {
				continue
			}
			var pts []string
			for _, c := range run {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", xScale.at(float64(c)), yScale.at(band.Mid[c])))
			}
			fmt.Fprintf(&b, `<polyline fill="none" points="%s"%s/>`, strings.Join(pts, " "), dashAttr(band.Dash))
		}
		// A point per commit, large enough to hover, its title the commit and its values.
		r := 3.0
		if len(t.Commits) > 60 {
			r = 2
		}
		for c, v := range band.Mid {
			if !usable(v, t.Log) {
				continue
			}
			tip := ""
			if c < len(band.Tips) {
				tip = band.Tips[c]
			}
			fmt.Fprintf(&b, `<circle class="point" cx="%.1f" cy="%.1f" r="%g"><title>%s</title></circle>`,
				xScale.at(float64(c)), yScale.at(v), r, esc(tip))
		}
		b.WriteString("</g>")
		legend(&b, places[i], series[i])
	}
	b.WriteString("</svg>")
	return b.String()
}

// clampTo is v, or mid where v cannot be drawn (a band's edge missing).
func clampTo(v, mid float64, log bool) float64 {
	if usable(v, log) {
		return v
	}
	return mid
}

// runsOf splits the commits into runs of consecutive ones that have a value: a line or band
// does not bridge a commit without one.
func runsOf(values []float64, log bool) [][]int {
	var out [][]int
	var cur []int
	for i, v := range values {
		if usable(v, log) {
			cur = append(cur, i)
			continue
		}
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur = nil
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// commitTicks labels at most maxCommitTicks commits, evenly spread, the last always.
func commitTicks(commits []string) []tick {
	n := len(commits)
	step := max(1, int(math.Ceil(float64(n)/maxCommitTicks)))
	var out []tick
	for i := 0; i < n; i += step {
		if n-1-i < step && i != n-1 && i != 0 {
			continue // too close to the last, which is labelled below
		}
		out = append(out, tick{float64(i), commits[i]})
	}
	if out[len(out)-1].V != float64(n-1) {
		out = append(out, tick{float64(n - 1), commits[n-1]})
	}
	return out
}

// Sparkline is a small line of values for a list: no axes, its lowest and highest values in
// its title, the last point marked. NaN values are left out.
func Sparkline(id, title string, values []float64, colour int) string {
	const width, height, pad = 160, 36, 4
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" id="%s" class="chart spark" role="img" viewBox="0 0 %d %d" width="%d" height="%d"><title>%s</title>`,
		esc(id), width, height, width, height, esc(title))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if usable(v, false) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="note">no data</text></svg>`, pad, height/2+4)
		return b.String()
	}
	if hi == lo {
		lo, hi = lo*0.9, hi*1.1+1e-9
	}
	at := func(i int, v float64) (float64, float64) {
		x := float64(pad)
		if len(values) > 1 {
			x += float64(i) * float64(width-2*pad) / float64(len(values)-1)
		}
		return x, float64(height-pad) - (v-lo)/(hi-lo)*float64(height-2*pad)
	}
	var pts []string
	lastX, lastY := 0.0, 0.0
	for i, v := range values {
		if usable(v, false) {
			lastX, lastY = at(i, v)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", lastX, lastY))
		}
	}
	fmt.Fprintf(&b, `<g class="series c%d">`, colour%paletteSize)
	if len(pts) > 1 {
		fmt.Fprintf(&b, `<polyline fill="none" points="%s"/>`, strings.Join(pts, " "))
	}
	fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5"/></g></svg>`, lastX, lastY)
	return b.String()
}

// TrendStylesheet adds to Stylesheet what the charts along commits need: translucent bands,
// points to hover, change marks.
func TrendStylesheet() template.CSS {
	var b strings.Builder
	b.WriteString("svg .band polygon { fill-opacity: .22; stroke: none; }\n")
	for i := range paletteSize {
		fmt.Fprintf(&b, "svg .band.c%d polygon { fill: var(--c%d); }\n", i, i)
	}
	b.WriteString("svg circle.point:hover { r: 5; }\nsvg.spark { vertical-align: middle; }\nsvg.spark .series polyline { stroke-width: 1.5; }\n")
	return template.CSS(b.String())
}
