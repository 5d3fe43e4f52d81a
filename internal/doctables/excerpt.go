package doctables

import (
	"fmt"
	"slices"
	"strings"
)

// Excerpt is a table made of some rows and columns of a table a command prints.
type Excerpt struct {
	Line   int        // 1-based line of the excerpt marker
	Args   []string   // the authzbench argument list the rows are cut from
	Header []string   // the excerpt's column names, each one of the command's
	Rows   [][]string // the excerpt's cells, row by row
}

// Command is the excerpt's argument list as a user would type it after "authzbench".
func (e Excerpt) Command() string { return strings.Join(e.Args, " ") }

// Excerpts finds every excerpt marker outside fenced code blocks and the table on the lines
// right after it. A marker with no table under it, or a table whose rows do not have its
// header's number of cells, is an error naming the line.
func Excerpts(text string) ([]Excerpt, error) {
	lines := strings.Split(text, "\n")
	var out []Excerpt
	inFence := false
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimRight(lines[i], "\r")
		if fence := strings.TrimSpace(trimmed); strings.HasPrefix(fence, "```") || strings.HasPrefix(fence, "~~~") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(trimmed, excerptPrefix) {
			continue
		}
		args, err := parseMarkerArgs(trimmed, excerptPrefix, "excerpt")
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		e := Excerpt{Line: i + 1, Args: args}
		if i+2 >= len(lines) || !isTableRow(lines[i+1]) || !isRule(lines[i+2]) {
			return nil, fmt.Errorf("line %d: excerpt marker with no table right under it (a header row, then |---|)", i+1)
		}
		e.Header = cells(lines[i+1])
		for j := i + 3; j < len(lines) && isTableRow(lines[j]); j++ {
			row := cells(lines[j])
			if len(row) != len(e.Header) {
				return nil, fmt.Errorf("line %d: %d cells under a header of %d", j+1, len(row), len(e.Header))
			}
			e.Rows = append(e.Rows, row)
		}
		if len(e.Rows) == 0 {
			return nil, fmt.Errorf("line %d: excerpt with no rows", i+1)
		}
		out = append(out, e)
		i += 2 + len(e.Rows)
	}
	return out, nil
}

// Check compares the excerpt with what its command printed: output must hold a Markdown table
// with every column the excerpt names, and each excerpt row must be one of its rows reduced to
// those columns. Each row that is not is an error naming its line in the page and, when a row
// of the command's agrees on the first two columns (workload and target, say), the cells that
// differ.
func (e Excerpt) Check(output string) []error {
	header, rows := findTable(output, e.Header)
	if header == nil {
		return []error{fmt.Errorf("line %d: authzbench %s prints no table with the columns %s", e.Line, e.Command(), strings.Join(e.Header, ", "))}
	}
	col := make([]int, len(e.Header))
	for i, h := range e.Header {
		col[i] = slices.Index(header, h)
	}
	project := func(row []string) []string {
		out := make([]string, len(col))
		for i, c := range col {
			if c < len(row) {
				out[i] = row[c]
			}
		}
		return out
	}
	var errs []error
	for n, want := range e.Rows {
		line := e.Line + 3 + n
		found := false
		var near []string
		for _, r := range rows {
			got := project(r)
			if slices.Equal(got, want) {
				found = true
				break
			}
			if near == nil && len(want) >= 2 && got[0] == want[0] && got[1] == want[1] {
				near = got
			}
		}
		if found {
			continue
		}
		if near == nil {
			errs = append(errs, fmt.Errorf("line %d: no row of authzbench %s reads %s", line, e.Command(), strings.Join(want, " | ")))
			continue
		}
		var diffs []string
		for i := range want {
			if want[i] != near[i] {
				diffs = append(diffs, fmt.Sprintf("%s: page %q, now %q", e.Header[i], want[i], near[i]))
			}
		}
		errs = append(errs, fmt.Errorf("line %d: authzbench %s no longer prints what the excerpt shows: %s", line, e.Command(), strings.Join(diffs, "; ")))
	}
	return errs
}

// findTable returns the header and rows of the first Markdown table in text whose header has
// every one of columns.
func findTable(text string, columns []string) (header []string, rows [][]string) {
	lines := strings.Split(text, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !isTableRow(lines[i]) || !isRule(lines[i+1]) {
			continue
		}
		h := cells(lines[i])
		all := true
		for _, c := range columns {
			if slices.Index(h, c) < 0 {
				all = false
				break
			}
		}
		var body [][]string
		j := i + 2
		for ; j < len(lines) && isTableRow(lines[j]); j++ {
			body = append(body, cells(lines[j]))
		}
		if all {
			return h, body
		}
		i = j - 1
	}
	return nil, nil
}

func isTableRow(line string) bool {
	t := strings.TrimSpace(line)
	return len(t) > 1 && strings.HasPrefix(t, "|") && strings.HasSuffix(t, "|")
}

func isRule(line string) bool {
	if !isTableRow(line) {
		return false
	}
	for _, c := range cells(line) {
		if strings.Trim(c, ":-") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return true
}

// cells splits a table row at its pipes. The renderers escape no pipe inside a cell, and an
// excerpt has no reason to.
func cells(line string) []string {
	t := strings.TrimSpace(line)
	parts := strings.Split(t[1:len(t)-1], "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}
