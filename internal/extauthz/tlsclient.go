package extauthz

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"

	"google.golang.org/grpc/credentials"
)

// TLSWatch is a client's TLS credentials that remember why the connection's latest TLS
// exchange failed, if it did. gRPC reports a refused handshake as it reports a server that is
// not there, UNAVAILABLE with the cause in words; a load worker asks Refused to count it as a
// TLS refusal (class tls_handshake) instead, without reading gRPC's message.
//
// A TLS failure is the client's handshake failing (an untrusted server certificate, a server
// that does not speak TLS), an alert from the server, or a connection that fails before the
// server's first byte after the handshake. The last is how a TLS 1.3 server refuses a client
// certificate that is missing or signed by another CA: the client's side of the handshake is
// complete before the server has checked the client's certificate, and only the server's first
// answer (its HTTP/2 settings) says it accepted. The refusal's alert often comes too late to be
// read, after a write has already failed on the closed connection.
type TLSWatch struct {
	credentials.TransportCredentials
	refused *atomic.Pointer[error] // shared with the clones gRPC makes
}

// WatchTLS returns credentials for cfg, watched.
func WatchTLS(cfg *tls.Config) *TLSWatch {
	return &TLSWatch{TransportCredentials: credentials.NewTLS(cfg), refused: new(atomic.Pointer[error])}
}

// Refused is the latest connection's TLS failure; nil when its handshake succeeded and no
// alert came after.
func (w *TLSWatch) Refused() error {
	if err := w.refused.Load(); err != nil {
		return *err
	}
	return nil
}

func (w *TLSWatch) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := w.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		if ctx.Err() == nil { // a connection attempt given up on is no refusal
			w.refused.Store(&err)
		}
		return nil, nil, err
	}
	// The refusal, if any, is kept until the server confirms this connection: gRPC fails calls
	// with the last connection's error until a new one is ready.
	return &watchedConn{Conn: conn, refused: w.refused}, info, nil
}

// Clone is watched by the same watch: gRPC clones the credentials it is given.
func (w *TLSWatch) Clone() credentials.TransportCredentials {
	return &TLSWatch{TransportCredentials: w.TransportCredentials.Clone(), refused: w.refused}
}

// watchedConn notes how a TLS connection failed. Its Read and Write are one more call each on
// the measured path, and a flag read: the rest is on errors and on the first read only.
type watchedConn struct {
	net.Conn
	refused   *atomic.Pointer[error]
	confirmed atomic.Bool // the server sent its first bytes: it accepted the handshake
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && !c.confirmed.Load() {
		c.confirmed.Store(true)
		c.refused.Store(nil)
	}
	if err != nil && (isAlert(err) || !c.confirmed.Load()) {
		c.refuse(err)
	}
	return n, err
}

func (c *watchedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil && !c.confirmed.Load() {
		c.refuse(err)
	}
	return n, err
}

func (c *watchedConn) refuse(err error) {
	if !isAlert(err) {
		err = &unconfirmed{err}
	}
	c.refused.Store(&err)
}

// unconfirmed is a connection that failed before the server accepted its handshake.
type unconfirmed struct{ err error }

func (e *unconfirmed) Error() string {
	return "connection failed before the server accepted the TLS handshake (a client certificate refused?): " + e.err.Error()
}
func (e *unconfirmed) Unwrap() error { return e.err }

// isAlert says whether err is a TLS alert the peer sent: crypto/tls returns one as a
// *net.OpError whose Op is "remote error".
func isAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}
