package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/authzbench/authzbench/internal/result"
)

func init() {
	Register(Format{Name: "json", Render: JSON, Several: jsonArray, Data: true})
}

// JSON writes the result document itself, its comparisons computed afresh so that a document
// written before they existed, or merged from several, shows the intervals the table uses.
func JSON(w io.Writer, doc *result.Document) error {
	d := *doc
	d.Comparisons = result.Compare(doc)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(&d)
}

// jsonArray writes several documents as one JSON array of them.
func jsonArray(w io.Writer, _ []string, docs []*result.Document) error {
	parts := make([]json.RawMessage, len(docs))
	for i, doc := range docs {
		var b bytes.Buffer
		if err := JSON(&b, doc); err != nil {
			return err
		}
		parts[i] = b.Bytes()
	}
	out, err := json.MarshalIndent(parts, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", out)
	return err
}
