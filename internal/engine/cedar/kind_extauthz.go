package cedar

import (
	"context"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.RegisterExtAuthz(kinds.ExtAuthzKind{Name: "cedar/extauthz", Engine: "cedar", Order: 55, Launch: launchExtAuthz, Version: kindVersion})
}

// launchExtAuthz starts Cedar behind Envoy's ext_authz Check over gRPC: `authzbench
// cedar-server --grpc-addr` with the workload's Cedar policies, entities and schema, which maps
// each check to a Cedar request (cedarserver.ExtAuthz), its HTTP API on apiAddr. With a url,
// cedar/extauthz measures a running ext_authz server and launches nothing.
func launchExtAuthz(ctx context.Context, s *kinds.ExtAuthzServer, w *workload.Workload, addr, apiAddr string) error {
	args := []string{"--addr", apiAddr, "--grpc-addr", addr}
	if f := s.LaunchTLS(); f != nil {
		args = append(args, "--grpc-tls-cert-file", f.Cert, "--grpc-tls-private-key-file", f.Key)
		if f.ClientCA != "" {
			args = append(args, "--grpc-tls-ca-cert-file", f.ClientCA)
		}
	}
	cmd, err := serverCommand(s.Common(), w, append(args, s.Args()...)...)
	if err != nil {
		return err
	}
	return s.Launch(ctx, "cedar ext_authz server", addr, cmd)
}
