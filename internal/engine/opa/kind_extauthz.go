package opa

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/open-policy-agent/opa/v1/version"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.RegisterExtAuthz(kinds.ExtAuthzKind{Name: "opa/extauthz", Engine: "opa", Order: 35, Launch: launchExtAuthz,
		Version: func() string { return version.Version }, LogLevel: true})
}

// launchExtAuthz starts OPA as Envoy reaches it through OPA-Envoy, Envoy's ext_authz Check over
// gRPC: the OPA linked into authzbench (`opa run --server`) with authzbench's ext_authz plugin
// (PluginName) serving the workload's decision on addr, and OPA's REST API on apiAddr, as it
// listens beside OPA-Envoy. With a url, opa/extauthz measures a running ext_authz server,
// OPA-Envoy's included, and launches nothing.
func launchExtAuthz(ctx context.Context, s *kinds.ExtAuthzServer, w *workload.Workload, addr, apiAddr string) error {
	_, policies, data, err := workloadFiles(ctx, s.Common(), w)
	if err != nil {
		return err
	}
	opa, err := Linked()
	if err != nil {
		return err
	}
	path := strings.ReplaceAll(strings.TrimPrefix(w.Query, "data."), ".", "/")
	args := []string{"run", "--server", "--addr", apiAddr, "--log-level", s.Common().ServerLogLevel(),
		"--set", "plugins." + PluginName + ".addr=" + addr,
		"--set", "plugins." + PluginName + ".path=" + path}
	if w.RegoV0 {
		args = append(args, "--v0-compatible")
	}
	if f := s.LaunchTLS(); f != nil {
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
	args = append(args, s.Args()...)
	args = append(args, runPaths(policies, data)...)
	return s.Launch(ctx, "opa ext_authz server", addr, opa.Command(context.Background(), args...))
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
