package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

func init() {
	Register(Format{Name: "markdown", Render: Markdown, Heading: func(name string) string { return "### " + name + "\n\n" }})
}

// Markdown writes the findings, then the comparison table as GitHub-flavoured Markdown with
// every column (a page is read at leisure, and the prose beside it cites any column), then the
// notes, a list under each kind's title.
func Markdown(w io.Writer, doc *result.Document) error {
	v := Build(doc)
	var b strings.Builder
	list := func(title string, items []string) {
		fmt.Fprintf(&b, "**%s**\n\n", title)
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	if len(v.Findings) > 0 {
		list(findingsTitle, v.Findings)
		b.WriteString("\n")
	}
	cols, rows := grid(v, true, func(r Row) string { return "`" + r.Target + "`" + marks(r) })
	if len(rows) > 0 { // else the notes begin with NoRuns, and a header alone is no table
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cols, " | "))
		fmt.Fprintf(&b, "|%s\n", strings.Repeat("---|", len(cols)))
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(r, " | "))
		}
	}
	for _, g := range noteGroups(v, cols) {
		b.WriteString("\n")
		list(g.Title, g.Items)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := writeLayers(w, v, true); err != nil {
		return err
	}
	if err := writeRamps(w, v, true); err != nil {
		return err
	}
	if err := writeDecisions(w, doc, true); err != nil {
		return err
	}
	if err := writeChanges(w, doc, true); err != nil {
		return err
	}
	return writeCapacity(w, doc.Capacity, true)
}
