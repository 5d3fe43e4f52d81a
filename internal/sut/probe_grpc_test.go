package sut

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/authzbench/authzbench/internal/tlsgen"
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

// Over TLS, the probe is ready only when its configuration passes the handshake: the server's
// CA trusted, and against a server that requires one, a client certificate it accepts.
func TestGRPCProbeTLS(t *testing.T) {
	set, err := tlsgen.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, err := tlsgen.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(set.ServerCert, set.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := tlsgen.LoadPool(set.CACert)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair},
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert})))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(l)
	defer srv.Stop()
	client := func(ca, cert, key string) *tls.Config {
		cfg, err := tlsgen.ClientConfig(ca, cert, key, false)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	for _, tc := range []struct {
		name  string
		tls   *tls.Config
		ready bool
	}{
		{"trusted, with a client certificate", client(set.CACert, set.ClientCert, set.ClientKey), true},
		{"no client certificate", client(set.CACert, "", ""), false},
		{"client certificate of another CA", client(set.CACert, other.ClientCert, other.ClientKey), false},
		{"server not trusted", client(other.CACert, set.ClientCert, set.ClientKey), false},
		{"in clear", nil, false},
	} {
		p := GRPCProbe{Addr: l.Addr().String(), TLS: tc.tls}
		if err := p.Ready(context.Background()); (err == nil) != tc.ready {
			t.Errorf("%s: Ready = %v, want ready %t", tc.name, err, tc.ready)
		}
	}
	if s := (GRPCProbe{Addr: "127.0.0.1:1", TLS: &tls.Config{}}).String(); !strings.HasSuffix(s, "over TLS") {
		t.Errorf("String() = %q, want it to say over TLS", s)
	}
}
