package kinds

import (
	"sync"

	"google.golang.org/grpc"
)

// grpcConns holds the gRPC connections a served target's workers dialled, one each, so that
// Stop closes every one (openfga/server over gRPC, spicedb/server).
type grpcConns struct {
	mu    sync.Mutex
	conns []*grpc.ClientConn
}

func (g *grpcConns) add(c *grpc.ClientConn) {
	g.mu.Lock()
	g.conns = append(g.conns, c)
	g.mu.Unlock()
}

func (g *grpcConns) closeAll() {
	g.mu.Lock()
	conns := g.conns
	g.conns = nil
	g.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// overGRPC marks a target's info as measured over a gRPC API at url: HTTP/2, and no pool shared
// by the workers to count, since each dials its own connection. A count would label each worker
// count of a sweep a target of its own ("h2c 8conns"), and the sweep would get no scalability
// fit.
func overGRPC(info Info, url string) Info {
	info.URL, info.HTTP2, info.Connections = url, true, 0
	return info
}
