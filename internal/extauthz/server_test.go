package extauthz

import (
	"context"
	"net"
	"slices"
	"testing"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/plugins"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// The decisions exercise every answer the plugin gives: a boolean either way, the object form
// with headers and a status, and a policy that fails to evaluate (two values for one rule),
// which must reach Envoy as an error, not as a denial.
const testPolicy = `package test

import rego.v1

http := input.attributes.request.http

default decision := false

decision if http.method == "GET"

decision := {"allow": false, "headers": {"x-reason": "teapot", "x-list": ["a", "b"]}, "http_status": 418, "body": "no"} if http.path == "/teapot"

decision := {"allow": true, "headers": {"x-user": "ann"}} if http.path == "/object-allow"

decision := true if http.path == "/conflict"
decision := false if http.path == "/conflict"

# The input carries OPA-Envoy's derived fields.
decision if {
	input.parsed_path == ["items", "7"]
	input.parsed_query.q == ["x", "y"]
	input.parsed_body.n == 1
}
`

// startOPA starts the plugin on a manager holding testPolicy, as OPA's runtime would, and
// returns a client connection to it.
func startOPA(t *testing.T) *grpc.ClientConn {
	t.Helper()
	addr := freeAddr(t)
	startOPAPlugin(t, `{"addr": "`+addr+`", "path": "test/decision"}`)
	return dial(t, addr)
}

// startOPAPlugin starts the plugin with the configuration given, stopped at the test's end.
func startOPAPlugin(t *testing.T, config string) (*plugins.Manager, plugins.Plugin) {
	t.Helper()
	ctx := context.Background()
	mod, err := ast.ParseModule("test.rego", testPolicy)
	if err != nil {
		t.Fatal(err)
	}
	m, err := plugins.New([]byte(`{}`), "test", inmem.New(),
		plugins.InitFiles(loader.Result{Modules: map[string]*loader.RegoFile{"test.rego": {Name: "test.rego", Parsed: mod, Raw: []byte(testPolicy)}}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Init(ctx); err != nil {
		t.Fatal(err)
	}
	cfg, err := OPAFactory{}.Validate(m, []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	p := OPAFactory{}.New(m, cfg)
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(ctx) })
	return m, p
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

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

func headersOf(opts any) []string {
	var out []string
	switch r := opts.(type) {
	case *authv3.OkHttpResponse:
		for _, h := range r.GetHeaders() {
			out = append(out, h.GetHeader().GetKey()+"="+h.GetHeader().GetValue())
		}
	case *authv3.DeniedHttpResponse:
		for _, h := range r.GetHeaders() {
			out = append(out, h.GetHeader().GetKey()+"="+h.GetHeader().GetValue())
		}
	}
	slices.Sort(out)
	return out
}

func TestOPAPluginCheck(t *testing.T) {
	conn := startOPA(t)
	health, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || health.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health %v, %v; want SERVING once started", health, err)
	}
	client := authv3.NewAuthorizationClient(conn)
	cases := []struct {
		name       string
		req        *authv3.CheckRequest
		wantErr    codes.Code // of the call; OK when it must answer
		wantCode   codes.Code // of the CheckResponse
		wantStatus int        // the denied HTTP status
		wantHeads  []string
		wantBody   string
	}{
		{name: "allow", req: check("GET", "/people", nil, ""), wantCode: codes.OK},
		{name: "deny", req: check("POST", "/people", nil, ""), wantCode: codes.PermissionDenied, wantStatus: 403},
		{name: "object deny", req: check("POST", "/teapot", nil, ""), wantCode: codes.PermissionDenied, wantStatus: 418,
			wantHeads: []string{"x-list=a", "x-list=b", "x-reason=teapot"}, wantBody: "no"},
		{name: "object allow", req: check("POST", "/object-allow", nil, ""), wantCode: codes.OK, wantHeads: []string{"x-user=ann"}},
		{name: "parsed path, query and body", req: check("POST", "/items/7?q=x&q=y", map[string]string{"content-type": "application/json"}, `{"n": 1}`),
			wantCode: codes.OK},
		{name: "evaluation error", req: check("POST", "/conflict", nil, ""), wantErr: codes.Internal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, err := client.Check(context.Background(), c.req)
			if got := status.Code(err); got != c.wantErr {
				t.Fatalf("call status %s (%v), want %s", got, err, c.wantErr)
			}
			if err != nil {
				return
			}
			if got := codes.Code(resp.GetStatus().GetCode()); got != c.wantCode {
				t.Errorf("CheckResponse status %s, want %s", got, c.wantCode)
			}
			var heads []string
			if c.wantCode == codes.OK {
				if resp.GetOkResponse() == nil {
					t.Errorf("allowed without an OkHttpResponse: %v", resp)
				}
				heads = headersOf(resp.GetOkResponse())
			} else {
				d := resp.GetDeniedResponse()
				if got := int(d.GetStatus().GetCode()); got != c.wantStatus || d.GetBody() != c.wantBody {
					t.Errorf("denied with HTTP %d body %q, want %d %q", got, d.GetBody(), c.wantStatus, c.wantBody)
				}
				heads = headersOf(d)
			}
			if !slices.Equal(heads, c.wantHeads) {
				t.Errorf("headers %v, want %v", heads, c.wantHeads)
			}
			// What the client on the measured path reads must agree with the decoded answer.
			raw, _ := proto.Marshal(resp)
			if code, err := ResponseCode(raw); err != nil || codes.Code(code) != c.wantCode {
				t.Errorf("ResponseCode = %d, %v; want %s", code, err, c.wantCode)
			}
		})
	}
}

// Timers come back in the trailer of a request that asks for them, and only then.
func TestTimersInTrailer(t *testing.T) {
	client := authv3.NewAuthorizationClient(startOPA(t))
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
