package cedar

import (
	"context"
	"fmt"

	"github.com/authzbench/authzbench/internal/engine/cedar/cedarserver"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.Register(kinds.Kind{Name: "cedar/server", Engine: "cedar", Placement: kinds.LaunchedServer, LoadsPolicy: true, Order: 50,
		NewConfig: func() kinds.Config { return &ServerConfig{} },
		New: func(common kinds.Common, c kinds.Config) kinds.Target {
			cfg := c.(*ServerConfig)
			return &server{Server: kinds.NewServer(common, Engine, &cfg.ServerConfig, kinds.WithHTTP2(&cfg.HTTP2Config), kinds.WithReplicas(cfg.Replicas)),
				cfg: &cfg.ServerConfig, replicas: cfg.Replicas}
		}})
}

// ServerConfig is cedar/server's settings: a running server to measure, or how to start
// `authzbench cedar-server`.
type ServerConfig struct {
	kinds.ServerConfig `yaml:",inline"`
	kinds.HTTP2Config  `yaml:",inline"`
	kinds.Replication  `yaml:",inline"`
}

// Check refuses mtls_authz: the Cedar server has no authorization layer of its own in front of
// its decisions, as OPA's system policy is, so there is nothing equivalent to measure.
func (c *ServerConfig) Check() error {
	return kinds.CheckServed(&c.ServerConfig, &c.HTTP2Config, c.Replication, refusesMTLSAuthz)
}

func refusesMTLSAuthz(n func(string) string) string {
	return fmt.Sprintf("%s is not supported by cedar/server: it has no authorization policy in front of its decisions, as OPA's --authorization=basic; use %s", n("mtls_authz"), n("mtls"))
}

// server drives Cedar served over HTTP: POST /v1/is_authorized with the Cedar request
// document. By default it starts `authzbench cedar-server` (cedar-go behind net/http, in its own
// process) on a loopback port with the workload's policies, entities and schema; with
// a URL it measures a running server that speaks the same API.
type server struct {
	*kinds.Server
	cfg      *kinds.ServerConfig
	replicas int
}

func (t *server) Start(ctx context.Context, w *workload.Workload) error {
	bodies := make([][]byte, len(w.Inputs))
	for i, in := range w.Inputs {
		if bodies[i] = Engine.Request(in); bodies[i] == nil {
			return fmt.Errorf("workload %s input %d has no Cedar request", w.Name, i+1)
		}
	}
	return t.StartAt(ctx, cedarserver.Path, bodies, func(ctx context.Context) error { return t.launch(ctx, w) })
}

func (t *server) launch(ctx context.Context, w *workload.Workload) error {
	addr, err := t.cfg.ListenAddr()
	if err != nil {
		return err
	}
	args := []string{"--addr", addr}
	if f := t.LaunchTLS(); f != nil {
		args = append(args, "--tls-cert-file", f.Cert, "--tls-private-key-file", f.Key)
		if f.ClientCA != "" {
			args = append(args, "--tls-ca-cert-file", f.ClientCA)
		}
	} else if t.SpeaksHTTP2() {
		args = append(args, "--h2c") // over TLS it offers h2 by ALPN anyway
	}
	cmd, err := serverCommand(t.Common(), w, append(args, t.cfg.Args...)...)
	if err != nil {
		return err
	}
	return t.Launch(ctx, "cedar server", addr, cmd)
}

func (t *server) Worker() kinds.Decider { return t.HTTPWorker() }

func (t *server) Info() kinds.Info { return t.BaseInfo("cedar", kindVersion()) }
