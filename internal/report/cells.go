package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

// The formatting the table-shaped renderers share: a row's cells as text, and the notes under
// the table.

var header = []string{"Workload", "Target", "Load", "req/s ± sd", "P50", "P50 over nop", "P95", "P99", "P99.9", "errors", "SUT CPU, RSS", "× vs first"}

// partsHeader are the columns that split a request's time when it opened its own connection.
var partsHeader = []string{"P50 connect", "P50 TLS", "P50 exchange"}

// columns returns the table's header, with the cross-engine column when there is one and the
// parts of a request's time when a row has them.
func columns(v *View) []string {
	c := append([]string{}, header...)
	if e := v.CrossEngine; e != "" {
		c = append(c, "× vs "+e)
	}
	if v.HasParts() {
		c = append(c, partsHeader...)
	}
	return c
}

// ratioHeader is the ratio column the default view keeps: the cross-engine one when the
// document compares engines (the question such a run asks), else the one against the first
// target of each workload.
func ratioHeader(v *View) string {
	if v.CrossEngine != "" {
		return "× vs " + v.CrossEngine
	}
	return "× vs first"
}

// DefaultColumns names the columns the default view keeps, in words for --help: the rest (P50
// over nop, P95, P99.9, the server's CPU and memory, the other ratio, the parts of a request's
// time) are one --wide away.
const DefaultColumns = "workload, target, load, req/s ± sd, P50, P99, errors and one ratio (× vs the first engine when engines are compared, else × vs first when a workload ran on several targets)"

// comparesTargets says whether some workload ran on several targets: else × vs first only
// divides one target's req/s under one load by its req/s under another (a rate matrix: 10× the
// rate, 10× the req/s), which says nothing the load column does not.
func comparesTargets(v *View) bool {
	first := map[string]string{}
	for _, r := range v.Rows {
		if t, ok := first[r.Workload]; !ok {
			first[r.Workload] = r.Target
		} else if t != r.Target {
			return true
		}
	}
	return false
}

// grid is a table's header and rows as text: every column when wide, else the few a reader
// needs first (DefaultColumns); target is a row's label as the format writes it.
func grid(v *View, wide bool, target func(Row) string) (head []string, rows [][]string) {
	all := columns(v)
	keep := make([]int, 0, len(all))
	for i, c := range all {
		switch c {
		case "Workload", "Target", "Load", "req/s ± sd", "P50", "P99", "errors":
			keep = append(keep, i)
		case ratioHeader(v):
			if wide || v.CrossEngine != "" || comparesTargets(v) {
				keep = append(keep, i)
			}
		default:
			if wide {
				keep = append(keep, i)
			}
		}
	}
	pick := func(cs []string) []string {
		out := make([]string, len(keep))
		for j, i := range keep {
			out[j] = cs[i]
		}
		return out
	}
	for _, r := range v.Rows {
		rows = append(rows, pick(cells(v, r, target(r))))
	}
	return pick(all), rows
}

// partCells are a row's parts of a request's time; "-" for a part it has not.
func partCells(p *Parts) []string {
	c := []string{"-", "-", "-"}
	if p == nil {
		return c
	}
	c[0] = Duration(p.ConnectUS)
	if p.HasTLS {
		c[1] = Duration(p.TLSUS)
	}
	if p.HasExchange {
		c[2] = Duration(p.ExchangeUS)
	}
	return c
}

// label is the row's target as the table and its notes name it: marked when the run was cut
// short or missed its rate.
func label(r Row) string { return r.Target + marks(r) }

// marks are what follows the target's name in its cell; they are words for the reader, not part
// of the name, so Markdown sets them outside the name's code span.
func marks(r Row) string {
	s := ""
	if r.Partial {
		s += " (partial)"
	}
	if r.RateMissed {
		s += " RATE MISSED"
	}
	return s
}

// cells renders a row; target is its label as the format writes it.
func cells(v *View, r Row, target string) []string {
	workload := r.Workload
	if r.Handed {
		workload += " " + handedMark
	}
	p50, p95, p99, p999 := "-", "-", "-", "-"
	if r.Served {
		mark := func(thin bool, us float64) string {
			if thin {
				return thinTail + Duration(us)
			}
			return Duration(us)
		}
		p50, p95, p99, p999 = mark(r.Thin.P50, r.Latency.P50), mark(r.Thin.P95, r.Latency.P95),
			mark(r.Thin.P99, r.Latency.P99), mark(r.Thin.P999, r.Latency.P999)
	}
	over := "-"
	if d := r.OverFloor; d != nil {
		over = signedDuration(d.US)
		if d.HasInterval {
			over += " ±" + Duration(d.HalfUS)
			if d.IncludesZero() {
				over += " ~"
			}
		}
	}
	errors := "0"
	if r.Errors > 0 {
		errors = fmt.Sprintf("%d !", r.Errors)
	}
	sut := "-"
	if res := r.SUT; res != nil {
		sut = fmt.Sprintf("%.2f cores, %.0f MB", res.CPUCoresMean, res.RSSMaxMB)
	}
	vsFirst := "-"
	switch {
	case r.VsFirst.Base:
		vsFirst = RatioText(1) + " (" + r.Target + ")"
	case r.VsFirst.Value > 0:
		vsFirst = RatioText(r.VsFirst.Value) + called(r.VsFirst)
	}
	c := []string{workload, target, LoadLabel(r.Load), formatRPS(r.Throughput), p50, over, p95, p99, p999, errors, sut, vsFirst}
	if v.CrossEngine != "" {
		cross := "-"
		if r.VsEngine.Value > 0 {
			cross = RatioText(r.VsEngine.Value) + called(r.VsEngine)
		}
		c = append(c, cross)
	}
	if v.HasParts() {
		c = append(c, partCells(r.Parts)...)
	}
	return c
}

// called marks a ratio when a difference is called.
func called(r Ratio) string {
	if r.Different {
		return " " + differenceMark
	}
	return ""
}

// noteGroup is one kind of note under the table, under its title.
type noteGroup struct {
	Title string
	Items []string
}

// noteGroups are the notes under a table whose columns are head, by kind: the fits in full,
// the caveats, the rows' own notes (each naming its row), how the columns shown read, what was
// skipped, the environment. A note on a column the table leaves out is left out with it.
func noteGroups(v *View, head []string) []noteGroup {
	shown := map[string]bool{}
	for _, h := range head {
		shown[h] = true
	}
	byKind := map[NoteKind][]string{}
	for _, n := range v.Notes {
		if n.Kind == ColumnNote && n.Column != "" && !shown[n.Column] {
			continue
		}
		byKind[n.Kind] = append(byKind[n.Kind], n.Text)
	}
	var runs []string
	for _, r := range v.Rows {
		for _, n := range r.Notes {
			runs = append(runs, fmt.Sprintf("%s on %s: %s", r.Workload, label(r), n))
		}
	}
	var groups []noteGroup
	add := func(title string, items []string) {
		if len(items) > 0 {
			groups = append(groups, noteGroup{title, items})
		}
	}
	add(noteTitles[FitNote], byKind[FitNote])
	add(noteTitles[CaveatNote], byKind[CaveatNote])
	add("Runs", runs)
	for _, k := range []NoteKind{ColumnNote, SkippedNote, EnvNote} {
		add(noteTitles[k], byKind[k])
	}
	return groups
}

// findingsTitle heads the lines that say what the run shows.
const findingsTitle = "Findings"

// LoadLabel says what load a row ran under, in its schedule's words and, in open loop, the
// connections that bound the requests in flight: "8 workers" (closed loop), "2,000/s x64",
// "stages 0→2000/30s, 2000/1m0s x64", "replay 200 events/1.5s at 2× x64".
func LoadLabel(l result.Load) string {
	label := l.Schedule().Label(Thousands)
	if l.Open() {
		return fmt.Sprintf("%s x%d", label, l.Connections)
	}
	return label
}

// RatioText renders a ratio with three significant digits, whatever its size, and thousands
// separators: "0.421×", "3.14×", "78.8×", "1,770×", "21,400×". Every ratio a report prints
// reads by this one rule, so a column of them lines up in the reader's head: more digits than
// three would claim a precision no benchmark ratio has.
func RatioText(v float64) string {
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return "-"
	}
	digits := int(math.Floor(math.Log10(v))) + 1 // digits before the point
	if digits >= 3 {
		scale := math.Pow(10, float64(digits-3))
		return Thousands(math.Round(v/scale)*scale) + "×"
	}
	s := strconv.FormatFloat(v, 'f', 3-digits, 64)
	// Rounding can carry into a new digit (9.996 -> "10.00"): say it with three digits.
	if r, _ := strconv.ParseFloat(s, 64); r >= math.Pow(10, float64(digits)) {
		return RatioText(r)
	}
	return s + "×"
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// Duration renders microseconds with a unit that keeps three significant digits.
func Duration(us float64) string {
	switch {
	case us < 0.9995:
		return fmt.Sprintf("%.0fns", us*1e3)
	case us < 999.5:
		return sig3(us) + "µs"
	case us < 999.5e3:
		return sig3(us/1e3) + "ms"
	}
	return sig3(us/1e6) + "s"
}

// signedDuration renders a difference of microseconds with its sign.
func signedDuration(us float64) string {
	if us < 0 {
		return "-" + Duration(-us)
	}
	return "+" + Duration(us)
}

// sig3 keeps three significant digits without switching to exponent notation.
func sig3(v float64) string {
	switch {
	case v < 9.995:
		return fmt.Sprintf("%.2f", v)
	case v < 99.95:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// formatRPS renders a throughput, with its sd when there were several repetitions.
func formatRPS(s result.Spread) string {
	out := Thousands(s.Mean)
	if s.N > 1 {
		out += " ± " + Thousands(s.SD)
	}
	return out
}

// Thousands renders a rate with thousands separators, and one decimal below 100.
func Thousands(v float64) string {
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	n := int64(math.Round(v))
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
