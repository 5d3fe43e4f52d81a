package httpload

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// The raw path. A request on a plain TCP connection through net.Conn costs three system calls
// and a wait: a write, a read that finds nothing yet (the server has not answered a request
// sent a microsecond ago) and, once the poller says the answer is there, the read that takes
// it, each wrapped in the scheduler's bookkeeping for calls that may block. The raw path writes
// the request inside the runtime poller's read (syscall.RawConn.Read), so the wait is armed
// before the write and the read that cannot find anything is skipped: a write, the wait, a
// read, the calls themselves raw, as none of them blocks.
//
// Writing first inside the poller's read is what makes skipping that read safe: the poller
// forgets an earlier readiness when a read begins, so a request written before the read began
// could be answered before it, and the answer's readiness would be lost; written after, its
// answer's readiness is the one waited for.

// connReader is what the response parser's buffer reads from: the raw path or net.Conn.
type connReader struct{ c *Conn }

func (r *connReader) Read(p []byte) (int, error) {
	if r.c.rawIO {
		return r.c.rawRead(p)
	}
	return r.c.c.Read(p)
}

// sendRaw sends req and reads its answer by the raw path: the write happens in the first read
// of the answer. Failures are those of send's net.Conn path, in the same words and classes.
func (c *Conn) sendRaw(req []byte, reused bool) (int, error) {
	c.pending, c.sent, c.unsent, c.writeErr = req, 0, nil, nil
	status, keep, err := c.readResponse()
	c.pending = nil
	if c.writeErr != nil {
		return 0, c.writeFailed(c.sent, c.writeErr, reused)
	}
	return c.answered(status, keep, err, reused)
}

// rawRead fills p from the socket, first writing the pending request if there is one. It
// returns what a net.Conn read would: the bytes, io.EOF at the end of the stream, or a
// *net.OpError.
func (c *Conn) rawRead(p []byte) (int, error) {
	if c.rawStep == nil {
		c.rawStep = c.step
	}
	c.into, c.got, c.readErr = p, 0, nil
	defer func() { c.into = nil }()
	for {
		if err := c.raw.Read(c.rawStep); err != nil { // the deadline passed, or the socket closed
			var op *net.OpError
			if errors.As(err, &op) {
				err = op.Err
			}
			if c.pending != nil || c.unsent != nil {
				c.writeErr = c.opError("write", err)
				return 0, c.writeErr
			}
			return 0, c.opError("read", err)
		}
		if c.writeErr != nil {
			return 0, c.writeErr
		}
		if c.unsent == nil {
			return c.got, c.readErr
		}
		// The socket took part of the request only (a body larger than its buffer): the rest
		// goes through net.Conn, which waits for room (under the deadline send armed for both
		// directions), then the read starts again, reading first.
		n, err := c.c.Write(c.unsent)
		c.sent += n
		c.unsent = nil
		if err != nil {
			c.writeErr = err
			return 0, err
		}
	}
}

// step is the raw callback: it writes the pending request, then asks to wait for the answer
// (false) without looking; once woken it reads. It runs inside the poller's read, with the
// wait for readability armed.
func (c *Conn) step(fd uintptr) bool {
	if req := c.pending; req != nil {
		c.pending = nil
		n, errno := rawSend(fd, req)
		c.sent = n
		switch {
		case errno == syscall.EAGAIN || errno == 0 && n < len(req):
			c.unsent = req[n:]
			return true
		case errno != 0:
			c.writeErr = c.opError("write", os.NewSyscallError("write", errno))
			return true
		}
		return false // nothing can be there yet: wait for the answer
	}
	for {
		n, errno := rawRecv(fd, c.into)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return false
		case errno != 0:
			c.readErr = c.opError("read", os.NewSyscallError("read", errno))
		case n == 0:
			c.readErr = io.EOF
		}
		c.got = n
		return true
	}
}

// opError wraps err as net.Conn's Read and Write do, so messages read alike on both paths.
func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.c.LocalAddr(), Addr: c.c.RemoteAddr(), Err: err}
}
