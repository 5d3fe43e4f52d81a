package cedar

import (
	"context"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.Register(kinds.Kind{Name: "cedar/extauthz", Engine: "cedar", Placement: kinds.LaunchedServer, LoadsPolicy: true, Order: 55,
		Takes:     kinds.TakesCheckRequests,
		NewConfig: func() kinds.Config { return &kinds.ExtAuthzConfig{} },
		New: func(common kinds.Common, c kinds.Config) kinds.Target {
			cfg := c.(*kinds.ExtAuthzConfig)
			return &extAuthz{ExtAuthzServer: kinds.NewExtAuthzServer(common, cfg), cfg: cfg}
		}})
}

// extAuthz drives Cedar behind Envoy's ext_authz Check over gRPC: by default it starts
// `authzbench cedar-server --grpc-addr` with the workload's Cedar policies, entities and schema,
// which maps each check to a Cedar request (cedarserver.ExtAuthz); with a url it measures a
// running ext_authz server.
type extAuthz struct {
	*kinds.ExtAuthzServer
	cfg *kinds.ExtAuthzConfig
}

func (t *extAuthz) Start(ctx context.Context, w *workload.Workload) error {
	return t.StartGRPC(ctx, w, func(ctx context.Context, addr string) error { return t.launch(ctx, w, addr) })
}

func (t *extAuthz) launch(ctx context.Context, w *workload.Workload, addr string) error {
	// The HTTP API listens too; nothing is sent to it.
	httpAddr, err := sut.FreeAddr()
	for err == nil && httpAddr == addr {
		httpAddr, err = sut.FreeAddr()
	}
	if err != nil {
		return err
	}
	args := []string{"--addr", httpAddr, "--grpc-addr", addr}
	if f := t.LaunchTLS(); f != nil {
		args = append(args, "--grpc-tls-cert-file", f.Cert, "--grpc-tls-private-key-file", f.Key)
		if f.ClientCA != "" {
			args = append(args, "--grpc-tls-ca-cert-file", f.ClientCA)
		}
	}
	cmd, err := serverCommand(t.Common(), w, append(args, t.cfg.Args...)...)
	if err != nil {
		return err
	}
	return t.Launch(ctx, "cedar ext_authz server", addr, cmd)
}

func (t *extAuthz) Info() kinds.Info { return t.BaseInfo("cedar", kindVersion()) }
