package compare

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
)

// Format is how a comparison is written: a table for a terminal, Markdown for a pull request's
// comment, or JSON for other tools.
type Format string

const (
	Table    Format = "table"
	Markdown Format = "markdown"
	JSON     Format = "json"
)

// Formats are the formats, as --format lists them.
var Formats = []Format{Table, Markdown, JSON}

// ParseFormat reads --format.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if s == string(f) {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q; known: table, markdown, json", s)
}

// Report is what is written: the comparison and, when a gate was given, its verdict.
type Report struct {
	*Result
	Gate *Verdict `json:"gate,omitempty"`
	// figures are the columns shown: Shown, and those the gate names.
	figures []Figure
}

// NewReport puts a comparison and its gate's verdict (nil without a gate) together.
func NewReport(r *Result, g Gate, v *Verdict) *Report {
	rep := &Report{Result: r, Gate: v}
	for _, f := range Figures {
		shown := false
		for _, s := range Shown {
			shown = shown || s == f
		}
		for _, s := range g.Figures() {
			shown = shown || s == f
		}
		if shown {
			rep.figures = append(rep.figures, f)
		}
	}
	return rep
}

// Write writes the report in the format.
func (rep *Report) Write(w io.Writer, f Format) error {
	switch f {
	case JSON:
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fmt.Errorf("compare: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case Markdown:
		return rep.markdown(w)
	}
	return rep.table(w)
}

func (rep *Report) header() []string {
	h := []string{"Workload", "Target", "Load"}
	for _, f := range rep.figures {
		h = append(h, f.Title()+" base → new", "Δ "+f.Title())
	}
	return append(h, "n")
}

func (rep *Report) cells(row Row) []string {
	out := []string{row.Workload, row.Target, row.Load}
	n := ""
	for _, f := range rep.figures {
		c := row.Cell(f)
		if c == nil {
			out = append(out, "-", "-")
			continue
		}
		values := formatFigure(f, c.Base) + " → " + formatFigure(f, c.New)
		if c.Thin {
			values = "≥ " + values
		}
		out = append(out, values, delta(c))
		if n == "" {
			n = fmt.Sprintf("%d+%d", c.NBase, c.NNew)
		}
	}
	if row.Problem != "" {
		n = "-"
	}
	return append(out, n)
}

// delta renders a change as benchstat does: the change and its p-value when significant, "~"
// when within the noise, "?" when the repetitions cannot tell.
func delta(c *Cell) string {
	switch {
	case c.Untestable != "":
		return "?"
	case !c.Significant:
		return fmt.Sprintf("~ (p=%.2f)", c.P)
	}
	return fmt.Sprintf("%+.1f%% (p=%.3f)", c.Change*100, c.P)
}

// formatFigure renders a figure's value: requests per second, or a latency with its unit.
func formatFigure(f Figure, v float64) string {
	if f == Throughput {
		return report.Thousands(v)
	}
	return report.Duration(v)
}

// notes are the lines under the table: what was compared and how, rows that could not be
// compared, warnings, the gate's verdict.
func (rep *Report) notes() (lines, warnings []string) {
	side := func(s Side) string {
		out := s.Name
		var about []string
		if s.Commit != "" {
			about = append(about, "commit "+s.Commit)
		}
		if s.Created != "" {
			about = append(about, s.Created)
		}
		if len(about) > 0 {
			out += " (" + strings.Join(about, ", ") + ")"
		}
		return out
	}
	lines = append(lines, "base: "+side(rep.Base), "new:  "+side(rep.New),
		fmt.Sprintf("Δ: %s at p ≤ %g; ~ within the noise; ? too few repetitions to tell. Percentiles from each side's merged histograms, req/s the mean over repetitions.", rep.Test, rep.Alpha))
	thin := false
	for _, row := range rep.Rows {
		for _, c := range row.Cells {
			thin = thin || c.Thin
		}
	}
	if thin {
		lines = append(lines, fmt.Sprintf("≥ marks a percentile with fewer than %d ok responses beyond it on some side: close to the slowest few, it moves with them; run longer to steady it.", result.FewBeyond))
	}
	for _, row := range rep.Rows {
		if row.Problem != "" {
			lines = append(lines, row.Name()+": "+row.Problem)
		}
		for _, c := range row.Cells {
			if c.Untestable != "" {
				lines = append(lines, fmt.Sprintf("%s: %s", row.Name(), c.Untestable))
				break
			}
		}
	}
	return lines, rep.Warnings
}

func (rep *Report) verdict() []string {
	if rep.Gate == nil {
		return nil
	}
	if rep.Gate.Passed {
		return []string{fmt.Sprintf("gate %s: PASS (%d rows, no significant change beyond it)", rep.Gate.Expression, rep.Gate.Rows)}
	}
	out := []string{fmt.Sprintf("gate %s: FAIL (%d reason(s))", rep.Gate.Expression, len(rep.Gate.Failures))}
	for _, f := range rep.Gate.Failures {
		out = append(out, "  "+f.String())
	}
	return out
}

func (rep *Report) table(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(rep.header(), "\t"))
	for _, row := range rep.Rows {
		fmt.Fprintln(tw, strings.Join(rep.cells(row), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	lines, warnings := rep.notes()
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	for _, l := range warnings {
		fmt.Fprintln(w, "warning: "+l)
	}
	for _, l := range rep.verdict() {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

func (rep *Report) markdown(w io.Writer) error {
	var b strings.Builder
	if v := rep.Gate; v != nil {
		if v.Passed {
			fmt.Fprintf(&b, "**authzbench gate `%s`: pass** (%d rows)\n\n", v.Expression, v.Rows)
		} else {
			fmt.Fprintf(&b, "**authzbench gate `%s`: FAIL**\n\n", v.Expression)
			for _, f := range v.Failures {
				fmt.Fprintf(&b, "- %s\n", mdEscape(f.String()))
			}
			b.WriteString("\n")
		}
	}
	header := rep.header()
	b.WriteString("| " + strings.Join(header, " | ") + " |\n")
	b.WriteString(strings.Repeat("|---", len(header)) + "|\n")
	for _, row := range rep.Rows {
		cells := rep.cells(row)
		for i := range cells {
			cells[i] = mdEscape(cells[i])
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
	lines, warnings := rep.notes()
	for _, l := range lines {
		b.WriteString("- " + mdEscape(l) + "\n")
	}
	for _, l := range warnings {
		b.WriteString("- ⚠ " + mdEscape(l) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape keeps a cell's text from breaking the table.
func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteHTML writes the comparison as an HTML fragment for a page that has its own head and
// stylesheet (the history's): the table with the terminal's columns, the runs only one side
// holds folded under it, then its notes and warnings. Every text is escaped.
func (rep *Report) WriteHTML(w io.Writer) error {
	var b strings.Builder
	var both, one []Row
	for _, row := range rep.Rows {
		if row.Missing == "" {
			both = append(both, row)
		} else {
			one = append(one, row)
		}
	}
	table := func(rows []Row) {
		b.WriteString(`<div class="scroll"><table class="compare"><thead><tr>`)
		for _, h := range rep.header() {
			fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(h))
		}
		b.WriteString("</tr></thead><tbody>\n")
		for _, row := range rows {
			class := ""
			for _, f := range rep.figures {
				if c := row.Cell(f); c != nil && c.Significant && c.Untestable == "" {
					class = ` class="changed"`
				}
			}
			fmt.Fprintf(&b, "<tr%s>", class)
			for _, c := range rep.cells(row) {
				fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(c))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</tbody></table></div>\n")
	}
	if len(both) > 0 {
		table(both)
	} else {
		b.WriteString(`<p class="nothing-in-common">The two sides have no run in common: nothing to compare.</p>` + "\n")
	}
	if len(one) > 0 {
		fmt.Fprintf(&b, `<details class="only-one"><summary>%s only one side holds</summary><ul class="notes">`, runsCount(len(one)))
		for _, row := range one {
			fmt.Fprintf(&b, "<li>%s: %s</li>", html.EscapeString(row.Name()), html.EscapeString(row.Problem))
		}
		b.WriteString("</ul></details>\n")
	}
	lines, warnings := rep.notes()
	folded := map[string]bool{} // said in the fold above
	for _, row := range one {
		folded[row.Name()+": "+row.Problem] = true
	}
	var kept []string
	for _, l := range lines {
		if !folded[l] {
			kept = append(kept, l)
		}
	}
	lines = kept
	if len(warnings) > 0 {
		b.WriteString(`<ul class="warnings">`)
		for _, l := range warnings {
			fmt.Fprintf(&b, "<li>%s</li>", html.EscapeString(l))
		}
		b.WriteString("</ul>\n")
	}
	if len(lines) > 0 {
		b.WriteString(`<ul class="notes">`)
		for _, l := range lines {
			fmt.Fprintf(&b, "<li>%s</li>", html.EscapeString(l))
		}
		b.WriteString("</ul>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func runsCount(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}
