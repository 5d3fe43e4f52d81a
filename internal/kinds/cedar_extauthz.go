package kinds

import (
	"context"

	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	Register(Kind{Name: "cedar/extauthz", Engine: "cedar", Placement: LaunchedServer, LoadsPolicy: true, Order: 55,
		Takes:     takesCheckRequests,
		NewConfig: func() Config { return &ExtAuthzConfig{} },
		New: func(common Common, c Config) Target {
			return &cedarExtAuthz{extAuthzServed{common: common, cfg: c.(*ExtAuthzConfig)}}
		}})
}

// cedarExtAuthz drives Cedar behind Envoy's ext_authz Check over gRPC: by default it starts
// `authzbench cedar-server --grpc-addr` with the workload's Cedar policies, entities and schema,
// which maps each check to a Cedar request (extauthz.Cedar); with a url it measures a running
// ext_authz server.
type cedarExtAuthz struct {
	extAuthzServed
}

func (t *cedarExtAuthz) Start(ctx context.Context, w *workload.Workload) error {
	return t.start(ctx, w, func(ctx context.Context, addr string) error { return t.launch(ctx, w, addr) })
}

func (t *cedarExtAuthz) launch(ctx context.Context, w *workload.Workload, addr string) error {
	// The HTTP API listens too; nothing is sent to it.
	httpAddr, err := sut.FreeAddr()
	for err == nil && httpAddr == addr {
		httpAddr, err = sut.FreeAddr()
	}
	if err != nil {
		return err
	}
	args := []string{"--addr", httpAddr, "--grpc-addr", addr}
	if f := t.tlsFiles; f != nil {
		args = append(args, "--grpc-tls-cert-file", f.ServerCert, "--grpc-tls-private-key-file", f.ServerKey)
		if t.cfg.Mode() >= MutualTLS {
			args = append(args, "--grpc-tls-ca-cert-file", f.CACert)
		}
	}
	cmd, err := cedarServerCommand(t.common, w, append(args, t.cfg.Args...)...)
	if err != nil {
		return err
	}
	return t.run(ctx, "cedar ext_authz server", addr, cmd)
}

func (t *cedarExtAuthz) Info() Info { return t.info("cedar", cedarVersion()) }
