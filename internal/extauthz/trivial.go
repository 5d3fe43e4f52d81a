package extauthz

import (
	"context"
	"net"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
)

// TrivialArg makes authzbench (or a test binary) serve the trivial ext_authz server on the
// address after it, once registered with sut.RegisterTrivial (the trivial/extauthz kind does).
const TrivialArg = "__trivial-extauthz-server"

// allowAll is an engine that decides nothing: every check is allowed, in no time.
type allowAll struct{}

func (allowAll) Decide(context.Context, *authv3.CheckRequest) (Decision, int64, error) {
	return Decision{Allow: true}, 0, nil
}

// ServeTrivial serves ext_authz on l with an engine that allows every check without looking at
// it: the same gRPC server, health service and answers as the engines' servers, and no policy.
// It is what `authzbench calibrate --grpc` drives, so the figures are the gRPC client's
// ceiling (and gRPC's own cost), not an engine's.
func ServeTrivial(l net.Listener) error {
	s := NewServer(allowAll{})
	s.SetServing(true)
	return s.Serve(l)
}
