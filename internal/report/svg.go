package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
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
	Colour int  // palette index
	Dashed bool // a secondary figure of the same series (P50 beside P99)
}

// axis is how a chart's axis maps values and labels its ticks.
type axis struct {
	Label string
	Log   bool
	// Ticks, when set, replaces the computed ticks: value and label.
	Ticks []tick
	// Format labels a computed tick.
	Format func(float64) string
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
	marginRight  = 16
	marginTop    = 34
	marginBottom = 48 // below a bar chart's last bar: its tick labels and axis label
	legendTop    = plotBottom + 54
	legendRow    = 16
	legendWidth  = (chartWidth - marginLeft) / 2
	paletteSize  = 8
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
	height := legendTop + legendRow*((len(series)+1)/2)
	open(&b, id, class, title, height)
	if len(xs) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="note">no data</text></svg>`, marginLeft, plotBottom/2)
		return b.String()
	}
	xScale := newScale(xs, x, marginLeft, chartWidth-marginRight)
	yScale := newScale(ys, y, plotBottom, marginTop)
	frame(&b, xScale, yScale, x, y)
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
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="5 4"`
		}
		fmt.Fprintf(&b, `<g class="series c%d"><title>%s</title>`, s.Colour%paletteSize, esc(s.Name))
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
		legend(&b, i, s)
	}
	b.WriteString("</svg>")
	return b.String()
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
	const rowHeight, labelWidth = 22, 250
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

// legend names series i under the plot, two to a row.
func legend(b *strings.Builder, i int, s chartSeries) {
	x, y := marginLeft+(i%2)*legendWidth, legendTop-6+(i/2)*legendRow
	dash := ""
	if s.Dashed {
		dash = ` stroke-dasharray="5 4"`
	}
	name := s.Name
	if len([]rune(name)) > 40 {
		name = string([]rune(name)[:39]) + "…"
	}
	fmt.Fprintf(b, `<g class="legend c%d"><line x1="%d" x2="%d" y1="%d" y2="%d"%s/><text x="%d" y="%d">%s</text></g>`,
		s.Colour%paletteSize, x, x+18, y, y, dash, x+22, y+4, esc(name))
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
