package cedarengine

import "testing"

// The incremental counter places every offset where lineColumn, counting from the start, does.
func TestLineCounterAgreesWithLineColumn(t *testing.T) {
	text := []byte("[\n  {\"a\": 1},\n\n  {\"b\": 2}, {\"c\": 3}\n]")
	c := lineCounter{text: text, line: 1, lastNewline: -1}
	for off := int64(0); off <= int64(len(text)); off += 1 + off%3 {
		line, col := c.at(off)
		wl, wc := lineColumn(text, off)
		if line != wl || col != wc {
			t.Errorf("offset %d: %d:%d; lineColumn says %d:%d", off, line, col, wl, wc)
		}
	}
}
