package opa

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/open-policy-agent/opa/v1/version"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.Register(kinds.Kind{Name: "opa/extauthz", Engine: "opa", Placement: kinds.LaunchedServer, LoadsPolicy: true, ChecksPrepared: true, Order: 35,
		Takes:     kinds.TakesCheckRequests,
		NewConfig: func() kinds.Config { return &ExtAuthzConfig{} },
		New: func(common kinds.Common, c kinds.Config) kinds.Target {
			cfg := c.(*ExtAuthzConfig)
			return &extAuthz{ExtAuthzServer: kinds.NewExtAuthzServer(common, &cfg.ExtAuthzConfig), cfg: &cfg.ExtAuthzConfig, logs: &cfg.DecisionLogConfig}
		}})
}

// ExtAuthzConfig is opa/extauthz's settings: the ext_authz server's, and OPA's decision logging,
// which the ext_authz plugin calls as OPA-Envoy's does.
type ExtAuthzConfig struct {
	kinds.ExtAuthzConfig `yaml:",inline"`
	DecisionLogConfig    `yaml:",inline"`
}

func (c *ExtAuthzConfig) Check() error {
	return errors.Join(c.ExtAuthzConfig.Check(), checkLoggedServer(&c.DecisionLogConfig, c.URL, "", 0))
}

// extAuthz drives OPA as Envoy does through OPA-Envoy: Envoy's ext_authz Check over gRPC.
// By default it starts the OPA linked into authzbench (`opa run --server`) with authzbench's
// ext_authz plugin (PluginName) serving the workload's decision on a loopback port; with a url
// it measures a running ext_authz server, OPA-Envoy's included.
type extAuthz struct {
	*kinds.ExtAuthzServer
	cfg     *kinds.ExtAuthzConfig
	logs    *DecisionLogConfig
	logging *decisionLogging
}

func (t *extAuthz) Start(ctx context.Context, w *workload.Workload) error {
	return t.StartGRPC(ctx, w, func(ctx context.Context, addr string) error { return t.launch(ctx, w, addr) })
}

func (t *extAuthz) launch(ctx context.Context, w *workload.Workload, addr string) error {
	dir, policies, data, err := workloadFiles(ctx, t.Common(), w)
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
	opa, err := Linked()
	if err != nil {
		return err
	}
	path := strings.ReplaceAll(strings.TrimPrefix(w.Query, "data."), ".", "/")
	args := []string{"run", "--server", "--addr", restAddr, "--log-level", t.Common().ServerLogLevel(),
		"--set", "plugins." + PluginName + ".addr=" + addr,
		"--set", "plugins." + PluginName + ".path=" + path}
	if regoV0(w) {
		args = append(args, "--v0-compatible")
	}
	if f := t.LaunchTLS(); f != nil {
		// The plugin's own TLS settings: OPA's --tls-cert-file would secure its REST API only.
		settings := [][2]string{{"tls_cert_file", f.Cert}, {"tls_private_key_file", f.Key}}
		if f.ClientCA != "" {
			settings = append(settings, [2]string{"tls_ca_cert_file", f.ClientCA})
		}
		for _, kv := range settings {
			file, err := setValue(kv[1])
			if err != nil {
				return err
			}
			args = append(args, "--set", "plugins."+PluginName+"."+kv[0]+"="+file)
		}
	}
	if t.logging, err = startDecisionLogging(t.logs); err != nil {
		return err
	}
	if t.logging != nil {
		logArgs, err := t.logging.args(dir)
		if err != nil {
			return err
		}
		args = append(args, logArgs...)
	}
	args = append(args, t.cfg.Args...)
	args = append(args, runPaths(policies, data)...)
	return t.Launch(ctx, "opa ext_authz server", addr, opa.Command(context.Background(), args...))
}

// Stop stops OPA, whose decision logger flushes at its stop, then takes the decision log
// account.
func (t *extAuthz) Stop(ctx context.Context) error {
	err := t.ExtAuthzServer.Stop(ctx)
	t.logging.finish()
	return err
}

func (t *extAuthz) Info() kinds.Info {
	info := t.BaseInfo("opa", version.Version)
	if info.PID != 0 { // a server authzbench started
		info.LogLevel = t.Common().ServerLogLevel()
	}
	info.DecisionLogs = t.logging.info()
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
