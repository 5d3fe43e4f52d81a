package engine_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The seam holds only while nothing outside an engine's package knows the engine: a package
// that imports one, or code that compares an engine's name, is where a new engine would have to
// be written in a second time. This test reads the module's sources and fails on either, so
// that an engine stays its own package and one line in internal/engine/all.

const module = "github.com/authzbench/authzbench"

// seamExceptions are places known to break the rule, each to be moved into its engine's
// package; the list only shrinks (an entry that no longer breaks it fails the test too).
var seamExceptions = []string{}

func TestNoPackageOutsideAnEngineKnowsIt(t *testing.T) {
	root := moduleRoot(t)
	got := seamBreaches(t, root)
	for _, b := range got {
		if !slices.Contains(seamExceptions, b) {
			t.Errorf("%s", b)
		}
	}
	for _, e := range seamExceptions {
		if !slices.Contains(got, e) {
			t.Errorf("%s no longer breaks the seam: remove it from seamExceptions", e)
		}
	}
	if t.Failed() {
		t.Log("an engine's code belongs in internal/engine/<name>, reached through the registry (internal/engine); " +
			"internal/engine/all is the one list that imports every engine")
	}
}

// The test finds what it must: a planted import and a planted comparison are both reported.
func TestSeamBreachesAreFound(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module "+module+"\n")
	write("internal/engine/opa/opa.go", "package opa\n")
	write("internal/engine/cedar/cedar.go", "package cedar\nimport _ \""+module+"/internal/engine/opa\"\n")
	write("internal/engine/all/all.go", "package all\nimport _ \""+module+"/internal/engine/opa/sub\"\n")
	write("cmd/authzbench-opa/main.go", "package main\nimport _ \""+module+"/internal/engine/opa/sub\"\n")
	write("cmd/authzbench-cedar/main.go", "package main\nimport _ \""+module+"/internal/engine/opa/sub\"\n")
	write("internal/kinds/k.go", "package kinds\nimport _ \""+module+"/internal/engine/opa/sub\"\n"+
		"func f(s string) bool { switch s { case \"cedar/server\": }; m := map[string]int{}; _ = m[\"opa\"]; return s == \"cedar\" }\n")
	write("internal/kinds/k_test.go", "package kinds\nimport _ \""+module+"/internal/engine/cedar\"\nvar _ = \"x\" == \"opa\"\n")
	want := []string{
		"cmd/authzbench-cedar/main.go imports internal/engine/opa/sub",
		"internal/engine/cedar/cedar.go imports internal/engine/opa",
		"internal/kinds/k.go compares the engine name \"cedar\"",
		"internal/kinds/k.go compares the engine name \"cedar/server\"",
		"internal/kinds/k.go compares the engine name \"opa\"",
		"internal/kinds/k.go imports internal/engine/opa/sub",
		"internal/kinds/k_test.go imports internal/engine/cedar",
	}
	if got := seamBreaches(t, root); !slices.Equal(got, want) {
		t.Errorf("found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// seamBreaches lists, sorted, every import of an engine's package from outside it (tests
// included) and every comparison of an engine's name outside it (tests excluded: a test may
// name what it runs), in the module at root. The engines are the directories of
// internal/engine but all.
func seamBreaches(t *testing.T, root string) []string {
	t.Helper()
	dirs, err := os.ReadDir(filepath.Join(root, "internal", "engine"))
	if err != nil {
		t.Fatal(err)
	}
	var engines []string
	for _, d := range dirs {
		if d.IsDir() && d.Name() != "all" && d.Name() != "testdata" {
			engines = append(engines, d.Name())
		}
	}
	// ownerOf is the engine whose package (or subpackage) rel is in, or whose program alone it
	// is (cmd/authzbench-spicedb: SpiceDB's server, built apart); "" for none.
	ownerOf := func(rel string) string {
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) >= 3 && parts[0] == "internal" && parts[1] == "engine" && slices.Contains(engines, parts[2]) {
			return parts[2]
		}
		if len(parts) >= 2 && parts[0] == "cmd" {
			if e, ok := strings.CutPrefix(parts[1], "authzbench-"); ok && slices.Contains(engines, e) {
				return e
			}
		}
		return ""
	}
	isName := func(s string) bool {
		for _, e := range engines {
			if s == e || strings.HasPrefix(s, e+"/") {
				return true
			}
		}
		return false
	}
	var out []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		owner := ownerOf(filepath.Dir(rel))
		inAll := strings.HasPrefix(rel, "internal/engine/all/")
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			inside, ok := strings.CutPrefix(path, module+"/")
			if !ok {
				continue
			}
			if e := ownerOf(inside); e != "" && e != owner && !inAll {
				out = append(out, fmt.Sprintf("%s imports %s", rel, inside))
			}
		}
		if owner != "" || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		named := func(x ast.Expr) {
			if b, ok := x.(*ast.BasicLit); ok && b.Kind == token.STRING {
				if s, _ := strconv.Unquote(b.Value); isName(s) {
					out = append(out, fmt.Sprintf("%s compares the engine name %q", rel, s))
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BinaryExpr:
				if x.Op == token.EQL || x.Op == token.NEQ {
					named(x.X)
					named(x.Y)
				}
			case *ast.CaseClause:
				for _, e := range x.List {
					named(e)
				}
			case *ast.IndexExpr:
				named(x.Index)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// moduleRoot is the directory of the module's go.mod, above this package's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
