package sut

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// The gRPC probe asks the standard health service: ready on SERVING, not before, and not at an
// address where nothing listens.
func TestGRPCProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(l)
	defer srv.Stop()

	p := GRPCProbe{Addr: l.Addr().String(), Service: "envoy.service.auth.v3.Authorization"}
	hs.SetServingStatus(p.Service, healthpb.HealthCheckResponse_NOT_SERVING)
	if err := p.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "NOT_SERVING") {
		t.Errorf("not serving: %v", err)
	}
	hs.SetServingStatus(p.Service, healthpb.HealthCheckResponse_SERVING)
	if err := p.Ready(context.Background()); err != nil {
		t.Errorf("serving: %v", err)
	}
	if err := (GRPCProbe{Addr: l.Addr().String()}).Ready(context.Background()); err != nil {
		t.Errorf("the server as a whole: %v", err)
	}
	srv.Stop()
	if err := p.Ready(context.Background()); err == nil {
		t.Error("a stopped server passed")
	}
}
