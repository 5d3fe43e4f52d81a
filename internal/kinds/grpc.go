package kinds

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/verify"
)

// GRPCConns holds the gRPC connections a served target's workers dialled, one each, so that
// Stop closes every one. Its zero value holds none.
type GRPCConns struct {
	mu    sync.Mutex
	conns []*grpc.ClientConn
}

// Add keeps c, to be closed by CloseAll.
func (g *GRPCConns) Add(c *grpc.ClientConn) {
	g.mu.Lock()
	g.conns = append(g.conns, c)
	g.mu.Unlock()
}

// CloseAll closes every connection added so far.
func (g *GRPCConns) CloseAll() {
	g.mu.Lock()
	conns := g.conns
	g.conns = nil
	g.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// OverGRPC marks a target's info as measured over a gRPC API at url: HTTP/2, and no pool shared
// by the workers to count, since each dials its own connection. A count would label each worker
// count of a sweep a target of its own ("h2c 8conns"), and the sweep would get no scalability
// fit.
func OverGRPC(info Info, url string) Info {
	info.URL, info.HTTP2, info.Connections = url, true, 0
	return info
}

// GRPCCheckFailed classifies a check an engine's gRPC API did not answer, what naming the call
// in the message (the engine's check): timed out (ctx ended), no transport (Unavailable), or the
// server's status, which is no decision.
func GRPCCheckFailed(ctx context.Context, what string, err error) verify.Outcome {
	st := status.Convert(err)
	err = fmt.Errorf("%s: %s: %s", what, st.Code(), st.Message())
	switch {
	case ctx.Err() != nil:
		return verify.Outcome{Kind: verify.TimedOut, Err: err}
	case st.Code() == codes.Unavailable:
		return verify.Outcome{Kind: verify.TransportFailure, Err: err}
	}
	return verify.Outcome{Kind: verify.GRPCStatus, Status: int(st.Code()), Err: err}
}
