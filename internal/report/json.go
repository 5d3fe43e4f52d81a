package report

import (
	"encoding/json"
	"io"

	"github.com/authzbench/authzbench/internal/result"
)

// JSON writes the result document itself, its comparisons computed afresh so that a document
// written before they existed, or merged from several, shows the intervals the table uses.
func JSON(w io.Writer, doc *result.Document) error {
	d := *doc
	d.Comparisons = result.Compare(doc)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(&d)
}
