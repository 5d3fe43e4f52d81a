package report

import (
	"encoding/json"
	"io"

	"github.com/authzbench/authzbench/internal/result"
)

// JSON writes the result document itself.
func JSON(w io.Writer, doc *result.Document) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
