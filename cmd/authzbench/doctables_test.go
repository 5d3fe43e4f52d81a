package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/doctables"
)

// updateDocs regenerates every marked table in README.md and docs/ from its result file:
//
//	go test ./cmd/authzbench -run TestDocTables -update
var updateDocs = flag.Bool("update", false, "rewrite the marked tables in README.md and docs/ with what their commands print now")

// rendererHeaders begin the tables report and compare print (Markdown, the terminal, CSV): one
// outside a marker was pasted by hand, and nothing would catch it drifting from its file.
var rendererHeaders = []string{"| Workload | Target | Load |", "Workload  Target  ", "workload,target,"}

// TestDocTables re-renders every marked table of README.md and docs/ through the command tree
// and fails on any difference, so a renderer change that alters a published figure shows in
// the commit that makes it.
func TestDocTables(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// The markers name files from the repository root, as a reader would type them there.
	t.Chdir(root)
	pages := []string{"README.md"}
	err = filepath.WalkDir("docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		blocks, err := doctables.Parse(text)
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		total += len(blocks)
		unmarked, err := doctables.Unmarked(text, rendererHeaders...)
		if err != nil {
			t.Fatal(err)
		}
		checkResultLinks(t, page, text)
		for _, line := range unmarked {
			t.Errorf("%s:%d: a table as report or compare prints it, outside any authzbench:begin/end marker: mark it with the command that renders it", page, line)
		}
		updated, err := doctables.Rewrite(text, func(b doctables.Block) (string, error) {
			return renderDocBlock(b)
		})
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		if *updateDocs {
			if updated != text {
				if err := os.WriteFile(page, []byte(updated), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: rewrote its marked tables", page)
			}
			continue
		}
		for _, b := range blocks {
			now, err := renderDocBlock(b)
			if err != nil {
				continue // reported by Rewrite above
			}
			if now != b.Output {
				t.Errorf("%s:%d: authzbench %s no longer prints what the page shows:\n%s\nrewrite with: go test ./cmd/authzbench -run TestDocTables -update (and check the prose around it)",
					page, b.Line, b.Command(), firstDifference(b.OutputLine(), b.Output, now))
			}
		}
	}
	if total == 0 {
		t.Fatal("no marked table in README.md or docs/: the markers were not found")
	}
}

// renderDocBlock runs a block's command in-process and returns what it printed. A command that
// fails renders nothing a page could show, except a compare gate that failed: exit 1 is then
// its verdict, printed at the top of what the page shows.
func renderDocBlock(b doctables.Block) (string, error) {
	var out, errb bytes.Buffer
	code := execute(b.Args, &out, &errb)
	if code == exitOK || code == exitFailed && isGate(b.Args) {
		return out.String(), nil
	}
	return "", fmt.Errorf("exit %d: %s", code, strings.TrimSpace(errb.String()))
}

// isGate says whether args run compare as a regression gate.
func isGate(args []string) bool {
	if len(args) == 0 || args[0] != "compare" {
		return false
	}
	for _, a := range args {
		if a == "--fail-on" || strings.HasPrefix(a, "--fail-on=") {
			return true
		}
	}
	return false
}

// firstDifference shows the first line where the page and the renderer part, numbered as in
// the page (the output starts on line first).
func firstDifference(first int, page, now string) string {
	pl, nl := strings.Split(page, "\n"), strings.Split(now, "\n")
	for i := 0; i < len(pl) || i < len(nl); i++ {
		var p, n string
		if i < len(pl) {
			p = pl[i]
		}
		if i < len(nl) {
			n = nl[i]
		}
		if p != n || i >= len(pl) || i >= len(nl) {
			return fmt.Sprintf("line %d\n  page: %s\n  now:  %s", first+i, p, n)
		}
	}
	return "(no line differs)"
}

// resultLink finds the target of a Markdown link, up to an anchor or the closing parenthesis.
var resultLink = regexp.MustCompile(`\]\(([^)\s#]+)`)

// checkResultLinks fails on a link into docs/results/ whose file is not there: a figure that
// cites a file must cite one a reader can open.
func checkResultLinks(t *testing.T, page, text string) {
	t.Helper()
	results := filepath.Join("docs", "results") + string(filepath.Separator)
	for _, m := range resultLink.FindAllStringSubmatchIndex(text, -1) {
		link := text[m[2]:m[3]]
		target := filepath.Join(filepath.Dir(page), link)
		if !strings.HasPrefix(target, results) {
			continue
		}
		if _, err := os.Stat(target); err != nil {
			t.Errorf("%s:%d: links %s, which is not in docs/results/", page, strings.Count(text[:m[0]], "\n")+1, link)
		}
	}
}
