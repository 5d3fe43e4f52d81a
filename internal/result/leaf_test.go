package result

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// importsOf lists what the non-test Go files in dir import.
func importsOf(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	var out []string
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
			out = append(out, path)
		}
	}
	return out
}

// result is a leaf, so that whatever reads a result file (reports, merges, other tools) links
// no engine: the standard library, hdrhistogram, buildinfo, outputs (the one atomic writer of
// every file a command writes) and userwords (its messages about a file that is not a result),
// which themselves import only the standard library.
func TestResultIsALeaf(t *testing.T) {
	for _, tc := range []struct {
		dir     string
		allowed []string
	}{
		{".", []string{"github.com/HdrHistogram/hdrhistogram-go", "github.com/authzbench/authzbench/internal/buildinfo",
			"github.com/authzbench/authzbench/internal/outputs", "github.com/authzbench/authzbench/internal/userwords"}},
		{filepath.Join("..", "buildinfo"), nil},
		{filepath.Join("..", "outputs"), nil},
		{filepath.Join("..", "userwords"), nil},
	} {
		for _, path := range importsOf(t, tc.dir) {
			standard := !strings.Contains(strings.Split(path, "/")[0], ".")
			if !standard && !slices.Contains(tc.allowed, path) {
				t.Errorf("%s imports %s: result must stay a leaf (standard library, hdrhistogram, buildinfo, outputs, userwords)", tc.dir, path)
			}
		}
	}
}
