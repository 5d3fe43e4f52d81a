package report

import (
	"fmt"
	"html/template"
	"strconv"

	"github.com/authzbench/authzbench/internal/result"
)

// A run with changes gets, on the HTML page, what the terminal prints after its notes (its
// operations, the judging of its answers, the notes on both) and, for an open loop, a timeline:
// the decisions' latency step by step with every change's acknowledgement marked, where a write
// that stops the reads shows as a spike at its mark.

type changesBlock struct {
	Title      string
	Operations htmlTable
	Changes    *htmlTable
	Notes      []string
	// Timeline is the chart, empty for a closed loop, which has none (TimelineNote says so).
	Timeline     template.HTML
	TimelineNote string
}

func htmlChanges(doc *result.Document, idPrefix string) []changesBlock {
	var out []changesBlock
	for i := range doc.Runs {
		r := &doc.Runs[i]
		if r.Changes == nil && len(r.Operations) == 0 {
			continue
		}
		b := changesBlock{Title: fmt.Sprintf("%s on %s, %s", r.Workload, r.Label(), atLoad(r.Load)),
			Operations: htmlTable{Header: operationHeader[1:], Rows: dropFirst(operationRows(r))}}
		if c := r.Changes; c != nil {
			b.Changes = &htmlTable{Header: changesHeader[1:], Rows: dropFirst(changesRows(r))}
			b.Notes = changesNotes(r)
			if len(c.Timeline) > 0 {
				b.Timeline = template.HTML(timelineChart(fmt.Sprintf("%stimeline-%d", idPrefix, i), r))
			} else {
				b.TimelineNote = "No timeline: it is drawn from an open loop's sends, each at its intended time; a closed loop sends only when its workers are free, so a pause shows as fewer sends, not as latency."
			}
		}
		out = append(out, b)
	}
	return out
}

// dropFirst drops the run's name from each row: the block's title names the run.
func dropFirst(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = r[1:]
	}
	return out
}

// timelineChart draws P99 and P50 of each step of the measured window against time, on a log
// scale (a pause is orders of magnitude above the steady state), each acknowledged change a
// vertical line at its acknowledgement.
func timelineChart(id string, r *result.Run) string {
	c := r.Changes
	var p99, p50 []chartPoint
	for _, st := range c.Timeline {
		if st.Due == 0 || st.P99US <= 0 {
			continue
		}
		mid := (st.FromS + st.ToS) / 2
		p99 = append(p99, chartPoint{X: mid, Y: st.P99US})
		p50 = append(p50, chartPoint{X: mid, Y: st.P50US})
	}
	var acks []float64
	for _, w := range c.Writes {
		if w.Class == "" {
			acks = append(acks, w.AckS)
		}
	}
	// Ticks of the window's own length: a nice ceiling of it would leave the plot's right part
	// empty (3 s drawn on an axis to 5).
	window := r.Load.DurationS
	if n := len(c.Timeline); n > 0 {
		window = max(window, c.Timeline[n-1].ToS)
	}
	step := niceCeil(window / 6)
	var ticks []tick
	for i := 0; float64(i-1)*step < window-step/1000; i++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(i)*step, 'g', 12, 64), 64)
		ticks = append(ticks, tick{v, strconv.FormatFloat(v, 'f', -1, 64)})
	}
	x := axis{Label: "seconds into the measured window", Ticks: ticks, Lines: acks}
	y := axis{Label: "latency (log)", Log: true, Format: Duration}
	title := fmt.Sprintf("%s on %s: latency over time; lines: %d changes", r.Workload, r.Label(), len(acks))
	return lineChart(id, "timeline", title, x, y, []chartSeries{
		{Name: "P99 of each step's sends", Points: p99, Colour: 0},
		{Name: "P50", Points: p50, Colour: 0, Dash: 1},
	})
}
