package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/textwrap"
)

func init() {
	Register(Format{Name: "table", Render: Table, Wide: TableWide, Heading: func(name string) string { return "== " + name + " ==\n" }})
}

// TerminalWidth is the width the terminal view is written for: the default table of the
// quickstart fits it, and the notes are wrapped to it.
const TerminalWidth = 120

// Table writes the comparison table for a terminal, the columns a reader needs first
// (DefaultColumns) aligned, the notes under it wrapped to TerminalWidth.
func Table(w io.Writer, doc *result.Document) error { return table(w, doc, false) }

// TableWide is Table with every column.
func TableWide(w io.Writer, doc *result.Document) error { return table(w, doc, true) }

func table(w io.Writer, doc *result.Document, wide bool) error {
	v := Build(doc)
	var b strings.Builder
	list := func(title string, items []string) {
		b.WriteString(title + "\n")
		for _, it := range items {
			b.WriteString(textwrap.Fill("- "+it, TerminalWidth, "  "))
		}
	}
	if len(v.Findings) > 0 {
		list(findingsTitle, v.Findings)
		b.WriteString("\n")
	}
	head, rows := grid(v, wide, label)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if len(rows) > 0 { // else the notes begin with NoRuns, and a header alone is no table
		fmt.Fprintln(tw, strings.Join(head, "\t"))
	}
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range noteGroups(v, head) {
		b.WriteString("\n")
		list(g.Title, g.Items)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := writeLayers(w, v, false); err != nil {
		return err
	}
	if err := writeRamps(w, v, false); err != nil {
		return err
	}
	if err := writeDecisions(w, doc, false); err != nil {
		return err
	}
	if err := writeChanges(w, doc, false); err != nil {
		return err
	}
	return writeCapacity(w, doc.Capacity, false)
}
