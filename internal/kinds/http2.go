package kinds

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/authzbench/authzbench/internal/verify"
)

// HTTP2Config is the HTTP/2 setting of the REST kinds (opa/server, cedar/server, http): speak
// HTTP/2 instead of HTTP/1.1, h2 by ALPN over TLS and h2c with prior knowledge in clear, over a
// few connections that every worker shares, as Envoy and other HTTP/2 clients multiplex.
type HTTP2Config struct {
	HTTP2 bool `yaml:"http2"`
	// HTTP2Connections is how many HTTP/2 connections the workers share (worker k sends on
	// connection k mod n); 1 by default, as a proxy keeps one to an upstream host per worker
	// thread and multiplexes its requests over it.
	HTTP2Connections int `yaml:"http2_connections" count:"true"`
}

func init() {
	DeclareOption(Option{Key: "http2", Flag: "http2", Selective: true,
		Help: "{kinds,}: speak HTTP/2 (Go's net/http): h2 by ALPN with --tls or an https url, h2c with prior knowledge in clear (OPA started with --h2c); answers over HTTP/1.x count as not_http2"})
	DeclareOption(Option{Key: "http2_connections", Flag: "http2-connections", Selective: true,
		Help: "with --http2: HTTP/2 connections the workers share, worker k on connection k mod N (default 1)"})
}

// check finds an http2_connections without http2, or one that is no count.
func (c *HTTP2Config) check() []error {
	var errs []error
	if c.HTTP2Connections < 0 {
		errs = append(errs, optionError("http2_connections", func(n func(string) string) string {
			return fmt.Sprintf("%s %d: want 1 or more, or none for 1", n("http2_connections"), c.HTTP2Connections)
		}))
	}
	if c.HTTP2Connections != 0 && !c.HTTP2 {
		errs = append(errs, optionError("http2_connections", func(n func(string) string) string {
			return fmt.Sprintf("%s sets the HTTP/2 connections the workers share; give %s with it", n("http2_connections"), n("http2"))
		}))
	}
	return errs
}

// connections is the size of the shared pool.
func (c *HTTP2Config) connections() int { return max(1, c.HTTP2Connections) }

// refuseNoReuse says why --http2 does not go with --no-reuse: HTTP/2's point is many requests
// on one kept connection, and a connection per request would measure the handshakes HTTP/1.1
// with --no-reuse already splits out, with HTTP/2's preface and SETTINGS exchange on top.
func refuseNoReuse() error {
	return optionError("http2", func(n func(string) string) string {
		return fmt.Sprintf("%s multiplexes requests over kept connections; it does not go with --no-reuse (measure connection costs over HTTP/1.1, without %s)", n("http2"), n("http2"))
	})
}

// h2Pool is the HTTP/2 connections the workers of one target share: one net/http Transport
// each, limited to one connection, so that the pool is exactly as many connections as asked
// for. Go's own HTTP/2 (net/http's Protocols, Go 1.24+) speaks the protocol: h2 only by ALPN
// over TLS, h2c with prior knowledge (the client preface first, no Upgrade) in clear.
type h2Pool struct {
	clients []*http.Client
	spoke1  []*atomic.Bool // per connection: the server answered in HTTP/1.x
	next    atomic.Uint64  // the connection the next worker takes
}

// newH2Pool opens nothing yet: each transport dials on its first request. tlsConfig nil is
// h2c in clear.
func newH2Pool(n int, tlsConfig *tls.Config) *h2Pool {
	p := &h2Pool{}
	for range n {
		spoke1 := new(atomic.Bool)
		protocols := new(http.Protocols)
		tr := &http.Transport{
			Protocols:       protocols,
			MaxConnsPerHost: 1,
			// As the HTTP/1.1 path asks for nothing compressed: a gzip'd answer would cost both
			// sides work the other protocol does not do.
			DisableCompression: true,
			TLSClientConfig:    tlsConfig,
			ForceAttemptHTTP2:  true,
		}
		if tlsConfig != nil {
			// HTTP/1.1 is offered beside h2 so that a server without h2 still answers, over
			// HTTP/1.1, and the answer is counted as not_http2 rather than lost in a handshake.
			protocols.SetHTTP1(true)
			protocols.SetHTTP2(true)
		} else {
			// Only h2c: with HTTP1 set as well, net/http would send HTTP/1.1 to an http:// URL.
			protocols.SetUnencryptedHTTP2(true)
			dialer := &net.Dialer{}
			tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dialer.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &sniffConn{Conn: c, spoke1: spoke1}, nil
			}
		}
		p.clients = append(p.clients, &http.Client{Transport: tr})
		p.spoke1 = append(p.spoke1, spoke1)
	}
	return p
}

// take is the connection for the next worker, round robin.
func (p *h2Pool) take() (*http.Client, *atomic.Bool) {
	k := int((p.next.Add(1) - 1) % uint64(len(p.clients)))
	return p.clients[k], p.spoke1[k]
}

func (p *h2Pool) close() {
	if p == nil {
		return
	}
	for _, c := range p.clients {
		c.CloseIdleConnections()
	}
}

// sniffConn notes whether the first bytes the server sent on an h2c connection were an
// HTTP/1.x status line: a server that does not speak h2c answers the client preface
// ("PRI * HTTP/2.0") in HTTP/1.1, which the HTTP/2 client sees only as a broken frame.
type sniffConn struct {
	net.Conn
	spoke1 *atomic.Bool
	seen   bool
}

func (c *sniffConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if !c.seen && n > 0 {
		c.seen = true
		if bytes.HasPrefix(b[:n], []byte("HTTP/1.")) {
			c.spoke1.Store(true)
		}
	}
	return n, err
}

// h2Request is one input's request, built before any clock runs: its method, URL and headers
// in a template, and its body.
type h2Request struct {
	template *http.Request
	body     []byte
}

// newH2Requests builds one request per body.
func newH2Requests(method, uri string, headers http.Header, bodies [][]byte) ([]h2Request, error) {
	out := make([]h2Request, len(bodies))
	for i, body := range bodies {
		req, err := http.NewRequest(method, uri, nil)
		if err != nil {
			return nil, err
		}
		req.Header = headers
		req.ContentLength = int64(len(body))
		out[i] = h2Request{template: req, body: body}
	}
	return out, nil
}

// h2Worker is one load worker's share of the pool: it sends a prepared request as a stream on
// its connection and hands the answer to judge, the engine's reading of a status and a body.
type h2Worker struct {
	client     *http.Client
	spoke1     *atomic.Bool
	timeout    time.Duration
	requests   []h2Request
	timed      []h2Request // asking for the server's timers, every timedEvery-th send
	timedEvery int
	sends      int
	body       bytes.Buffer // the answer's body, reused
	judge      func(status int, body []byte) verify.Outcome
}

func (w *h2Worker) Decide(ctx context.Context, i int) verify.Outcome {
	r := &w.requests[i]
	if w.timedEvery > 0 {
		if w.sends%w.timedEvery == 0 {
			r = &w.timed[i]
		}
		w.sends++
	}
	// The deadline is a backstop a quarter past the timeout, as on the HTTP/1.1 path: the
	// drivers count a later answer as a timeout themselves.
	ctx, cancel := context.WithTimeout(ctx, w.timeout+w.timeout/4)
	defer cancel()
	req := r.template.WithContext(ctx)
	req.Body = io.NopCloser(bytes.NewReader(r.body))
	resp, err := w.client.Do(req)
	if err != nil {
		return w.failed(err)
	}
	w.body.Reset()
	_, err = w.body.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		return verify.Outcome{Kind: verify.NotHTTP2, Status: resp.StatusCode,
			Err: fmt.Errorf("HTTP/2 asked for, the server answered in %s (status %d)", resp.Proto, resp.StatusCode)}
	}
	if err != nil {
		return w.failed(err)
	}
	return w.judge(resp.StatusCode, w.body.Bytes())
}

// failed classifies a request that got no complete answer, in the classes of the HTTP/1.1
// path, and not_http2 for a server that answered the h2c preface in HTTP/1.x.
func (w *h2Worker) failed(err error) verify.Outcome {
	out := verify.Outcome{Kind: verify.TransportFailure, Err: err}
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var alert tls.AlertError
	var unknownCA x509.UnknownAuthorityError
	switch {
	case w.spoke1.Load():
		out.Kind = verify.NotHTTP2
		out.Err = fmt.Errorf("HTTP/2 asked for, the server answered the h2c preface in HTTP/1.x: %w", err)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		out.Kind = verify.TimedOut
	case errors.As(err, &certErr) || errors.As(err, &alert) || errors.As(err, &unknownCA):
		out.Kind = verify.TLSRefused
	}
	return out
}

// Close lets the worker's connection go once no worker uses it; the pool closes it at Stop.
func (w *h2Worker) Close() {}
