package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/authzbench/authzbench/internal/result"
)

func init() {
	Register(Format{Name: "table", Render: Table, Heading: func(name string) string { return "== " + name + " ==\n" }})
}

// Table writes the comparison table for a terminal, its columns aligned, the notes under it.
func Table(w io.Writer, doc *result.Document) error {
	v := Build(doc)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(v.Rows) > 0 { // else the notes begin with NoRuns, and a header alone is no table
		fmt.Fprintln(tw, strings.Join(columns(v), "\t"))
	}
	for _, r := range v.Rows {
		fmt.Fprintln(tw, strings.Join(cells(v, r, label(r)), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeNotes(w, v, ""); err != nil {
		return err
	}
	return writeLayers(w, v, false)
}
