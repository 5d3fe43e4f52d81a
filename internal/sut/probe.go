package sut

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Probe asks once whether a launched server is ready to take requests. A server is probed in
// the protocol it serves: an HTTP server on its health endpoint, a gRPC server through the gRPC
// health service, anything else by opening a connection. A new protocol is one small type.
type Probe interface {
	// Ready returns nil when the server answered as a ready one does, and otherwise what it
	// answered (or why nothing came back), to be shown if it never becomes ready.
	Ready(ctx context.Context) error
	// String says what is probed, for messages: "GET http://127.0.0.1:8181/health".
	String() string
}

// probeAttempt bounds one try, so that a server that accepts and never answers is asked again
// rather than waited on for the whole readiness deadline.
const probeAttempt = time.Second

// HTTPProbe is ready when a GET of URL answers Status (200 when zero). TLS, when set, is the
// client configuration for an https URL: a server's own CA, a client certificate for mTLS.
type HTTPProbe struct {
	URL    string
	Status int
	TLS    *tls.Config
}

func (p HTTPProbe) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeAttempt)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return err
	}
	// A transport of its own, closed after each try: the probe must not leave a kept-alive
	// connection to the server it measures in a pool the load never uses.
	tr := &http.Transport{TLSClientConfig: p.TLS, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	want := p.Status
	if want == 0 {
		want = http.StatusOK
	}
	if resp.StatusCode != want {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

func (p HTTPProbe) String() string { return "GET " + p.URL }

// TCPProbe is ready when a connection to Addr (host:port) opens, and with TLS set, when the TLS
// handshake completes too: all a server with no health endpoint of its own can be asked.
type TCPProbe struct {
	Addr string
	TLS  *tls.Config
}

func (p TCPProbe) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeAttempt)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", p.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if p.TLS == nil {
		return nil
	}
	cfg := p.TLS
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		// The certificate is checked against the host dialled, as an https client does.
		cfg = cfg.Clone()
		cfg.ServerName, _, _ = net.SplitHostPort(p.Addr)
	}
	return tls.Client(conn, cfg).HandshakeContext(ctx)
}

func (p TCPProbe) String() string {
	if p.TLS != nil {
		return "TLS connect to " + p.Addr
	}
	return "connect to " + p.Addr
}

// WaitReady asks probe until the server answers as ready, the process exits (its StartError
// then says why, without waiting out the deadline), or within passes.
func WaitReady(ctx context.Context, probe Probe, p *Process, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		last := probe.Ready(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-p.Exited():
			return p.startError()
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s not ready after %s (%s, last: %v); last output:\n%s", p.Name, within, probe, last, p.Tail())
			}
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
