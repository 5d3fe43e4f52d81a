// Package doctables keeps the published tables of figures in Markdown tied to the result files
// they come from. A table sits between two HTML comments (invisible when the page is rendered):
//
//	<!-- authzbench:begin report docs/results/quickstart-2026-11-23.json --format markdown -->
//	...exactly what that command prints...
//	<!-- authzbench:end -->
//
// The begin marker holds an authzbench argument list, report or compare with their flags, so
// anyone can run it by hand and a test can run it in-process and compare. The package finds
// the blocks and splices in new text; it does not run anything itself.
//
// A command whose output is not Markdown (report's terminal table, CSV) is shown in a fenced
// code block: when a block's text is one fenced code block, the command's output is what lies
// inside the fence, and the fence is kept.
//
// Where the whole table would not fit (the README's first screen), a page shows an excerpt: a
// few of its rows and columns, under a marker naming the command it is cut from:
//
//	<!-- authzbench:excerpt report docs/results/quickstart-2026-11-28.json --format markdown -->
//	| Workload | Target | P50 |
//	|---|---|---|
//	| rbac | `opa/inproc` | 22.0µs |
//
// Each row must be a row of that command's table reduced to the excerpt's columns, cell for
// cell (Excerpt.Check), so an excerpt drifts from its file no more than a whole table can.
package doctables

import (
	"fmt"
	"strings"
)

const (
	beginPrefix   = "<!-- authzbench:begin "
	excerptPrefix = "<!-- authzbench:excerpt "
	endLine       = "<!-- authzbench:end -->"
	commentEnd    = " -->"
)

// commands are the ones a block may run: they only read result files and print. Anything that
// measures or writes a file has no place in a rendering of the docs.
var commands = map[string]bool{"report": true, "compare": true}

// flagsThatWrite are refused inside a marker: rendering a page must never write a file.
var flagsThatWrite = map[string]bool{"--prometheus": true, "-o": true, "--html": true, "--out": true}

// Block is one marked table.
type Block struct {
	Line int      // 1-based line of the begin marker in its file
	Args []string // the authzbench argument list
	Body string   // the text between the markers, each line ending in "\n"
	// Output is what the command printed, as the page shows it: Body, or inside its fence when
	// Body is one fenced code block.
	Output string
	// fence is the opening fence line of a fenced Body ("```text\n"), empty when not fenced.
	fence string
	// bodyStart and bodyEnd delimit Body in the file's text.
	bodyStart, bodyEnd int
}

// OutputLine is the 1-based line of the page where the command's output begins.
func (b Block) OutputLine() int {
	if b.fence != "" {
		return b.Line + 2
	}
	return b.Line + 1
}

// Command is the block's argument list as a user would type it after "authzbench".
func (b Block) Command() string { return strings.Join(b.Args, " ") }

// Parse finds every marked block of text, outside fenced code blocks. A begin without its end, an end without its begin, a
// begin inside a block, or a command that is not a plain report or compare is an error naming
// the line, so a broken marker is never silently skipped.
func Parse(text string) ([]Block, error) {
	var blocks []Block
	var open *Block
	offset := 0
	inFence := false
	for i, line := range strings.SplitAfter(text, "\n") {
		lineNo := i + 1
		next := offset + len(line)
		trimmed := strings.TrimRight(line, "\r\n")
		// A marker inside a fenced code block is an example shown to the reader, not a table.
		if fence := strings.TrimSpace(trimmed); strings.HasPrefix(fence, "```") || strings.HasPrefix(fence, "~~~") {
			inFence = !inFence
		}
		switch {
		case inFence:
		case strings.HasPrefix(trimmed, excerptPrefix):
			// An excerpt is no block: nothing is rewritten, Excerpts reads it.
			if open != nil {
				return nil, fmt.Errorf("line %d: an excerpt marker inside the block opened on line %d", lineNo, open.Line)
			}
		case strings.HasPrefix(strings.TrimSpace(trimmed), "<!-- authzbench:") && !strings.HasPrefix(trimmed, beginPrefix) && trimmed != endLine:
			return nil, fmt.Errorf("line %d: malformed marker %q: a marker is %q, %q or %q on a line of its own", lineNo, trimmed, beginPrefix+"ARGS"+commentEnd, endLine, excerptPrefix+"ARGS"+commentEnd)
		case strings.HasPrefix(trimmed, beginPrefix):
			if open != nil {
				return nil, fmt.Errorf("line %d: a begin marker inside the block opened on line %d", lineNo, open.Line)
			}
			args, err := parseArgs(trimmed)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", lineNo, err)
			}
			open = &Block{Line: lineNo, Args: args, bodyStart: next}
		case trimmed == endLine:
			if open == nil {
				return nil, fmt.Errorf("line %d: an end marker with no begin marker before it", lineNo)
			}
			open.bodyEnd = offset
			open.Body = text[open.bodyStart:open.bodyEnd]
			open.fence, open.Output = splitFence(open.Body)
			blocks = append(blocks, *open)
			open = nil
		}
		offset = next
	}
	if open != nil {
		return nil, fmt.Errorf("line %d: begin marker with no %q after it", open.Line, endLine)
	}
	return blocks, nil
}

// parseArgs reads the argument list of a begin marker. Arguments are separated by spaces and
// cannot be quoted, so what the marker shows is exactly what runs.
func parseArgs(line string) ([]string, error) {
	return parseMarkerArgs(line, beginPrefix, "begin")
}

// parseMarkerArgs reads the argument list of a marker that starts with prefix, a begin or an
// excerpt marker, named kind in errors.
func parseMarkerArgs(line, prefix, kind string) ([]string, error) {
	if !strings.HasSuffix(line, commentEnd) {
		return nil, fmt.Errorf("%s marker does not end with %q on its line", kind, strings.TrimSpace(commentEnd))
	}
	args := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(line, prefix), commentEnd))
	if len(args) == 0 {
		return nil, fmt.Errorf("%s marker names no command: want report or compare and its arguments", kind)
	}
	if !commands[args[0]] {
		return nil, fmt.Errorf("%s marker runs %q: only report and compare, which read result files and print, render the docs", kind, args[0])
	}
	for _, a := range args {
		if strings.ContainsAny(a, `'"`+"`") {
			return nil, fmt.Errorf("%s marker argument %s is quoted: arguments are split at spaces and cannot be quoted", kind, a)
		}
		name, _, _ := strings.Cut(a, "=")
		if flagsThatWrite[name] {
			return nil, fmt.Errorf("%s marker uses %s, which writes a file: rendering the docs writes nothing", kind, name)
		}
	}
	return args, nil
}

// Rewrite returns text with each block's output replaced by what render gives for it, inside
// the block's fence if it has one. A rendering that does not end in a newline gets one, so the
// end marker (or the closing fence) stays on a line of its own.
func Rewrite(text string, render func(Block) (string, error)) (string, error) {
	blocks, err := Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	last := 0
	for _, blk := range blocks {
		body, err := render(blk)
		if err != nil {
			return "", fmt.Errorf("line %d: authzbench %s: %w", blk.Line, blk.Command(), err)
		}
		if body != "" && !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		b.WriteString(text[last:blk.bodyStart])
		if blk.fence != "" {
			body = blk.fence + body + closingFence(blk.fence)
		}
		b.WriteString(body)
		last = blk.bodyEnd
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// Unmarked returns the 1-based numbers of the lines outside every block and excerpt that begin
// with one of prefixes: a renderer's table header pasted by hand, which no test would check.
func Unmarked(text string, prefixes ...string) ([]int, error) {
	blocks, err := Parse(text)
	if err != nil {
		return nil, err
	}
	excerpts, err := Excerpts(text)
	if err != nil {
		return nil, err
	}
	var lines []int
	offset := 0
	for i, line := range strings.SplitAfter(text, "\n") {
		inside := false
		for _, blk := range blocks {
			if offset >= blk.bodyStart && offset < blk.bodyEnd {
				inside = true
				break
			}
		}
		for _, e := range excerpts {
			if i+1 > e.Line && i+1 <= e.Line+2+len(e.Rows) {
				inside = true
			}
		}
		if !inside {
			for _, p := range prefixes {
				if strings.HasPrefix(line, p) {
					lines = append(lines, i+1)
					break
				}
			}
		}
		offset += len(line)
	}
	return lines, nil
}

// splitFence returns the opening fence line and the text inside it when body is exactly one
// fenced code block, and "" and body otherwise.
func splitFence(body string) (fence, inside string) {
	first, rest, ok := strings.Cut(body, "\n")
	trimmed := strings.TrimSpace(first)
	if !ok || !(strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
		return "", body
	}
	fence = first + "\n"
	closing := closingFence(fence)
	if !strings.HasSuffix(rest, closing) || strings.Contains(strings.TrimSuffix(rest, closing), "\n"+strings.TrimSpace(closing)) {
		return "", body
	}
	return fence, strings.TrimSuffix(rest, closing)
}

// closingFence is the line that closes a code block opened by fence: its run of backticks or
// tildes, without the info string.
func closingFence(fence string) string {
	trimmed := strings.TrimSpace(fence)
	n := len(trimmed) - len(strings.TrimLeft(trimmed, trimmed[:1]))
	return trimmed[:n] + "\n"
}
