package kinds

import (
	"context"
	"errors"

	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/verify"
)

// httpWorker sends prepared requests on its own keep-alive connection, so the measured path
// is one write, one read and the decision parse, allocating nothing once warm.
type httpWorker struct {
	conn       *httpload.Conn
	requests   [][]byte
	timed      [][]byte // requests asking for the server's timers, every timedEvery-th send
	timedEvery int
	sends      int
	decisions  *decisionReader
}

func (w *httpWorker) Decide(ctx context.Context, i int) verify.Outcome {
	status, body, err := w.conn.Do(ctx, w.request(i))
	if err != nil {
		return withConnectTimes(failedOutcome(w.conn, err), w.conn)
	}
	return withConnectTimes(w.judge(status, body), w.conn)
}

// request is the request for input i: every timedEvery-th send asks for the server's timers.
func (w *httpWorker) request(i int) []byte {
	req := w.requests[i]
	if w.timedEvery > 0 {
		if w.sends%w.timedEvery == 0 {
			req = w.timed[i]
		}
		w.sends++
	}
	return req
}

// judge reads the decision from an answer's status and body.
func (w *httpWorker) judge(status int, body []byte) verify.Outcome {
	if status < 200 || status > 299 {
		return statusOutcome(status, body)
	}
	return w.decisions.read(body)
}

// withConnectTimes adds to out the parts of its time the request spent opening a connection.
func withConnectTimes(out verify.Outcome, conn *httpload.Conn) verify.Outcome {
	out.ConnectNS, out.TLSNS = int64(conn.ConnectTime), int64(conn.TLSTime)
	return out
}

// failedOutcome is a request that got no answer: a timeout, a request that never left (the
// timeout passed before it could be sent), or a transport failure in the system's own words.
func failedOutcome(conn *httpload.Conn, err error) verify.Outcome {
	out := verify.Outcome{Kind: verify.TransportFailure, ConnectNS: int64(conn.ConnectTime), Err: err}
	switch {
	case errors.Is(err, httpload.ErrNotSent):
		out.Kind, out.NotSent = verify.TimedOut, true
	case errors.Is(err, httpload.ErrTimeout):
		out.Kind = verify.TimedOut
	case errors.Is(err, httpload.ErrTLSHandshake):
		out.Kind = verify.TLSRefused
	}
	return out
}

// Close releases the worker's connection.
func (w *httpWorker) Close() { w.conn.Close() }

// Reconnects counts requests that went out again on a new connection because the server had
// closed the kept-alive one.
func (w *httpWorker) Reconnects() int64 { return w.conn.Reconnects }

var _ interface {
	Closer
	Reconnector
} = (*httpWorker)(nil)
