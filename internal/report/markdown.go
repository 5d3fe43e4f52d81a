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

// Markdown writes the comparison table as GitHub-flavoured Markdown, the notes as a list.
func Markdown(w io.Writer, doc *result.Document) error {
	v := Build(doc)
	cols := columns(v)
	if len(v.Rows) > 0 { // else the notes begin with NoRuns, and a header alone is no table
		fmt.Fprintf(w, "| %s |\n", strings.Join(cols, " | "))
		fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(cols)))
		for _, r := range v.Rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells(v, r, "`"+r.Target+"`"+marks(r)), " | "))
		}
		fmt.Fprintln(w)
	}
	if err := writeNotes(w, v, "- "); err != nil {
		return err
	}
	return writeLayers(w, v, true)
}
