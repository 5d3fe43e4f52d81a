package extauthz

import (
	"context"
	"encoding/base64"
	"net"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/authzbench/authzbench/internal/cedarengine"
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

// Cedar gets the check as the envoy workload's Cedar version asks it: the Basic user, the
// method as the action, the host as the resource, the path in the context.
func TestCedarCheck(t *testing.T) {
	policy := `permit (principal == User::"ann", action == Action::"GET", resource == Service::"app.example") when { context.path like "/people*" };`
	engine, err := cedarengine.New([]cedarengine.Source{{Name: "p.cedar", Text: []byte(policy)}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Cedar{Engine: engine})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	srv.SetServing(true)
	defer srv.Stop(time.Second)
	client := authv3.NewAuthorizationClient(dial(t, l.Addr().String()))
	basic := func(user string) map[string]string {
		return map[string]string{"authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":pw"))}
	}
	for _, c := range []struct {
		user, method, path string
		want               codes.Code
	}{
		{"ann", "GET", "/people/1", codes.OK},
		{"ann", "GET", "/orders", codes.PermissionDenied},
		{"ben", "GET", "/people", codes.PermissionDenied},
		{"ann", "POST", "/people", codes.PermissionDenied},
	} {
		resp, err := client.Check(context.Background(), check(c.method, c.path, basic(c.user), ""))
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if got := codes.Code(resp.GetStatus().GetCode()); got != c.want {
			t.Errorf("%s %s %s: %s, want %s", c.user, c.method, c.path, got, c.want)
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
