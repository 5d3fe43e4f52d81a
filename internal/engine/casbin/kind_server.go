package casbin

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.Register(kinds.Kind{Name: "casbin/server", Engine: Name, Placement: kinds.LaunchedServer, LoadsPolicy: true, Order: 59,
		NewConfig: func() kinds.Config { return &CasbinServerConfig{} },
		New: func(common kinds.Common, c kinds.Config) kinds.Target {
			cfg := c.(*CasbinServerConfig)
			return &casbinServer{Server: kinds.NewServer(common, Registered, &cfg.ServerConfig), cfg: &cfg.ServerConfig}
		}})
}

// CasbinServerConfig is casbin/server's settings: a running server to measure, or how to start
// `authzbench casbin-server`.
type CasbinServerConfig struct {
	kinds.ServerConfig `yaml:",inline"`
}

// Check refuses mtls_authz, which has nothing in front of Casbin's decisions to stand for, and
// TLS for the server it starts, which the Casbin server does not serve.
func (c *CasbinServerConfig) Check() error {
	errs := []error{c.ServerConfig.CheckRefusing(func(n func(string) string) string {
		return fmt.Sprintf("%s is not supported by casbin/server: the Casbin server has no authorization policy in front of its decisions, as OPA's --authorization=basic", n("mtls_authz"))
	})}
	if key := c.TLSServer.ModeKey(); key != "" && key != "mtls_authz" {
		errs = append(errs, kinds.NewOptionError(key, func(n func(string) string) string {
			return fmt.Sprintf("%s: casbin/server starts the Casbin server in clear; measure one you run over TLS with %s", n(key), n("url"))
		}))
	}
	return errors.Join(errs...)
}

// casbinServer drives the Casbin server over HTTP: by default `authzbench casbin-server` on a
// free loopback port with the workload's model and policy (the user's own files, or a
// built-in's written under the run's temporary directory), probed on /health and stopped by
// PID; with a URL, a running server that speaks the same API.
type casbinServer struct {
	*kinds.Server
	cfg    *kinds.ServerConfig
	loaded *Loaded
}

func (t *casbinServer) Start(ctx context.Context, w *workload.Workload) error {
	// Loaded here too, so that what Casbin refuses is refused before a server starts, and a
	// request the model cannot take before any is sent.
	l, err := Load(ctx, t.Common().Prepared, w)
	if err != nil {
		return err
	}
	t.loaded = l
	return t.StartHTTP(ctx, t.launch, func(context.Context) ([][]byte, []string, error) {
		path := ServerPath
		if u, err := url.Parse(t.cfg.URL); err == nil && t.cfg.URL != "" && u.Path != "" && u.Path != "/" {
			path = u.RequestURI() // a URL's own path replaces the engine's endpoint
		}
		bodies := make([][]byte, len(w.Inputs))
		paths := make([]string, len(w.Inputs))
		for i, in := range w.Inputs {
			bodies[i], paths[i] = Registered.Request(in), path
		}
		return bodies, paths, nil
	})
}

// launch starts authzbench's own executable as the Casbin server on the model and policy the
// run loaded.
func (t *casbinServer) launch(ctx context.Context) error {
	addr, err := t.cfg.ListenAddr()
	if err != nil {
		return err
	}
	modelPath, policyPath, err := t.files()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable to serve Casbin: %w", err)
	}
	args := []string{ServerArg, "--model", modelPath, "--addr", addr}
	if policyPath != "" {
		args = append(args, "--policy", policyPath)
	}
	return t.Launch(ctx, "casbin server", addr, exec.Command(self, append(args, t.cfg.Args...)...))
}

// files are the model and policy the server reads: the user's own, or a built-in's, written
// under the run's temporary directory.
func (t *casbinServer) files() (modelPath, policyPath string, err error) {
	f := t.loaded.Files
	if t.loaded.UserFiles {
		return f.ModelName, f.PolicyName, nil
	}
	dir, err := os.MkdirTemp(t.Common().TempDir, "casbin-")
	if err != nil {
		return "", "", fmt.Errorf("write the Casbin files: %w", err)
	}
	modelPath, policyPath = filepath.Join(dir, f.ModelName), filepath.Join(dir, f.PolicyName)
	if err := os.WriteFile(modelPath, []byte(f.Model), 0o644); err != nil {
		return "", "", fmt.Errorf("write the Casbin files: %w", err)
	}
	if err := os.WriteFile(policyPath, []byte(f.Policy), 0o644); err != nil {
		return "", "", fmt.Errorf("write the Casbin files: %w", err)
	}
	return modelPath, policyPath, nil
}

func (t *casbinServer) Worker() kinds.Decider { return t.HTTPWorker() }

func (t *casbinServer) Info() kinds.Info { return t.BaseInfo(Name, "casbin "+Version()) }
