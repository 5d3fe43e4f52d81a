package target

import (
	"context"
	"strings"

	"github.com/authzbench/authzbench/internal/extauthz"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	Register(Kind{Name: "opa/extauthz", Engine: "opa", Placement: LaunchedServer, LoadsPolicy: true, Order: 35,
		Takes:     takesCheckRequests,
		NewConfig: func() Config { return &ExtAuthzConfig{} },
		New: func(common Common, c Config) Target {
			return &opaExtAuthz{extAuthzServed{common: common, cfg: c.(*ExtAuthzConfig)}}
		}})
}

// opaExtAuthz drives OPA as Envoy does through OPA-Envoy: Envoy's ext_authz Check over gRPC.
// By default it starts the OPA linked into authzbench (`opa run --server`) with authzbench's
// ext_authz plugin (extauthz.PluginName) serving the workload's decision on a loopback port;
// with a url it measures a running ext_authz server, OPA-Envoy's included.
type opaExtAuthz struct {
	extAuthzServed
}

func (t *opaExtAuthz) Start(ctx context.Context, w *workload.Workload) error {
	return t.start(ctx, w, func(ctx context.Context, addr string) error { return t.launch(ctx, w, addr) })
}

func (t *opaExtAuthz) launch(ctx context.Context, w *workload.Workload, addr string) error {
	_, policies, data, err := opaFiles(ctx, t.common.TempDir, w)
	if err != nil {
		return err
	}
	// OPA's REST API listens too, as it does beside OPA-Envoy; nothing is sent to it.
	restAddr, err := sut.FreeAddr()
	for err == nil && restAddr == addr {
		restAddr, err = sut.FreeAddr()
	}
	if err != nil {
		return err
	}
	opa, err := sut.SelfOPA()
	if err != nil {
		return err
	}
	path := strings.ReplaceAll(strings.TrimPrefix(w.Query, "data."), ".", "/")
	args := []string{"run", "--server", "--addr", restAddr, "--log-level", t.common.logLevel(),
		"--set", "plugins." + extauthz.PluginName + ".addr=" + addr,
		"--set", "plugins." + extauthz.PluginName + ".path=" + path}
	if w.RegoV0 {
		args = append(args, "--v0-compatible")
	}
	args = append(args, t.cfg.Args...)
	args = append(args, policies...)
	args = append(args, data...)
	return t.run(ctx, "opa ext_authz server", addr, opa.Command(context.Background(), args...))
}

func (t *opaExtAuthz) Info() Info {
	info := t.info("opa", linkedOPAVersion())
	if t.server != nil {
		info.LogLevel = t.common.logLevel()
	}
	return info
}
