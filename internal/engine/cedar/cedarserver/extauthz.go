package cedarserver

import (
	"context"
	"encoding/json"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/extauthz"
)

// ExtAuthz is Cedar behind Envoy's ext_authz gRPC API (an extauthz.Engine, served with
// --grpc-addr): it decides checks with a Cedar policy set. A check becomes the Cedar request the
// envoy workload's Cedar version decides: the user of the Basic Authorization header as
// User::"name", the HTTP method as Action::"GET", the host as Service::"host", and the path and
// host in the context. Cedar cannot decode base64 itself, so this decoding is the mapping's,
// as an Envoy filter or a gateway in front of Cedar would do it.
type ExtAuthz struct {
	Engine *cedarengine.Engine
	// Live, when set, is the engine the HTTP API's updates swap: each check decides with the
	// one current then, not Engine.
	Live *cedarengine.Live
}

// Decide maps the check to a Cedar request and authorizes it. A request the policy set's
// schema rejects is INVALID_ARGUMENT, as the HTTP server answers it 400. Only Cedar's
// authorization is the eval timer, as in the HTTP server.
func (c ExtAuthz) Decide(_ context.Context, req *authv3.CheckRequest) (extauthz.Decision, int64, error) {
	e := c.Engine
	if c.Live != nil {
		e = c.Live.Engine()
	}
	r, err := e.ParseRequest(CheckRequest(req))
	if err != nil {
		return extauthz.Decision{}, 0, status.Errorf(codes.InvalidArgument, "cedar request: %v", err)
	}
	start := time.Now()
	decision, _ := e.Decide(&r)
	return extauthz.Decision{Allow: bool(decision)}, time.Since(start).Nanoseconds(), nil
}

type cedarUID struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

type cedarRequest struct {
	Principal cedarUID          `json:"principal"`
	Action    cedarUID          `json:"action"`
	Resource  cedarUID          `json:"resource"`
	Context   map[string]string `json:"context"`
}

// CheckRequest is the Cedar request document for a check (see ExtAuthz).
func CheckRequest(req *authv3.CheckRequest) []byte {
	h := req.GetAttributes().GetRequest().GetHttp()
	host := h.GetHost()
	if host == "" {
		host = h.GetHeaders()[":authority"]
	}
	b, _ := json.Marshal(cedarRequest{ // strings only: always encodes
		Principal: cedarUID{"User", extauthz.BasicUser(h.GetHeaders())},
		Action:    cedarUID{"Action", h.GetMethod()},
		Resource:  cedarUID{"Service", host},
		Context:   map[string]string{"path": h.GetPath(), "host": host},
	})
	return b
}
