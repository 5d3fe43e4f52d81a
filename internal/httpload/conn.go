// Package httpload is a minimal HTTP/1.1 client for load generation: one keep-alive connection
// per worker, requests encoded once before the clock starts, responses read into a reused
// buffer.
//
// It exists because a general-purpose client spends CPU on things a load generator does not
// need (header maps, pools, redirects, per-request objects), and on a small machine every
// microsecond the generator spends is taken from the server it measures. It is not a general
// client: no redirects, no proxies, no request retries, no HTTP/2.
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
	br   *bufio.Reader
	body []byte

	// Dials counts connections opened; ConnectTime is the time spent opening the last one
	// (TCP, plus the TLS handshake), which is part of the request time that Do reports.
	Dials       int64
	ConnectTime time.Duration
}

// NewConn returns a connection to e; it dials on first use.
func NewConn(e Endpoint) *Conn { return &Conn{e: e} }

// ErrTimeout is returned when no complete response arrived within the endpoint's timeout.
var ErrTimeout = errors.New("timeout")

// Do sends a request encoded by EncodeRequest and reads the response. The body it returns is
// valid until the next call.
func (c *Conn) Do(ctx context.Context, req []byte) (status int, body []byte, err error) {
	c.ConnectTime = 0
	if c.c == nil {
		if err := c.dial(ctx); err != nil {
			return 0, nil, err
		}
	}
	if c.e.Timeout > 0 {
		c.c.SetDeadline(time.Now().Add(c.e.Timeout))
	}
	if _, err := c.c.Write(req); err != nil {
		return 0, nil, c.fail(err)
	}
	status, keep, err := c.readResponse()
	if err != nil {
		return 0, nil, c.fail(err)
	}
	if !keep || !c.e.KeepAlive {
		c.Close()
	}
	return status, c.body, nil
}

func (c *Conn) dial(ctx context.Context) error {
	start := time.Now()
	d := net.Dialer{Timeout: c.e.Timeout}
	conn, err := d.DialContext(ctx, "tcp", c.e.Addr)
	if err != nil {
		return c.fail(err)
	}
	if c.e.TLS != nil {
		tc := tls.Client(conn, c.e.TLS)
		if c.e.Timeout > 0 {
			tc.SetDeadline(time.Now().Add(c.e.Timeout))
		}
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return c.fail(fmt.Errorf("tls handshake with %s: %w", c.e.Addr, err))
		}
		conn = tc
	}
	c.c = conn
	if c.br == nil {
		c.br = bufio.NewReaderSize(conn, 16<<10)
	} else {
		c.br.Reset(conn)
	}
	c.Dials++
	c.ConnectTime = time.Since(start)
	return nil
}

// fail closes the connection and turns deadline errors into ErrTimeout.
func (c *Conn) fail(err error) error {
	c.Close()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ErrTimeout
	}
	return err
}

// Close closes the connection; the next Do redials.
func (c *Conn) Close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

var errMalformed = errors.New("malformed HTTP response")

// readResponse reads a status line, headers and body. It reports whether the connection may be
// reused.
func (c *Conn) readResponse() (status int, keepAlive bool, err error) {
	for {
		line, err := c.line()
		if err != nil {
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
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			length, err = strconv.ParseInt(string(value), 10, 64)
			if err != nil || length < 0 {
				return 0, false, fmt.Errorf("%w: Content-Length %q", errMalformed, value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
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
