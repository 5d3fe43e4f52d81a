package extauthz

import (
	"context"
	"net"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

func dial(t *testing.T, addr string) *grpc.ClientConn {
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func check(method, path string, headers map[string]string, body string) *authv3.CheckRequest {
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{Request: &authv3.AttributeContext_Request{
		Http: &authv3.AttributeContext_HttpRequest{Method: method, Path: path, Host: "app.example", Headers: headers, Body: body}}}}
}

// timedEngine allows every check and times its own decision, as an engine's eval timer does.
type timedEngine struct{}

func (timedEngine) Decide(_ context.Context, req *authv3.CheckRequest) (Decision, int64, error) {
	start := time.Now()
	allow := req.GetAttributes().GetRequest().GetHttp().GetMethod() != ""
	return Decision{Allow: allow}, max(1, time.Since(start).Nanoseconds()), nil
}

// serve starts a server for e on a free loopback port, stopped at the test's end, and returns a
// client connection to it.
func serve(t *testing.T, e Engine) *grpc.ClientConn {
	t.Helper()
	srv := NewServer(e)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	srv.SetServing(true)
	t.Cleanup(func() { srv.Stop(time.Second) })
	return dial(t, l.Addr().String())
}

// Timers come back in the trailer of a request that asks for them, and only then: the engine's
// eval timer as it gave it, and the handler's around it.
func TestTimersInTrailer(t *testing.T) {
	client := authv3.NewAuthorizationClient(serve(t, timedEngine{}))
	for _, ask := range []bool{false, true} {
		ctx := context.Background()
		if ask {
			ctx = metadata.AppendToOutgoingContext(ctx, TimersKey, "1")
		}
		var trailer metadata.MD
		if _, err := client.Check(ctx, check("GET", "/", nil, ""), grpc.Trailer(&trailer)); err != nil {
			t.Fatal(err)
		}
		eval, handler := Timers(trailer)
		if ask && (eval <= 0 || handler < eval) {
			t.Errorf("asked: eval %d ns, handler %d ns; want both, the handler's the larger", eval, handler)
		}
		if !ask && (eval != 0 || handler != 0 || len(trailer.Get(EvalNSKey)) > 0) {
			t.Errorf("not asked, yet trailer %v", trailer)
		}
	}
}

// A CheckResponse cut short is an error, never a code: a decision read from half a message
// would be a guess.
func TestResponseCodeOfATruncatedMessage(t *testing.T) {
	full := []byte{0x0a, 0x02, 0x08, 0x07} // status {code: 7}
	if code, err := ResponseCode(full); err != nil || code != 7 {
		t.Fatalf("ResponseCode(status{7}) = %d, %v; want 7", code, err)
	}
	for n := 1; n < len(full); n++ {
		if code, err := ResponseCode(full[:n]); err == nil {
			t.Errorf("ResponseCode of the first %d bytes = %d, want an error", n, code)
		}
	}
	if code, err := ResponseCode(nil); err != nil || code != 0 {
		t.Errorf("ResponseCode(empty) = %d, %v; want 0 (OK)", code, err)
	}
}
