package target

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/authzbench/authzbench/internal/cedarserver"
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
	// Loaded in this process first, as cedar/server does: a policy or schema error is reported
	// with its position before any server starts.
	if _, err := loadCedar(w); err != nil {
		return err
	}
	paths, err := cedarPaths(t.common.TempDir, w)
	if err != nil {
		return err
	}
	// The HTTP API listens too; nothing is sent to it.
	httpAddr, err := t.freeAddr()
	for err == nil && httpAddr == addr {
		httpAddr, err = t.freeAddr()
	}
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable to serve Cedar: %w", err)
	}
	args := []string{cedarserver.Arg, "--addr", httpAddr, "--grpc-addr", addr}
	for _, p := range paths.Policies {
		args = append(args, "--policies", p)
	}
	if paths.Entities != "" {
		args = append(args, "--entities", paths.Entities)
	}
	if paths.Schema != "" {
		args = append(args, "--schema", paths.Schema)
	}
	if paths.TemplateLinks != "" {
		args = append(args, "--template-links", paths.TemplateLinks)
	}
	args = append(args, t.cfg.Args...)
	return t.run(ctx, "cedar ext_authz server", addr, exec.Command(self, args...))
}

func (t *cedarExtAuthz) Info() Info { return t.info("cedar", cedarVersion()) }
