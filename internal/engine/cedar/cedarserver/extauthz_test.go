package cedarserver

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

	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/extauthz"
)

// Cedar gets the check as the envoy workload's Cedar version asks it: the Basic user, the
// method as the action, the host as the resource, the path in the context.
func TestExtAuthzCheck(t *testing.T) {
	policy := `permit (principal == User::"ann", action == Action::"GET", resource == Service::"app.example") when { context.path like "/people*" };`
	engine, err := cedarengine.New([]cedarengine.Source{{Name: "p.cedar", Text: []byte(policy)}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := extauthz.NewServer(ExtAuthz{Engine: engine})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	srv.SetServing(true)
	defer srv.Stop(time.Second)
	conn, err := grpc.NewClient("passthrough:///"+l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := authv3.NewAuthorizationClient(conn)
	check := func(user, method, path string) *authv3.CheckRequest {
		headers := map[string]string{"authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":pw"))}
		return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{Request: &authv3.AttributeContext_Request{
			Http: &authv3.AttributeContext_HttpRequest{Method: method, Path: path, Host: "app.example", Headers: headers}}}}
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
		resp, err := client.Check(context.Background(), check(c.user, c.method, c.path))
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if got := codes.Code(resp.GetStatus().GetCode()); got != c.want {
			t.Errorf("%s %s %s: %s, want %s", c.user, c.method, c.path, got, c.want)
		}
	}
}
