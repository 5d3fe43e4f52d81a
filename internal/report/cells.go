package report

import (
	"fmt"
	"io"
	"math"
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
		vsFirst = "1.00× (" + r.Target + ")"
	case r.VsFirst.Value > 0:
		vsFirst = fmt.Sprintf("%.2f×", r.VsFirst.Value) + called(r.VsFirst)
	}
	c := []string{workload, target, LoadLabel(r.Load), formatRPS(r.Throughput), p50, over, p95, p99, p999, errors, sut, vsFirst}
	if v.CrossEngine != "" {
		cross := "-"
		if r.VsEngine.Value > 0 {
			cross = crossRatio(r.VsEngine.Value) + called(r.VsEngine)
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

// writeNotes writes the rows' notes, each naming its row, then the document's, each line
// starting with bullet.
func writeNotes(w io.Writer, v *View, bullet string) error {
	for _, r := range v.Rows {
		for _, n := range r.Notes {
			if _, err := fmt.Fprintf(w, "%s%s on %s: %s\n", bullet, r.Workload, label(r), n); err != nil {
				return err
			}
		}
	}
	for _, n := range v.Notes {
		if _, err := fmt.Fprintf(w, "%s%s\n", bullet, n); err != nil {
			return err
		}
	}
	return nil
}

// LoadLabel says what load a row ran under: "8 workers" (closed loop), "2,000/s x64" (open),
// "stages 0→2000/30s, 2000/1m0s x64".
func LoadLabel(l result.Load) string {
	if l.Open() {
		return fmt.Sprintf("%s x%d", l.Schedule(Thousands), l.Connections)
	}
	if l.Workers == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", l.Workers)
}

// crossRatio keeps two significant digits below 10 and whole numbers above: "0.42×", "3.1×",
// "24×".
func crossRatio(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.0f×", v)
	case v >= 1:
		return fmt.Sprintf("%.1f×", v)
	}
	return fmt.Sprintf("%.2f×", v)
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
