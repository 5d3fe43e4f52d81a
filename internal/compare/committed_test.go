package compare

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// docs/ci.md quotes compare's tables of result files committed under docs/results: each must be
// what compare prints from its files, and say what the text says of it.
func TestCommittedComparisonsAsQuoted(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) *result.Document {
		doc, err := result.Read(filepath.Join("..", "..", "docs", "results", name+"-2026-11-23.json"))
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	for _, tc := range []struct {
		base, new string
		o         Options
		called    []Figure // the figures called, the others ~
		passes    bool     // under p99>+10%,throughput<-5%
		quoted    bool     // its row is in the page
	}{
		{"ci-aa-1", "ci-aa-2", Options{}, nil, true, false},
		{"ci-ab-aa-main", "ci-ab-aa-pr", Options{}, nil, true, false},
		{"ci-aa-r2-1", "ci-aa-r2-2", Options{}, nil, true, false},
		{"ci-ab-aa-r2-main", "ci-ab-aa-r2-pr", Options{}, nil, true, false},
		{"ci-aa-r3-1", "ci-aa-r3-2", Options{}, []Figure{P90, P99}, false, true},
		{"ci-ab-aa-r3-main", "ci-ab-aa-r3-pr", Options{}, nil, true, true},
		{"ci-ab-rbac", "ci-ab-api", Options{IgnoreWorkload: true}, []Figure{Throughput, P50, P90, Mean}, false, true},
	} {
		t.Run(tc.base+"/"+tc.new, func(t *testing.T) {
			res := Compare(tc.base, read(tc.base), tc.new, read(tc.new), tc.o)
			if len(res.Rows) != 1 || res.Rows[0].Problem != "" {
				t.Fatalf("rows %+v; want one comparable row", res.Rows)
			}
			for _, c := range res.Rows[0].Cells {
				want := false
				for _, f := range tc.called {
					want = want || f == c.Figure
				}
				if c.Significant != want {
					t.Errorf("%s: called %t (p=%.3f), want %t", c.Figure, c.Significant, c.P, want)
				}
			}
			g, err := ParseGate("p99>+10%,throughput<-5%")
			if err != nil {
				t.Fatal(err)
			}
			v := g.Check(res)
			if v.Passed != tc.passes {
				t.Errorf("gate passed %t, want %t: %+v", v.Passed, tc.passes, v.Failures)
			}
			var md bytes.Buffer
			if err := NewReport(res, g, &v).Write(&md, Markdown); err != nil {
				t.Fatal(err)
			}
			var row string
			for _, line := range strings.Split(md.String(), "\n") {
				if strings.HasPrefix(line, "| rbac") {
					row = line
				}
			}
			if row == "" || (tc.quoted && !strings.Contains(string(page), row+"\n")) {
				t.Errorf("docs/ci.md does not quote the row compare prints:\n%s", row)
			}
		})
	}
}
