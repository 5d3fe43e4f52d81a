package kinds

import (
	"context"
	"errors"
	"fmt"

	"github.com/authzbench/authzbench/internal/cedarserver"
	enginecedar "github.com/authzbench/authzbench/internal/engine/cedar"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	Register(Kind{Name: "cedar/server", Engine: "cedar", Placement: LaunchedServer, LoadsPolicy: true, Order: 50,
		NewConfig: func() Config { return &CedarServerConfig{} },
		New: func(common Common, c Config) Target {
			cfg := c.(*CedarServerConfig)
			return &cedarServer{served{common: common, engine: enginecedar.Engine, cfg: &cfg.ServerConfig, http2: &cfg.HTTP2Config, replicas: cfg.Replicas}}
		}})
}

// CedarServerConfig is cedar/server's settings: a running server to measure, or how to start
// `authzbench cedar-server`.
type CedarServerConfig struct {
	ServerConfig `yaml:",inline"`
	HTTP2Config  `yaml:",inline"`
	Replication  `yaml:",inline"`
}

// Check refuses mtls_authz: the Cedar server has no authorization layer of its own in front of
// its decisions, as OPA's system policy is, so there is nothing equivalent to measure.
func (c *CedarServerConfig) Check() error {
	return errors.Join(append([]error{c.ServerConfig.check(cedarRefusesMTLSAuthz), c.Replication.check(&c.ServerConfig), replicasOverHTTP2(c.Replicas, c.HTTP2Config)}, c.HTTP2Config.check()...)...)
}

func cedarRefusesMTLSAuthz(n func(string) string) string {
	return fmt.Sprintf("%s is not supported by cedar/server: it has no authorization policy in front of its decisions, as OPA's --authorization=basic; use %s", n("mtls_authz"), n("mtls"))
}

// cedarServer drives Cedar served over HTTP: POST /v1/is_authorized with the Cedar request
// document. By default it starts `authzbench cedar-server` (cedar-go behind net/http, in its own
// process) on a loopback port with the workload's policies, entities and schema; with
// a URL it measures a running server that speaks the same API.
type cedarServer struct {
	served
}

func (t *cedarServer) Start(ctx context.Context, w *workload.Workload) error {
	bodies := make([][]byte, len(w.Inputs))
	for i, in := range w.Inputs {
		if bodies[i] = t.engine.Request(in); bodies[i] == nil {
			return fmt.Errorf("workload %s input %d has no Cedar request", w.Name, i+1)
		}
	}
	return t.start(ctx, cedarserver.Path, bodies, func(ctx context.Context) error { return t.launch(ctx, w) })
}

func (t *cedarServer) launch(ctx context.Context, w *workload.Workload) error {
	addr, err := t.cfg.listenAddr()
	if err != nil {
		return err
	}
	args := []string{"--addr", addr}
	if f := t.tlsFiles; f != nil {
		args = append(args, "--tls-cert-file", f.ServerCert, "--tls-private-key-file", f.ServerKey)
		if t.cfg.Mode() >= MutualTLS {
			args = append(args, "--tls-ca-cert-file", f.CACert)
		}
	} else if t.speaksHTTP2() {
		args = append(args, "--h2c") // over TLS it offers h2 by ALPN anyway
	}
	cmd, err := cedarServerCommand(t.common, w, append(args, t.cfg.Args...)...)
	if err != nil {
		return err
	}
	return t.run(ctx, "cedar server", addr, cmd)
}

func (t *cedarServer) Worker() Decider { return t.worker(newAnswerReader(t.engine.Answer())) }

func (t *cedarServer) Info() Info { return t.info("cedar", cedarVersion()) }
