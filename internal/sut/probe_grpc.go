package sut

import (
	"context"
	"crypto/tls"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// GRPCProbe is ready when the standard gRPC health service at Addr (host:port) answers SERVING
// for Service ("" asks about the server as a whole), as Envoy's and Kubernetes' gRPC health
// checks ask. TLS, when set, is the client configuration: the server's CA, a client
// certificate for mTLS; without it the connection is plaintext (h2c).
type GRPCProbe struct {
	Addr    string
	Service string
	TLS     *tls.Config
}

func (p GRPCProbe) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeAttempt)
	defer cancel()
	creds := insecure.NewCredentials()
	if p.TLS != nil {
		creds = credentials.NewTLS(p.TLS)
	}
	conn, err := grpc.NewClient("passthrough:///"+p.Addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: p.Service})
	if err != nil {
		return err
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("health status %s", s)
	}
	return nil
}

func (p GRPCProbe) String() string {
	what := "gRPC health of " + p.Addr
	if p.Service != "" {
		what += " service " + p.Service
	}
	if p.TLS != nil {
		what += " over TLS"
	}
	return what
}
