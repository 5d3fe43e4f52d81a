package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/authzbench/authzbench/internal/textwrap"
)

// Hand-written SVG charts for the HTML report: a line chart with log or linear axes and a
// horizontal bar chart. Colours come from the page's stylesheet (classes c0…c7, whose variables
// change with prefers-color-scheme), so one chart reads in light and dark mode and in print.

// chartPoint is one point of a series.
type chartPoint struct{ X, Y float64 }

// chartSeries is one line of a chart.
type chartSeries struct {
	Name   string
	Points []chartPoint
	Colour int // palette index
	// Dash is the line's pattern, an index in dashes: a secondary figure of the same series
	// (P50 beside P99) is dashed, and series past the palette's colours take further
	// patterns, so no two lines of a chart look alike.
	Dash int
}

// dashes are the line patterns, solid first.
var dashes = []string{"", "5 4", "1 3", "9 3 2 3", "12 4", "2 6"}

// styleOf is the colour and dash of the i-th series of a chart whose series come in pairs of
// figures (pairs 2: P99 solid, P50 dashed) or alone (pairs 1): the colours go round the
// palette, and each round takes the next patterns.
func styleOf(i, pairs int) (colour, dash int) {
	return i % paletteSize, (i / paletteSize) * pairs
}

func dashAttr(d int) string {
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s"`, dashes[d%len(dashes)])
}

// axis is how a chart's axis maps values and labels its ticks.
type axis struct {
	Label string
	Log   bool
	// Ticks, when set, replaces the computed ticks: value and label.
	Ticks []tick
	// Format labels a computed tick.
	Format func(float64) string
	// Include are values the axis spans whether or not the chart's points reach them: the
	// panels of one figure share their axes so.
	Include []float64
	// Marks are values marked across the plot with their label: where a target saturates.
	Marks []tick
	// Lines are values marked across the plot without a label, too many to name one by one:
	// the acknowledgements of a run's changes.
	Lines []float64
}

type tick struct {
	V     float64
	Label string
}

const (
	// A line chart is drawn to sit two to a row on a wide page, its legend under the plot.
	chartWidth   = 590
	plotBottom   = 264 // the x axis
	marginLeft   = 66
	marginRight  = 24 // room for the last x tick's label
	marginTop    = 34
	marginBottom = 48 // below a bar chart's last bar: its tick labels and axis label
	legendTop    = plotBottom + 54
	legendRow    = 16
	legendWidth  = (chartWidth - marginLeft) / 2
	// legendChars is about what a legend column holds at 11px; a longer name gets a row of
	// its own, and one longer than a row wraps, so no name is ever cut.
	legendChars = 42
	legendLine  = 78
	paletteSize = 8
	// A bar chart takes the page's width.
	barChartWidth = 900
)

func esc(s string) string { return html.EscapeString(s) }

// lineChart draws series against two axes. id and class name the chart for the page and its
// tests; title is the chart's <title>, shown as its heading too.
func lineChart(id, class, title string, x, y axis, series []chartSeries) string {
	xs, ys := []float64{}, []float64{}
	for _, s := range series {
		for _, p := range s.Points {
			if usable(p.X, x.Log) && usable(p.Y, y.Log) {
				xs, ys = append(xs, p.X), append(ys, p.Y)
			}
		}
	}
	var b strings.Builder
	places, rows := legendLayout(series)
	height := legendTop + legendRow*rows
	open(&b, id, class, title, height)
	if len(xs) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="note">no data</text></svg>`, marginLeft, plotBottom/2)
		return b.String()
	}
	for _, m := range x.Marks {
		xs = append(xs, m.V)
	}
	xScale := newScale(xs, x, marginLeft, chartWidth-marginRight)
	yScale := newScale(ys, y, plotBottom, marginTop)
	frame(&b, xScale, yScale, x, y)
	if len(x.Lines) > 0 {
		b.WriteString(`<g class="marks">`)
		for _, v := range x.Lines {
			if px := xScale.at(v); usable(v, x.Log) && px >= marginLeft && px <= chartWidth-marginRight {
				fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d"/>`, px, px, marginTop, plotBottom)
			}
		}
		b.WriteString("</g>")
	}
	for k, m := range x.Marks {
		px := xScale.at(m.V)
		anchor, tx := "start", px+4
		if px > (marginLeft+chartWidth)/2 { // the label reads leftwards of a mark in the right half
			anchor, tx = "end", px-4
		}
		fmt.Fprintf(&b, `<g class="knee"><line x1="%.1f" x2="%.1f" y1="%d" y2="%d"/><text class="note" x="%.1f" y="%d" text-anchor="%s">%s</text></g>`,
			px, px, marginTop, plotBottom, tx, marginTop+12+12*k, anchor, esc(m.Label))
	}
	for i, s := range series {
		var pts []string
		for _, p := range s.Points {
			if usable(p.X, x.Log) && usable(p.Y, y.Log) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", xScale.at(p.X), yScale.at(p.Y)))
			}
		}
		if len(pts) == 0 {
			continue
		}
		dash := dashAttr(s.Dash)
		fmt.Fprintf(&b, `<g class="series c%d" data-dash="%d"><title>%s</title>`, s.Colour%paletteSize, s.Dash%len(dashes), esc(s.Name))
		if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline fill="none" points="%s"%s/>`, strings.Join(pts, " "), dash)
		}
		if len(pts) <= 12 {
			for _, p := range pts {
				xy := strings.Split(p, ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3"/>`, xy[0], xy[1])
			}
		}
		b.WriteString("</g>")
		legend(&b, places[i], s)
	}
	b.WriteString("</svg>")
	return b.String()
}

// legendPlace is where a series' name goes under the plot: its row, its column (0 or 1; a
// name that takes the whole width is in column 0), and its lines.
type legendPlace struct {
	row, col int
	lines    []string
}

// legendLayout places the names two to a row while they fit a column; a longer name takes a
// row of its own, wrapped at spaces when longer than the row. It returns the rows used.
func legendLayout(series []chartSeries) ([]legendPlace, int) {
	places := make([]legendPlace, len(series))
	row, col := 0, 0
	for i, s := range series {
		if len([]rune(s.Name)) <= legendChars {
			places[i] = legendPlace{row: row, col: col, lines: []string{s.Name}}
			if col == 1 {
				row, col = row+1, 0
			} else {
				col = 1
			}
			continue
		}
		if col == 1 {
			row, col = row+1, 0
		}
		lines := strings.Split(strings.TrimSuffix(textwrap.Fill(s.Name, legendLine, ""), "\n"), "\n")
		places[i] = legendPlace{row: row, lines: lines}
		row += len(lines)
	}
	if col == 1 {
		row++
	}
	return places, row
}

// bar is one bar of a bar chart: a value with a spread (± sd) and a label.
type bar struct {
	Label   string
	Value   float64
	Spread  float64
	Colour  int
	Text    string // the value as the bar's label says it
	Comment string // after the value: "RATE MISSED", "partial"
}

// barChart draws horizontal bars on a log axis (throughputs of in-process and CLI targets
// differ by four orders of magnitude), with ± whiskers.
func barChart(id, class, title string, x axis, bars []bar) string {
	const rowHeight = 22
	// The labels' column is as wide as the longest label needs (about 6.3px a character at
	// 11px), so none is cut at the chart's edge; the bars keep their room beside it.
	labelWidth := 250
	for _, br := range bars {
		labelWidth = max(labelWidth, int(6.3*float64(len([]rune(br.Label))))+12)
	}
	barChartWidth := labelWidth + barChartWidth - 250
	height := marginTop + rowHeight*len(bars) + marginBottom
	var vals []float64
	for _, b := range bars {
		if b.Value > 0 {
			vals = append(vals, b.Value, b.Value+b.Spread)
			if b.Value-b.Spread > 0 {
				vals = append(vals, b.Value-b.Spread)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" id="%s" class="chart %s" role="img" viewBox="0 0 %d %d" width="%d" height="%d"><title>%s</title>`,
		esc(id), esc(class), barChartWidth, height, barChartWidth, height, esc(title))
	fmt.Fprintf(&b, `<text x="%d" y="18" class="heading">%s</text>`, 4, esc(title))
	if len(vals) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="note">nothing served</text></svg>`, labelWidth, height/2)
		return b.String()
	}
	xs := newScale(vals, x, labelWidth, barChartWidth-90)
	bottom := height - marginBottom
	for _, t := range xs.ticks(x) {
		px := xs.at(t.V)
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%d" y2="%d"/><text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`,
			px, px, marginTop-4, bottom, px, bottom+16, esc(t.Label))
	}
	fmt.Fprintf(&b, `<text class="axis" x="%d" y="%d" text-anchor="middle">%s</text>`, (labelWidth+barChartWidth-90)/2, bottom+36, esc(x.Label))
	for i, br := range bars {
		top := marginTop + i*rowHeight
		fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="end">%s</text>`, labelWidth-6, top+15, esc(br.Label))
		if br.Value <= 0 {
			fmt.Fprintf(&b, `<text class="note" x="%d" y="%d">nothing served</text>`, labelWidth+4, top+15)
			continue
		}
		x0, x1 := xs.at(xs.lo), xs.at(br.Value)
		fmt.Fprintf(&b, `<g class="bar c%d"><title>%s: %s</title><rect x="%.1f" y="%d" width="%.1f" height="%d"/>`,
			br.Colour%paletteSize, esc(br.Label), esc(x.Format(br.Value)), x0, top+3, math.Max(1, x1-x0), rowHeight-6)
		if br.Spread > 0 {
			lo, hi := xs.at(math.Max(xs.lo, br.Value-br.Spread)), xs.at(br.Value+br.Spread)
			fmt.Fprintf(&b, `<line class="whisker" x1="%.1f" x2="%.1f" y1="%d" y2="%d"/>`, lo, hi, top+rowHeight/2, top+rowHeight/2)
		}
		b.WriteString("</g>")
		text := br.Text
		if text == "" {
			text = x.Format(br.Value)
		}
		if br.Comment != "" {
			text += " " + br.Comment
		}
		fmt.Fprintf(&b, `<text class="value" x="%.1f" y="%d">%s</text>`, x1+4, top+15, esc(text))
	}
	b.WriteString("</svg>")
	return b.String()
}

func open(b *strings.Builder, id, class, title string, height int) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" id="%s" class="chart %s" role="img" viewBox="0 0 %d %d" width="%d" height="%d"><title>%s</title>`,
		esc(id), esc(class), chartWidth, height, chartWidth, height, esc(title))
	fmt.Fprintf(b, `<text x="4" y="18" class="heading">%s</text>`, esc(title))
}

// legend names a series under the plot where legendLayout placed it, never cut.
func legend(b *strings.Builder, at legendPlace, s chartSeries) {
	x, y := marginLeft+at.col*legendWidth, legendTop-6+at.row*legendRow
	fmt.Fprintf(b, `<g class="legend c%d"><line x1="%d" x2="%d" y1="%d" y2="%d"%s/><text x="%d" y="%d">`,
		s.Colour%paletteSize, x, x+18, y, y, dashAttr(s.Dash), x+22, y+4)
	for i, l := range at.lines {
		fmt.Fprintf(b, `<tspan x="%d" dy="%d">%s</tspan>`, x+22, min(i, 1)*legendRow, esc(l))
	}
	b.WriteString("</text></g>")
}

func frame(b *strings.Builder, xs, ys scale, x, y axis) {
	left, right := marginLeft, chartWidth-marginRight
	top, bottom := marginTop, plotBottom
	for _, t := range ys.ticks(y) {
		py := ys.at(t.V)
		fmt.Fprintf(b, `<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/><text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`,
			left, right, py, py, left-6, py+4, esc(t.Label))
	}
	for _, t := range xs.ticks(x) {
		px := xs.at(t.V)
		fmt.Fprintf(b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%d" y2="%d"/><text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`,
			px, px, top, bottom, px, bottom+16, esc(t.Label))
	}
	fmt.Fprintf(b, `<rect class="frame" x="%d" y="%d" width="%d" height="%d" fill="none"/>`, left, top, right-left, bottom-top)
	fmt.Fprintf(b, `<text class="axis" x="%d" y="%d" text-anchor="middle">%s</text>`, (left+right)/2, bottom+36, esc(x.Label))
	fmt.Fprintf(b, `<text class="axis" transform="translate(14 %d) rotate(-90)" text-anchor="middle">%s</text>`, (top+bottom)/2, esc(y.Label))
}

func usable(v float64, log bool) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!log || v > 0)
}

// scale maps values onto pixels, linearly or by their logarithm.
type scale struct {
	lo, hi   float64
	from, to float64
	log      bool
}

func newScale(vals []float64, a axis, from, to int) scale {
	lo, hi := vals[0], vals[0]
	for _, v := range vals {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	for _, t := range a.Ticks {
		lo, hi = math.Min(lo, t.V), math.Max(hi, t.V)
	}
	for _, v := range a.Include {
		if usable(v, a.Log) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if a.Log {
		// Whole decades around the data, so the ticks fall on them.
		lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
		if lo == hi {
			hi = lo * 10
		}
	} else {
		if a.Ticks == nil {
			lo = math.Min(lo, 0)
		}
		if hi == lo {
			hi = lo + 1
		}
		if a.Ticks == nil {
			hi = niceCeil(hi)
		}
	}
	return scale{lo: lo, hi: hi, from: float64(from), to: float64(to), log: a.Log}
}

func (s scale) at(v float64) float64 {
	f := (v - s.lo) / (s.hi - s.lo)
	if s.log {
		f = (math.Log10(v) - math.Log10(s.lo)) / (math.Log10(s.hi) - math.Log10(s.lo))
	}
	return s.from + f*(s.to-s.from)
}

func (s scale) ticks(a axis) []tick {
	if a.Ticks != nil {
		return a.Ticks
	}
	var out []tick
	if s.log {
		for v := s.lo; v <= s.hi*1.0001; v *= 10 {
			out = append(out, tick{v, a.Format(v)})
		}
		return out
	}
	step := niceCeil((s.hi - s.lo) / 5)
	for i := 0; ; i++ {
		v := s.lo + float64(i)*step
		if v > s.hi+step/1000 {
			break
		}
		// 0.1 added six times is 0.6000000000000001: round the sum to what the step says.
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
		out = append(out, tick{v, a.Format(v)})
	}
	return out
}

// niceCeil rounds up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*0.9999 {
			return m * p
		}
	}
	return 10 * p
}
