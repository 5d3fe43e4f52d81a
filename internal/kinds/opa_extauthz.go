package kinds

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	engineopa "github.com/authzbench/authzbench/internal/engine/opa"
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
// ext_authz plugin (engineopa.PluginName) serving the workload's decision on a loopback port;
// with a url it measures a running ext_authz server, OPA-Envoy's included.
type opaExtAuthz struct {
	extAuthzServed
}

func (t *opaExtAuthz) Start(ctx context.Context, w *workload.Workload) error {
	return t.start(ctx, w, func(ctx context.Context, addr string) error { return t.launch(ctx, w, addr) })
}

func (t *opaExtAuthz) launch(ctx context.Context, w *workload.Workload, addr string) error {
	_, policies, data, err := opaFiles(ctx, t.common, w)
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
	opa, err := engineopa.Linked()
	if err != nil {
		return err
	}
	path := strings.ReplaceAll(strings.TrimPrefix(w.Query, "data."), ".", "/")
	args := []string{"run", "--server", "--addr", restAddr, "--log-level", t.common.logLevel(),
		"--set", "plugins." + engineopa.PluginName + ".addr=" + addr,
		"--set", "plugins." + engineopa.PluginName + ".path=" + path}
	if w.RegoV0 {
		args = append(args, "--v0-compatible")
	}
	if f := t.tlsFiles; f != nil {
		// The plugin's own TLS settings: OPA's --tls-cert-file would secure its REST API only.
		settings := [][2]string{{"tls_cert_file", f.ServerCert}, {"tls_private_key_file", f.ServerKey}}
		if t.cfg.Mode() >= MutualTLS {
			settings = append(settings, [2]string{"tls_ca_cert_file", f.CACert})
		}
		for _, kv := range settings {
			file, err := setValue(kv[1])
			if err != nil {
				return err
			}
			args = append(args, "--set", "plugins."+engineopa.PluginName+"."+kv[0]+"="+file)
		}
	}
	args = append(args, t.cfg.Args...)
	args = append(args, opaRunPaths(policies, data)...)
	return t.run(ctx, "opa ext_authz server", addr, opa.Command(context.Background(), args...))
}

func (t *opaExtAuthz) Info() Info {
	info := t.info("opa", linkedOPAVersion())
	if t.server != nil {
		info.LogLevel = t.common.logLevel()
	}
	return info
}

// setValue is a file's path as the value of OPA's --set: absolute, so that OPA neither reads it
// from another directory nor takes it for a number or a boolean, with the characters --set
// treats as syntax (the list separator ',' and the escape '\\') escaped.
func setValue(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return strings.NewReplacer(`\`, `\\`, `,`, `\,`).Replace(abs), nil
}
