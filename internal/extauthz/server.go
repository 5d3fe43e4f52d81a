// Package extauthz serves Envoy's external authorization API (envoy.service.auth.v3
// Authorization/Check over gRPC) in front of a policy engine, as Envoy calls OPA-Envoy or any
// ext_authz service, so that authzbench can measure an engine behind the protocol a mesh uses.
//
// It holds what every engine shares: the gRPC server with the standard health service, the
// answer Envoy expects (OK with headers to add, or PERMISSION_DENIED with the HTTP response to
// send), and the server's own timers, returned in the trailers of a request that asks for them.
// An engine is a small interface (Engine); OPA's is an OPA plugin (in engine/opa), Cedar's maps the
// request to a Cedar request (internal/engine/cedar/cedarserver). The client side authzbench sends with is here too
// (client.go), so that both agree on the metadata keys and on what an answer means.
//
// It is not an Envoy: it does not proxy HTTP, and reads only what a CheckRequest carries.
package extauthz

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
)

// The gRPC metadata by which a client asks for the server's timers, and the trailer keys they
// come back in (nanoseconds, decimal): the gRPC counterpart of OPA REST's ?metrics=true.
const (
	TimersKey     = "x-authzbench-timers"
	EvalNSKey     = "x-authzbench-eval-ns"
	HandlerNSKey  = "x-authzbench-handler-ns"
	CheckMethod   = "/envoy.service.auth.v3.Authorization/Check"
	defaultDenied = 403
)

// Decision is an engine's answer to one check: a boolean, or OPA-Envoy's object form with the
// headers to add, and the HTTP status and body of a denial.
type Decision struct {
	Allow      bool
	Headers    []Header
	HTTPStatus int // of a denial; 403 when 0
	Body       string
}

// Header is one header an answer asks Envoy to add.
type Header struct{ Name, Value string }

// Engine decides one check. evalNS is the time spent in the policy evaluation proper, the
// server's eval timer. An error is the engine's failure to decide, and reaches the client as a
// gRPC error: a status error keeps its code, any other is INTERNAL.
type Engine interface {
	Decide(ctx context.Context, req *authv3.CheckRequest) (d Decision, evalNS int64, err error)
}

// Server is an ext_authz gRPC server for one engine, with the standard health service, which
// says NOT_SERVING until SetServing(true).
type Server struct {
	grpc   *grpc.Server
	health *health.Server
}

// NewServer returns a server answering Check with e; opts are the gRPC server's own options,
// its TLS credentials (ServerOptions) above all.
func NewServer(e Engine, opts ...grpc.ServerOption) *Server {
	s := &Server{grpc: grpc.NewServer(opts...), health: health.NewServer()}
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	authv3.RegisterAuthorizationServer(s.grpc, &service{engine: e})
	healthpb.RegisterHealthServer(s.grpc, s.health)
	// Reflection lets other gRPC tools (ghz, grpcurl) call Check without the proto files, so
	// the same server can be driven by them and by authzbench in one comparison.
	reflection.Register(s.grpc)
	return s
}

// SetServing says whether the engine can decide: what a health check (sut.GRPCProbe, Envoy's)
// reads.
func (s *Server) SetServing(ok bool) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if ok {
		st = healthpb.HealthCheckResponse_SERVING
	}
	s.health.SetServingStatus("", st)
}

// Serve answers on l until Stop; it returns nil once stopped.
func (s *Server) Serve(l net.Listener) error {
	if err := s.grpc.Serve(l); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

// Stop ends the server, letting calls in flight finish for at most grace.
func (s *Server) Stop(grace time.Duration) {
	s.health.Shutdown()
	done := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		s.grpc.Stop()
	}
}

type service struct {
	authv3.UnimplementedAuthorizationServer
	engine Engine
}

func (s *service) Check(ctx context.Context, req *authv3.CheckRequest) (*authv3.CheckResponse, error) {
	start := time.Now()
	d, evalNS, err := s.engine.Decide(ctx, req)
	if err != nil {
		if _, ok := status.FromError(err); !ok {
			err = status.Error(codes.Internal, err.Error())
		}
		return nil, err
	}
	resp := response(d)
	if wantsTimers(ctx) {
		// The handler timer ends here, before the trailer is set and the answer encoded, as
		// OPA's timer_server_handler_ns ends before its response is written.
		handlerNS := time.Since(start).Nanoseconds()
		grpc.SetTrailer(ctx, metadata.Pairs(EvalNSKey, strconv.FormatInt(evalNS, 10), HandlerNSKey, strconv.FormatInt(handlerNS, 10)))
	}
	return resp, nil
}

func wantsTimers(ctx context.Context) bool {
	md, ok := metadata.FromIncomingContext(ctx)
	return ok && len(md.Get(TimersKey)) > 0
}

// response is the CheckResponse Envoy acts on: OK with the headers to add upstream, or
// PERMISSION_DENIED with the response Envoy sends the client instead.
func response(d Decision) *authv3.CheckResponse {
	var headers []*corev3.HeaderValueOption
	for _, h := range d.Headers {
		headers = append(headers, &corev3.HeaderValueOption{Header: &corev3.HeaderValue{Key: h.Name, Value: h.Value}})
	}
	if d.Allow {
		return &authv3.CheckResponse{Status: &rpcstatus.Status{Code: int32(codes.OK)},
			HttpResponse: &authv3.CheckResponse_OkResponse{OkResponse: &authv3.OkHttpResponse{Headers: headers}}}
	}
	code := d.HTTPStatus
	if code == 0 {
		code = defaultDenied
	}
	return &authv3.CheckResponse{Status: &rpcstatus.Status{Code: int32(codes.PermissionDenied)},
		HttpResponse: &authv3.CheckResponse_DeniedResponse{DeniedResponse: &authv3.DeniedHttpResponse{
			Status: &typev3.HttpStatus{Code: typev3.StatusCode(code)}, Headers: headers, Body: d.Body}}}
}
