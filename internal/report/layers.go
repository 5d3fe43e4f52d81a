package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/textwrap"
)

// Layers is one run's latency in three layers, for a run whose responses reported the server's
// own timers (--server-metrics): what the client measured, the server's whole request handler,
// and policy evaluation inside it; the server's CPU and memory beside them; and, from the
// sample of timed responses, where their time went by band of client latency.
type Layers struct {
	Workload, Target string
	Load             result.Load
	// Client is over every ok response (in open loop from its intended send, the ok responses
	// alone); Handler and Eval over the Timed ones that reported the server's timers.
	Client, Handler, Eval result.Percentiles
	OK                    uint64
	Timed                 int64
	SUT                   *result.Resources
	Attribution           *result.Attribution // nil for files written before it was kept
}

// layersOf is the run's three layers; nil when its responses reported no server timers.
func layersOf(r *result.Run) *Layers {
	s := r.Summary
	if s.Server == nil || s.Server.Sampled == 0 {
		return nil
	}
	client := s.LatencyUS
	if s.Open != nil {
		client = s.Open.OKLatencyUS // the attribution's client times are ok responses' too
	}
	return &Layers{Workload: r.Workload, Target: r.Label(), Load: r.Load, Client: client, Handler: s.Server.HandlerUS,
		Eval: s.Server.EvalUS, OK: s.OK, Timed: s.Server.Sampled, SUT: r.SUTResources, Attribution: s.Attribution}
}

var layerHeader = []string{"Workload", "Target", "Load", "Layer", "responses", "P50", "P75", "P90", "P95", "P99", "P99.9", "P99.99", "mean", "SUT CPU, RSS"}

var bandHeader = []string{"Workload", "Target", "Load", "Band", "client latency", "sampled", "waiting", "of it queued", "handler", "eval", "mean client", "mean handler", "mean eval"}

// bandLabels name the result's bands for a reader.
var bandLabels = map[string]string{"p0-p50": "≤ p50", "p50-p90": "p50–p90", "p90-p99": "p90–p99", "p99-max": "> p99", "p99.9-max": "> p99.9"}

// thinBand marks a band with fewer than result.ThinBand sampled responses.
const thinBand = "(thin)"

// layerRows are the three lines of a run: client, handler, evaluation.
func layerRows(l *Layers) [][]string {
	sut := "-"
	if res := l.SUT; res != nil {
		sut = fmt.Sprintf("%.2f cores, %.0f MB", res.CPUCoresMean, res.RSSMaxMB)
	}
	row := func(first bool, layer string, n int64, p result.Percentiles) []string {
		c := []string{"", "", "", layer, count(n)}
		if first {
			c[0], c[1], c[2] = l.Workload, l.Target, LoadLabel(l.Load)
		}
		for _, us := range []float64{p.P50, p.P75, p.P90, p.P95, p.P99, p.P999, p.P9999, p.Mean} {
			c = append(c, Duration(us))
		}
		if first {
			return append(c, sut)
		}
		return c // no trailing empty cell: tabwriter would pad it with spaces
	}
	return [][]string{row(true, "client", int64(l.OK), l.Client), row(false, "handler", l.Timed, l.Handler), row(false, "eval", l.Timed, l.Eval)}
}

// bandRows are a run's attribution, a line per band.
func bandRows(l *Layers) [][]string {
	var rows [][]string
	for i, b := range l.Attribution.Bands {
		c := []string{"", "", ""}
		if i == 0 {
			c = []string{l.Workload, l.Target, LoadLabel(l.Load)}
		}
		label := bandLabels[b.Name]
		if label == "" {
			label = b.Name
		}
		span := Duration(b.LowerUS) + "–" + Duration(b.UpperUS)
		if b.LowerUS == 0 {
			span = "≤ " + Duration(b.UpperUS)
		}
		n := count(b.Count)
		if b.Thin {
			n += " " + thinBand
		}
		c = append(c, label, span, n)
		if b.Count == 0 {
			rows = append(rows, append(c, "-", "-", "-", "-", "-", "-", "-"))
			continue
		}
		queued := "-" // closed loop: every send goes out at once
		if l.Load.Open() {
			queued = percent(b.QueuedShare)
		}
		rows = append(rows, append(c, percent(b.WaitShare), queued, percent(b.HandlerShare), percent(b.EvalShare),
			Duration(b.MeanClientUS), Duration(b.MeanHandlerUS), Duration(b.MeanEvalUS)))
	}
	return rows
}

// layerNotes say how to read the two tables, and each run's slowest band in a sentence.
func layerNotes(v *View) []string {
	var notes []string
	anyBands, anyOpen, anyThin := false, false, false
	for _, l := range v.Layers {
		a := l.Attribution
		if a == nil {
			continue
		}
		anyBands = true
		anyOpen = anyOpen || l.Load.Open()
		where := fmt.Sprintf("%s on %s, %s", l.Workload, l.Target, atLoad(l.Load))
		if slow := slowest(a); slow != nil {
			n := count(slow.Count) + " sampled"
			if slow.Thin {
				n += ", " + thinBand[1:len(thinBand)-1]
			}
			// After the send, the waiting is the wire and the kernels' socket queues, but also
			// either process waiting for a CPU: the words say queues, not the network alone.
			waiting := "queues and transport"
			if l.Load.Open() {
				waiting = fmt.Sprintf("%s queued before the send, %s in transport and the server's queues", percent(slow.QueuedShare), percent(slow.WaitShare-slow.QueuedShare))
			}
			notes = append(notes, fmt.Sprintf("%s: requests slower than %s spent %s waiting (%s), %s in the handler outside evaluation, %s evaluating (%s)",
				where, strings.TrimPrefix(bandLabels[slow.Name], "> "), percent(slow.WaitShare), waiting, percent(slow.HandlerShare), percent(slow.EvalShare), n))
		}
		if a.Every > 1 {
			notes = append(notes, fmt.Sprintf("%s: the sample keeps one in %d of the %s timed responses (%s), evenly spread", where, a.Every, count(a.Timed), count(a.Sampled)))
		}
		if a.HandlerOverClient > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d sampled responses reported a handler time above their client latency (two processes' clocks); counted as no waiting", where, a.HandlerOverClient))
		}
		for _, b := range a.Bands {
			anyThin = anyThin || b.Thin
		}
	}
	if len(v.Layers) > 0 {
		notes = append(notes, "layers: client is every ok response's latency as authzbench measured it; handler and eval are the server's own timers (OPA: timer_server_handler_ns, timer_rego_query_eval_ns) on the responses that reported them (--server-metrics N: every Nth), which pay a little more for being timed")
	}
	if anyBands {
		how := "bands: the timed responses by their client latency, edges at the run's percentiles; waiting is client latency minus handler time (the network, socket queues, the client's own work"
		if anyOpen {
			how += ", and in open loop the send's delay after its intended time, since latency runs from it: the generator's own lateness and the wait for a free connection, shown as queued"
		}
		notes = append(notes, how+"), handler is handler time outside evaluation; shares of the band's summed client latency (docs/attribution.md)")
	}
	if anyThin {
		notes = append(notes, fmt.Sprintf("%s marks a band with fewer than %d sampled responses: its shares are anecdotes", thinBand, result.ThinBand))
	}
	return notes
}

// slowest is the band of the slowest responses that is not thin (> p99 if it holds enough),
// or the > p99 band when every tail band is thin.
func slowest(a *result.Attribution) *result.Band {
	var pick *result.Band
	for i := range a.Bands {
		b := &a.Bands[i]
		if b.Count == 0 || (b.Name != "p99-max" && b.Name != "p99.9-max") {
			continue
		}
		if pick == nil || !b.Thin {
			pick = b
		}
	}
	return pick
}

// atLoad says the load in a sentence: "at 2,000 req/s", "with 8 workers", "under stages
// 0→2000/30s", "under replay 200 events/1.5s at 2×".
func atLoad(l result.Load) string {
	s := l.Schedule()
	switch rate, ok := s.Rate(); {
	case ok:
		return "at " + Thousands(rate) + " req/s"
	case l.Open():
		return "under " + s.Label(Thousands)
	}
	return "with " + s.Label(Thousands)
}

func percent(share float64) string { return fmt.Sprintf("%.0f %%", share*100) }

// count renders a count with thousands separators.
func count(n int64) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return Thousands(float64(n))
}

// writeLayers writes the three-layer table and the attribution table of the runs that have
// them, and their notes; nothing when no run's responses reported the server's timers.
func writeLayers(w io.Writer, v *View, markdown bool) error {
	if len(v.Layers) == 0 {
		return nil
	}
	var rows, bands [][]string
	for i := range v.Layers {
		l := &v.Layers[i]
		rows = append(rows, layerRows(l)...)
		if l.Attribution != nil {
			bands = append(bands, bandRows(l)...)
		}
	}
	title := "Three layers: client latency, the server's handler, policy evaluation"
	bandTitle := "Where the timed responses' time went, by band of client latency"
	if markdown {
		if err := mdTable(w, "**"+title+"**", layerHeader, rows); err != nil {
			return err
		}
		if len(bands) > 0 {
			if err := mdTable(w, "**"+bandTitle+"**", bandHeader, bands); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		for _, n := range layerNotes(v) {
			if _, err := fmt.Fprintf(w, "- %s\n", n); err != nil {
				return err
			}
		}
		return nil
	}
	if err := textTable(w, title, layerHeader, rows); err != nil {
		return err
	}
	if len(bands) > 0 {
		if err := textTable(w, bandTitle, bandHeader, bands); err != nil {
			return err
		}
	}
	// A blank line, then the notes as the terminal's others read: bulleted, wrapped.
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	for _, n := range layerNotes(v) {
		if _, err := io.WriteString(w, textwrap.Fill("- "+n, TerminalWidth, "  ")); err != nil {
			return err
		}
	}
	return nil
}

func textTable(w io.Writer, title string, header []string, rows [][]string) error {
	if _, err := fmt.Fprintf(w, "\n%s\n", title); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

func mdTable(w io.Writer, title string, header []string, rows [][]string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n\n| %s |\n|%s\n", title, strings.Join(header, " | "), strings.Repeat("---|", len(header)))
	for _, r := range rows {
		for len(r) < len(header) {
			r = append(r, "")
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(r, " | "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
