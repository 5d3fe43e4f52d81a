package result

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A file written before the ‡ note named its engine (cedar_differences, only ever written for
// Cedar's runs) reads as Cedar's note, and is written back under the new name alone.
func TestOldCedarDifferencesReadAsCedar(t *testing.T) {
	doc, err := Read(filepath.Join("testdata", "cedar-differences-2026-11-23.json"))
	if err != nil {
		t.Fatal(err)
	}
	handed := map[string]*Handed{}
	for _, r := range doc.Runs {
		handed[r.Target] = r.WorkloadDoc.Handed
	}
	if h := handed["opa/inproc"]; h != nil {
		t.Errorf("opa/inproc handed %+v, want nothing", h)
	}
	h := handed["cedar/inproc"]
	if h == nil || h.Engine != "cedar" || h.Language != "Cedar" || !strings.HasPrefix(h.What, "Cedar is handed the token's verdict") {
		t.Fatalf("cedar/inproc handed %+v, want Cedar's note", h)
	}
	b, err := json.Marshal(doc.Runs[1].WorkloadDoc)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Contains(s, "cedar_differences") || !strings.Contains(s, `"handed":{"engine":"cedar","language":"Cedar","what":"Cedar is handed`) {
		t.Errorf("written back as %s", s)
	}
}

// A new file's note keeps its engine, and wins over an old field beside it.
func TestHandedNamesItsEngine(t *testing.T) {
	var w WorkloadInfo
	in := `{"query": "q", "inputs": 3, "handed": {"engine": "openfga", "language": "OpenFGA", "what": "tuples stored ahead"}, "cedar_differences": "old"}`
	if err := json.Unmarshal([]byte(in), &w); err != nil {
		t.Fatal(err)
	}
	if w.Handed == nil || w.Handed.Language != "OpenFGA" || w.Handed.What != "tuples stored ahead" || w.Query != "q" || w.Inputs != 3 {
		t.Errorf("read %+v (handed %+v)", w, w.Handed)
	}
	if err := json.Unmarshal([]byte(`{"inputs": "three"}`), &w); err == nil {
		t.Error("a wrong field's type is no error")
	}
}
