// Package textwrap fills words into lines for the terminal: the help and the reports' notes
// wrap the same way, so a note reads alike wherever it is printed.
package textwrap

import (
	"strings"
	"unicode/utf8"
)

// Fill puts text's words on lines of at most width runes, each line ending in a newline and
// every line after the first starting with indent. A word longer than width stands alone on its
// line rather than being cut. Text without words fills no line.
func Fill(text string, width int, indent string) string {
	var b strings.Builder
	line, n := "", 0
	for _, word := range strings.Fields(text) {
		k := utf8.RuneCountInString(word)
		switch {
		case n == 0:
			line, n = word, k
		case n+1+k <= width:
			line, n = line+" "+word, n+1+k
		default:
			b.WriteString(line + "\n")
			line, n = indent+word, utf8.RuneCountInString(indent)+k
		}
	}
	if n > 0 {
		b.WriteString(line + "\n")
	}
	return b.String()
}
