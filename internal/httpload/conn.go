// Package httpload is a minimal HTTP/1.1 client for load generation: one keep-alive connection
// per worker, requests encoded once before the clock starts, responses read into a reused
// buffer.
//
// It exists because a general-purpose client spends CPU on things a load generator does not
// need (header maps, pools, redirects, per-request objects), and on a small machine every
// microsecond the generator spends is taken from the server it measures. It is not a general
// client: no redirects, no proxies, no HTTP/2, and one kind of retry only: a request that found
// its kept-alive connection closed by the server before any answer is resent once on a new one,
// as servers close idle connections when they like.
package httpload

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// Endpoint is where requests go.
type Endpoint struct {
	Addr      string      // host:port
	Host      string      // Host header
	TLS       *tls.Config // nil for plain HTTP
	Timeout   time.Duration
	KeepAlive bool // false: a new connection per request (and Connection: close)
}

// ParseURL returns the endpoint and request path of an http or https URL.
func ParseURL(raw string) (Endpoint, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Endpoint{}, "", fmt.Errorf("url %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return Endpoint{}, "", fmt.Errorf("url %q: want http://host:port/path or https://...", raw)
	}
	e := Endpoint{Host: u.Host, Addr: u.Host, KeepAlive: true}
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		e.Addr = net.JoinHostPort(u.Hostname(), port)
	}
	if u.Scheme == "https" {
		e.TLS = &tls.Config{ServerName: u.Hostname()}
	}
	path := u.RequestURI()
	return e, path, nil
}

// Header is one request header.
type Header struct{ Name, Value string }

// EncodeRequest returns the bytes of a complete request, written with one system call per send.
func EncodeRequest(e Endpoint, method, path string, headers []Header, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, e.Host)
	for _, h := range headers {
		fmt.Fprintf(&b, "%s: %s\r\n", h.Name, h.Value)
	}
	if !e.KeepAlive {
		b.WriteString("Connection: close\r\n")
	}
	if body != nil || method == "POST" || method == "PUT" || method == "PATCH" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// Conn is one worker's connection. It redials when the server closed the previous one or after
// an error, and is not safe for concurrent use.
type Conn struct {
	e    Endpoint
	c    net.Conn
	raw  syscall.RawConn // the socket under c, to notice a close the server sent while c was idle
	br   *bufio.Reader
	body []byte

	// idle holds the result of the last look at an idle socket; peek is that look, made once
	// per connection so that looking allocates nothing.
	idle   idleState
	peek   func(fd uintptr) bool
	noPeek bool // benchmarks only: reuse without looking, to measure what looking costs
	// lookAfter is lookAfterIdle, but for tests of the look that cannot wait that long.
	lookAfter time.Duration
	lastSend  time.Time
	// deadline is the socket's read and write deadline, set when it was last armed (send).
	deadline time.Time
	// closesSeen counts the reconnects whose close the look found before sending (tests).
	closesSeen int64
	failures   int // connects that failed in a row, for the backoff

	// The raw path (Linux, plain TCP; rawRead): rawIO says the connection takes it; noRawIO
	// keeps a connection off it (benchmarks only, to measure what it saves). pending is the
	// request the next read writes first, sent the bytes of it written so far, writeErr why
	// writing it failed, unsent what is left of it when the socket took only part.
	rawIO, noRawIO bool
	pending        []byte
	sent           int
	unsent         []byte
	writeErr       error
	// into, got and readErr carry one read through the raw callback, made once per
	// connection so that reading allocates nothing.
	into    []byte
	got     int
	readErr error
	rawStep func(fd uintptr) bool
	source  connReader

	// Dials counts connections opened. ConnectTime is the TCP connect of the last one and
	// TLSTime its TLS handshake (0 in clear): two parts of the request time that Do reports,
	// set only by a request that opened a connection.
	Dials       int64
	ConnectTime time.Duration
	TLSTime     time.Duration
	// Reconnects counts requests that found their kept-alive connection closed by the server
	// (seen before sending, or by a failure before any byte of the answer) and went out on a
	// new connection instead; Reconnected says whether the last Do was one.
	Reconnects  int64
	Reconnected bool
}

// NewConn returns a connection to e; it dials on first use.
func NewConn(e Endpoint) *Conn { return &Conn{e: e, lookAfter: lookAfterIdle} }

// Endpoint is where the connection sends its requests.
func (c *Conn) Endpoint() Endpoint { return c.e }

var (
	// ErrTimeout is returned (wrapped, with the cause) when no complete response arrived within
	// the endpoint's timeout.
	ErrTimeout = errors.New("timeout")
	// ErrTLSHandshake is returned (wrapped, with the cause) when the server could not be
	// trusted or refused this client in the TLS handshake: an unknown CA, a missing or refused
	// client certificate. Over TLS 1.3 a server refuses a client certificate after the client
	// has finished its part, so that refusal arrives on the first read, and is this error too.
	ErrTLSHandshake = errors.New("tls handshake")
	// ErrNotSent is returned (wrapped) when the timeout passed before the request could be
	// sent at all: before the connect was tried, or before a byte was written. Such a request
	// never reached the server and is not a measurement of it.
	ErrNotSent = errors.New("not sent")
)

// lookAfterIdle is how long a connection must have gone unused before it is looked at. Servers
// close idle connections after seconds (Go's and Envoy's idle timeouts, nginx's keep-alive
// timeout), so a look at a connection idle for less finds nothing, and costs a system call a
// request: an open loop spreading 5,000 req/s over 64 connections reuses each every 13 ms, and
// looked every time when this was 1 ms. A close that comes sooner is found by the request that
// meets it, which is resent once (Do), so nothing is lost by not looking.
const lookAfterIdle = 200 * time.Millisecond

// Backoff bounds between connects after a failed one, per connection: a dead server is asked
// again at a pace that cannot flood the machine with sockets, and soon after it comes back.
const (
	firstBackoff = 10 * time.Millisecond
	maxBackoff   = time.Second
)

// Do sends a request encoded by EncodeRequest and reads the response. The body it returns is
// valid until the next call.
func (c *Conn) Do(ctx context.Context, req []byte) (status int, body []byte, err error) {
	c.ConnectTime, c.TLSTime = 0, 0
	c.Reconnected = false
	now := time.Now()
	// A connection used again at once is not looked at: a close the server sent with its
	// answer is usually there already, but when it is not, the request finds it and is resent
	// below; the look pays off on a connection that sat idle (an idle timeout), and costs a
	// system call a request that a hot keep-alive loop does not pay.
	if c.c != nil && !c.noPeek && now.Sub(c.lastSend) >= c.lookAfter && c.closedByPeer() {
		c.closesSeen++
		c.Close()
		c.Reconnects++
		c.Reconnected = true
	}
	status, err = c.send(ctx, req, now)
	var stale staleError
	if errors.As(err, &stale) {
		// The server had closed the kept-alive connection (a limit on requests per connection,
		// an idle timeout) without saying so; nothing of an answer came, so the request goes
		// out once more on a new connection, as a browser or net/http would.
		c.Reconnects++
		c.Reconnected = true
		status, err = c.send(ctx, req, time.Now())
		if errors.As(err, &stale) {
			err = stale.err
		}
	}
	if err != nil {
		return 0, nil, err
	}
	return status, c.body, nil
}

// send makes one attempt: connect if need be, write, read the response.
func (c *Conn) send(ctx context.Context, req []byte, now time.Time) (int, error) {
	reused := c.c != nil
	if !reused {
		if err := c.dial(ctx); err != nil {
			return 0, err
		}
		now = time.Now() // the connect had its own timeout; the request's starts now
	}
	// The raw path (rawio.go) writes inside the answer's first read; not when bytes nobody
	// asked for wait in the buffer, as then that read would not happen.
	raw := c.rawIO && c.br.Buffered() == 0
	if c.e.Timeout > 0 && c.deadline.Sub(now) < c.e.Timeout {
		// The socket's deadline is a backstop, re-armed only when it would fall before this
		// request's timeout: moving a timer on every request cost a few per cent of the
		// generator's CPU. It gives up between Timeout and 1.25 Timeout after the send; the
		// exact limit is the drivers' (load.EnforceTimeout makes a later answer a timeout).
		c.deadline = now.Add(c.e.Timeout + c.e.Timeout/4)
		c.c.SetDeadline(c.deadline)
	}
	c.lastSend = now
	if raw {
		return c.sendRaw(req, reused)
	}
	if n, err := c.c.Write(req); err != nil {
		return 0, c.writeFailed(n, err, reused)
	}
	status, keep, err := c.readResponse()
	return c.answered(status, keep, err, reused)
}

// writeFailed classifies a write that failed after n bytes: never sent (the timeout passed
// before a byte went), a kept-alive connection the server had closed, or a failure.
func (c *Conn) writeFailed(n int, err error, reused bool) error {
	switch {
	case n == 0 && isTimeout(err):
		c.Close()
		return fmt.Errorf("%w: the %s timeout passed before the request could be written", ErrNotSent, c.e.Timeout)
	case reused && !isTimeout(err):
		c.Close()
		return staleError{err}
	}
	return c.fail(err)
}

// answered finishes a request whose answer was read (or not, err).
func (c *Conn) answered(status int, keep bool, err error, reused bool) (int, error) {
	if err != nil {
		var none noAnswerError
		if !reused && c.e.TLS != nil && errors.As(err, &none) && isTLSAlert(none.err) {
			// The server sent an alert instead of an answer on the connection just opened: it
			// refused the client certificate (TLS 1.3 checks it after the client's handshake).
			// It backs off as a failed connect does: the next one will be refused alike.
			c.backOff(context.Background())
			return 0, c.fail(fmt.Errorf("%w with %s: %w", ErrTLSHandshake, c.e.Addr, none.err))
		}
		if reused && errors.As(err, &none) && !isTimeout(none.err) {
			c.Close()
			return 0, staleError{none.err}
		}
		if errors.As(err, &none) {
			err = none.err
		}
		return 0, c.fail(err)
	}
	if !keep || !c.e.KeepAlive {
		c.Close()
	}
	return status, nil
}

// staleError is a failure on a reused connection before any byte of the answer: the server
// had closed it. Do resends once; it never leaves Do.
type staleError struct{ err error }

func (e staleError) Error() string { return "connection closed by the server: " + e.err.Error() }

// noAnswerError is a failure before the first byte of a response.
type noAnswerError struct{ err error }

func (e noAnswerError) Error() string { return e.err.Error() }

// isTLSAlert reports whether err is an alert the TLS peer sent (crypto/tls reports a received
// alert as a *net.OpError whose Op is "remote error").
func isTLSAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (c *Conn) dial(ctx context.Context) error {
	start := time.Now()
	// The connect counts as tried once the socket exists and connect(2) is about to run; a
	// timeout before that point means the request never left this machine.
	tried := false
	d := net.Dialer{Timeout: c.e.Timeout, ControlContext: func(context.Context, string, string, syscall.RawConn) error {
		tried = true
		return nil
	}}
	conn, err := d.DialContext(ctx, "tcp", c.e.Addr)
	if err != nil {
		if !tried && isTimeout(err) {
			return fmt.Errorf("%w: the %s timeout passed before the connect to %s could start", ErrNotSent, c.e.Timeout, c.e.Addr)
		}
		c.backOff(ctx)
		return c.fail(err)
	}
	c.ConnectTime = time.Since(start)
	c.raw = rawConn(conn)
	if c.e.TLS != nil {
		// The config has no ClientSessionCache, so no session is ever resumed: each new
		// connection pays a full handshake, as k6 and wrk do without connection reuse. That is
		// what --no-reuse is meant to show (the cost of a connection per request), and with
		// reuse a handshake is a rare event whose kind barely matters.
		handshakeStart := time.Now()
		tc := tls.Client(conn, c.e.TLS)
		if c.e.Timeout > 0 {
			tc.SetDeadline(handshakeStart.Add(c.e.Timeout))
		}
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			c.TLSTime = time.Since(handshakeStart)
			if isTimeout(err) {
				return c.fail(fmt.Errorf("tls handshake with %s: %w", c.e.Addr, err))
			}
			c.backOff(ctx)
			return c.fail(fmt.Errorf("%w with %s: %w", ErrTLSHandshake, c.e.Addr, err))
		}
		c.TLSTime = time.Since(handshakeStart)
		conn = tc
	}
	c.failures = 0
	c.c = conn
	// The raw path writes on the socket itself, under the TLS layer; never on a TLS connection.
	c.rawIO = rawIOSupported && !c.noRawIO && c.e.TLS == nil && c.raw != nil
	c.source = connReader{c}
	if c.br == nil {
		c.br = bufio.NewReaderSize(&c.source, 16<<10)
	} else {
		c.br.Reset(&c.source)
	}
	c.Dials++
	return nil
}

// backOff waits after a failed connect before the request reports its failure: 10 ms after the
// first, doubling to 1 s, until a connect succeeds. Waiting here, not before the next connect,
// keeps the wait out of the latency of the request that finds the server back.
func (c *Conn) backOff(ctx context.Context) {
	c.failures++
	wait := maxBackoff
	if c.failures <= 7 {
		wait = min(maxBackoff, firstBackoff<<(c.failures-1))
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func rawConn(conn net.Conn) syscall.RawConn {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}

// closedByPeer reports whether the server closed the idle connection, or sent something nobody
// asked for (a 408 before closing), since its last answer. One non-blocking peek at the socket:
// a system call, and no allocation.
func (c *Conn) closedByPeer() bool {
	if c.br.Buffered() > 0 {
		return true
	}
	if c.raw == nil {
		return false
	}
	if c.peek == nil {
		c.peek = func(fd uintptr) bool {
			c.idle = peekIdle(fd)
			return true // never wait: the answer is wanted now
		}
	}
	if err := c.raw.Read(c.peek); err != nil {
		return true
	}
	switch c.idle {
	case idleOpen:
		return false
	case idleData:
		// Over TLS, records the server sends after the handshake (session tickets) wait here
		// for the next read; only plain HTTP bytes are unasked-for.
		return c.e.TLS == nil
	}
	return true // closed or reset
}

// idleState is what a peek at an idle socket found.
type idleState uint8

const (
	idleOpen   idleState = iota // nothing to read: open and quiet
	idleData                    // bytes waiting
	idleClosed                  // end of stream or an error: the server closed or reset it
)

// fail closes the connection and marks deadline errors as ErrTimeout.
func (c *Conn) fail(err error) error {
	c.Close()
	if isTimeout(err) && !errors.Is(err, ErrTimeout) {
		return fmt.Errorf("%w after %s: %w", ErrTimeout, c.e.Timeout, err)
	}
	return err
}

// Close closes the connection; the next Do redials.
func (c *Conn) Close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
		c.deadline = time.Time{}
	}
}

var (
	errMalformed   = errors.New("malformed HTTP response")
	errPartialLine = errors.New("connection ended in a line")
)

// readResponse reads a status line, headers and body. It reports whether the connection may be
// reused.
func (c *Conn) readResponse() (status int, keepAlive bool, err error) {
	for first := true; ; first = false {
		line, err := c.line()
		if err != nil {
			if first && !errors.Is(err, errPartialLine) && !errors.Is(err, errMalformed) {
				// Nothing of an answer arrived: a reused connection the server closed can be
				// retried.
				err = noAnswerError{err}
			}
			return 0, false, err
		}
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return 0, false, fmt.Errorf("%w: status line %q", errMalformed, truncate(line))
		}
		status, err = strconv.Atoi(string(line[9:12]))
		if err != nil {
			return 0, false, fmt.Errorf("%w: status line %q", errMalformed, truncate(line))
		}
		keepAlive = line[7] == '1' // HTTP/1.1 keeps the connection unless told otherwise
		if status >= 100 && status < 200 && status != 101 {
			if err := c.skipHeaders(); err != nil { // an interim response; the real one follows
				return 0, false, err
			}
			continue
		}
		break
	}
	length, chunked := int64(-1), false
	for {
		line, err := c.line()
		if err != nil {
			return 0, false, err
		}
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("%w: header %q", errMalformed, truncate(line))
		}
		// By length first: most headers (Date, Content-Type, Vary) are none of the three, and
		// are passed over without a comparison or trimming their value.
		switch {
		case len(name) == len("Content-Length") && bytes.EqualFold(name, []byte("Content-Length")):
			value = bytes.TrimSpace(value)
			length, err = strconv.ParseInt(string(value), 10, 64)
			if err != nil || length < 0 {
				return 0, false, fmt.Errorf("%w: Content-Length %q", errMalformed, value)
			}
		case len(name) == len("Transfer-Encoding") && bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(bytes.TrimSpace(value), []byte("chunked"))
		case len(name) == len("Connection") && bytes.EqualFold(name, []byte("Connection")):
			value = bytes.TrimSpace(value)
			if bytes.EqualFold(value, []byte("close")) {
				keepAlive = false
			} else if bytes.EqualFold(value, []byte("keep-alive")) {
				keepAlive = true
			}
		}
	}
	c.body = c.body[:0]
	switch {
	case status == 204 || status == 304:
	case chunked:
		err = c.readChunked()
	case length >= 0:
		err = c.readN(length)
	default: // no length: the body runs to the end of the connection
		keepAlive = false
		var buf bytes.Buffer
		buf.Write(c.body)
		_, err = io.Copy(&buf, io.LimitReader(c.br, 64<<20))
		c.body = buf.Bytes()
	}
	return status, keepAlive, err
}

func (c *Conn) readN(n int64) error {
	if n > 64<<20 {
		return fmt.Errorf("%w: body of %d bytes", errMalformed, n)
	}
	if int64(cap(c.body)) < n {
		c.body = make([]byte, 0, n)
	}
	c.body = c.body[:n]
	_, err := io.ReadFull(c.br, c.body)
	return err
}

func (c *Conn) readChunked() error {
	for {
		line, err := c.line()
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 || size > 64<<20 {
			return fmt.Errorf("%w: chunk size %q", errMalformed, truncate(line))
		}
		if size == 0 {
			return c.skipHeaders() // trailers, then the empty line
		}
		start := len(c.body)
		if cap(c.body)-start < int(size) {
			grown := make([]byte, start, start+int(size))
			copy(grown, c.body)
			c.body = grown
		}
		c.body = c.body[:start+int(size)]
		if _, err := io.ReadFull(c.br, c.body[start:]); err != nil {
			return err
		}
		if crlf, err := c.line(); err != nil || len(crlf) != 0 {
			return fmt.Errorf("%w: chunk not followed by CRLF", errMalformed)
		}
	}
}

func (c *Conn) skipHeaders() error {
	for {
		line, err := c.line()
		if err != nil {
			return err
		}
		if len(line) == 0 {
			return nil
		}
	}
}

// line reads one line without its CRLF. It is valid until the next read.
func (c *Conn) line() ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: header line longer than %d bytes", errMalformed, c.br.Size())
		}
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return nil, io.ErrUnexpectedEOF
		}
		// ReadSlice hands back what it read before the error; keep it counted as read.
		if len(line) > 0 {
			return nil, fmt.Errorf("%w of %d bytes: %w", errPartialLine, len(line), err)
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}
