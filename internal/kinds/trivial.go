package kinds

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/authzbench/authzbench/internal/extauthz"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	Register(Kind{Name: "trivial/server", Engine: "trivial", Placement: LaunchedServer, Internal: true, Order: 90,
		NewConfig: func() Config { return &TrivialConfig{} },
		New: func(common Common, c Config) Target {
			return &trivialServer{served{common: common, cfg: &c.(*TrivialConfig).ServerConfig}}
		}})
}

// TrivialConfig is trivial/server's settings: those of any served kind, which calibrate leaves
// at their defaults (a server of its own on a free port).
type TrivialConfig struct {
	ServerConfig `yaml:",inline"`
}

// trivialPath is where the trivial server is asked: an OPA decision path, so its answer reads
// as OPA's does, and the same path wrk is pointed at.
const trivialPath = "/v1/data/authzbench/nop/allow"

// trivialServer drives the server that answers every request with a fixed allow and does
// nothing else (sut.ServeTrivial), started in a process of its own. It is what `authzbench
// calibrate` measures, so its figures are the generator's ceiling, not a server's. It is an
// internal kind: it decides nothing, and answers allow to every input.
type trivialServer struct {
	served
}

func (t *trivialServer) Start(ctx context.Context, w *workload.Workload) error {
	bodies := make([][]byte, len(w.Inputs))
	for i, in := range w.Inputs {
		bodies[i] = append(append([]byte(`{"input":`), in.JSON...), '}')
	}
	return t.start(ctx, trivialPath, bodies, func(ctx context.Context) error {
		addr, err := t.cfg.listenAddr()
		if err != nil {
			return err
		}
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find own executable to serve the trivial server: %w", err)
		}
		return t.run(ctx, "trivial server", addr, exec.Command(self, sut.TrivialArg, addr))
	})
}

func (t *trivialServer) Worker() Decider { return t.worker(newDecisionReader("result")) }

func (t *trivialServer) Info() Info { return t.info("trivial", "") }

func init() {
	sut.RegisterTrivial(extauthz.TrivialArg, extauthz.ServeTrivial)
	Register(Kind{Name: "trivial/extauthz", Engine: "trivial", Placement: LaunchedServer, Internal: true, Order: 91,
		NewConfig: func() Config { return &ExtAuthzConfig{} },
		New: func(common Common, c Config) Target {
			return &trivialExtAuthz{extAuthzServed{common: common, cfg: c.(*ExtAuthzConfig)}}
		}})
}

// trivialExtAuthz drives the ext_authz server with an engine that allows every check without
// looking at it (extauthz.ServeTrivial), started in a process of its own: what `authzbench
// calibrate --grpc` measures, the gRPC client's ceiling. Like trivial/server it decides nothing;
// it runs the nop workload, whose every input is allowed.
type trivialExtAuthz struct {
	extAuthzServed
}

func (t *trivialExtAuthz) Start(ctx context.Context, w *workload.Workload) error {
	if t.cfg.Mode() != Plain || t.cfg.URL != "" {
		// Its server takes no certificates, and calibrate measures it on loopback in clear.
		return errors.New("trivial/extauthz serves ext_authz in clear on a server of its own: no TLS and no url")
	}
	return t.start(ctx, w, func(ctx context.Context, addr string) error {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find own executable to serve the trivial ext_authz server: %w", err)
		}
		return t.run(ctx, "trivial ext_authz server", addr, exec.Command(self, extauthz.TrivialArg, addr))
	})
}

func (t *trivialExtAuthz) Info() Info { return t.info("trivial", "") }
