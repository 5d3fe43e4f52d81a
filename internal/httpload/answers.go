package httpload

import (
	"bufio"
	"errors"
	"io"
)

// Answers parses HTTP/1.1 answers from bytes that arrive in pieces, for a driver that reads its
// sockets itself (load's event loop) and so cannot block in the middle of an answer. It parses
// with Conn's own reader (readResponse), so an answer means the same on both paths: it tries
// once the bytes received so far, and when they run out before the answer ends, waits for
// more and tries again from the answer's first byte. Answers are small and come whole nearly
// always; a parse is repeated only for the rare one that came in pieces.
type Answers struct {
	parser Conn // its reader over src, and the body it reads into
	src    memSource
	buf    []byte // bytes received and not yet taken by an answer
	ended  bool   // the peer ended the stream after buf
}

// memSource is the parser's source: what Answers received, then "no more yet" (dry) or the
// end of the stream.
type memSource struct {
	a   *Answers
	pos int
	dry bool
}

// errNoMoreYet stops a parse that ran out of received bytes; the answer is not complete.
var errNoMoreYet = errors.New("no more bytes received yet")

func (m *memSource) Read(p []byte) (int, error) {
	if m.pos == len(m.a.buf) {
		if m.a.ended {
			return 0, io.EOF
		}
		m.dry = true
		return 0, errNoMoreYet
	}
	n := copy(p, m.a.buf[m.pos:])
	m.pos += n
	return n, nil
}

// Received appends bytes read from the connection.
func (a *Answers) Received(b []byte) { a.buf = append(a.buf, b...) }

// Spare is room at the end of the buffer to read into directly, at least n bytes; Grow says
// how many were read into it.
func (a *Answers) Spare(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		grown := make([]byte, len(a.buf), 2*cap(a.buf)+n)
		copy(grown, a.buf)
		a.buf = grown
	}
	return a.buf[len(a.buf):cap(a.buf)]
}

// Grow counts n bytes read into Spare as received.
func (a *Answers) Grow(n int) { a.buf = a.buf[:len(a.buf)+n] }

// End says the peer ended the stream: an answer whose body runs to the end is complete.
func (a *Answers) End() { a.ended = true }

// Ended says the peer ended the stream (End).
func (a *Answers) Ended() bool { return a.ended }

// Pending is how many received bytes no answer has taken: 0 before any byte of the next one.
func (a *Answers) Pending() int { return len(a.buf) }

// Reset forgets everything received, for a new connection.
func (a *Answers) Reset() { a.buf, a.ended = a.buf[:0], false }

// Next parses the next answer. complete is false while its bytes have not all arrived; then
// nothing is taken. Once complete, the answer's bytes are taken, and keep says whether the
// connection may carry another request. The body is valid until the next call.
func (a *Answers) Next() (status int, body []byte, keep, complete bool, err error) {
	if a.parser.br == nil {
		a.src.a = a
		a.parser.br = bufio.NewReaderSize(&a.src, 16<<10)
	}
	a.src.pos, a.src.dry = 0, false
	a.parser.br.Reset(&a.src)
	status, keep, err = a.parser.readResponse()
	if err != nil && a.src.dry {
		return 0, nil, false, false, nil
	}
	if err != nil {
		var none noAnswerError
		if errors.As(err, &none) {
			err = none.err
		}
		return 0, nil, false, true, err
	}
	used := a.src.pos - a.parser.br.Buffered()
	a.buf = a.buf[:copy(a.buf, a.buf[used:])]
	return status, a.parser.body, keep, true, nil
}
