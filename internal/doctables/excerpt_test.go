package doctables

import (
	"strings"
	"testing"
)

// printed stands for what report --format markdown prints: notes, then the table.
const printed = `**Findings**

- a finding

| Workload | Target | Load | req/s ± sd | P50 | P99 |
|---|---|---|---|---|---|
| nop | ` + "`opa/inproc`" + ` | 2 workers | 286,726 ± 13,282 | 4.79µs | 49.8µs |
| rbac | ` + "`opa/inproc`" + ` | 2 workers | 70,182 ± 7,013 | 22.0µs | 98.3µs |
| rbac | ` + "`cedar/inproc`" + ` | 2 workers | 281,513 ± 9,553 | 5.41µs | 17.0µs |
`

func TestExcerptRowsMustBeRowsOfTheTable(t *testing.T) {
	page := "text\n<!-- authzbench:excerpt report a.json --format markdown -->\n| Workload | Target | P50 |\n|---|---|---|\n| rbac | `opa/inproc` | 22.0µs |\n| rbac | `cedar/inproc` | 5.41µs |\n\nafter\n"
	excerpts, err := Excerpts(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(excerpts) != 1 || excerpts[0].Line != 2 || excerpts[0].Command() != "report a.json --format markdown" || len(excerpts[0].Rows) != 2 {
		t.Fatalf("Excerpts: got %+v", excerpts)
	}
	if errs := excerpts[0].Check(printed); len(errs) != 0 {
		t.Errorf("a faithful excerpt fails: %v", errs)
	}

	// A figure edited by hand, or a renderer that now prints another, is named with its line.
	drifted := strings.Replace(page, "5.41µs", "5.40µs", 1)
	excerpts, err = Excerpts(drifted)
	if err != nil {
		t.Fatal(err)
	}
	errs := excerpts[0].Check(printed)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "line 6:") || !strings.Contains(errs[0].Error(), `P50: page "5.40µs", now "5.41µs"`) {
		t.Errorf("a drifted cell: got %v, want one error on line 6 naming P50's two values", errs)
	}

	// A row of another table's kind, or a column the command does not print, is refused.
	for name, text := range map[string]string{
		"row not in the table": strings.Replace(page, "| rbac | `cedar/inproc`", "| risk | `cedar/inproc`", 1),
		"column not printed":   strings.Replace(page, "| Workload | Target | P50 |", "| Workload | Target | P90 |", 1),
	} {
		excerpts, err := Excerpts(text)
		if err != nil {
			t.Fatal(err)
		}
		if errs := excerpts[0].Check(printed); len(errs) == 0 {
			t.Errorf("%s: Check found nothing wrong", name)
		}
	}
}

func TestExcerptMarkersAreCheckedLikeBlocks(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no table under it", "<!-- authzbench:excerpt report a.json -->\n\n| a |\n|---|\n| 1 |\n", "line 1: excerpt marker with no table"},
		{"a command that measures", "<!-- authzbench:excerpt run --duration 1s -->\n| a |\n|---|\n| 1 |\n", `runs "run"`},
		{"a row of the wrong width", "<!-- authzbench:excerpt report a.json -->\n| a | b |\n|---|---|\n| 1 |\n", "line 4: 1 cells under a header of 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Excerpts(tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Excerpts: got error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// An excerpt is neither a malformed marker nor a block to rewrite, and its header is not a
	// pasted table.
	text := "<!-- authzbench:excerpt report a.json -->\n| Workload | Target | Load |\n|---|---|---|\n| nop | x | 1 |\n\n| Workload | Target | Load |\n"
	blocks, err := Parse(text)
	if err != nil || len(blocks) != 0 {
		t.Fatalf("Parse of an excerpt: %d blocks, error %v", len(blocks), err)
	}
	unmarked, err := Unmarked(text, "| Workload | Target | Load |")
	if err != nil || len(unmarked) != 1 || unmarked[0] != 6 {
		t.Errorf("Unmarked: got %v (error %v), want [6]: the excerpt's header is checked, the line after it is not", unmarked, err)
	}
}
