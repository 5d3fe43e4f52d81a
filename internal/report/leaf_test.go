package report

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// report reads result documents only: it imports the standard library, result (a leaf,
// result's own test says), textwrap (standard library only, as the help fills its lines) and
// the histogram library result stores its histograms in (the HTML
// report merges them for its percentile charts), so rendering a kept file links no engine.
func TestReportImportsOnlyResult(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files (%v)", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			standard := !strings.Contains(strings.Split(path, "/")[0], ".")
			if !standard && path != "github.com/authzbench/authzbench/internal/result" && path != "github.com/authzbench/authzbench/internal/textwrap" {
				t.Errorf("%s imports %s: report reads result documents only", f, path)
			}
		}
	}
}
