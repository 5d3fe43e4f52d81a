package cedar

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/engine/cedar/cedarserver"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// Cedar ships no server: "authzbench cedar-server" is ours, and cedar/server starts it.
func init() {
	engine.RegisterCommand(engine.Command{
		Arg:   cedarserver.Arg,
		Use:   cedarserver.Arg + " --policies FILE [--entities FILE] [--schema FILE] [--addr HOST:PORT]",
		Short: "Serve a Cedar policy set over HTTP (Cedar ships no server; the cedar/server target runs this)",
		Long: `Cedar ships no server, so authzbench serves cedar-go itself, in its own process, over a small
JSON API (docs/cedar-server.md): POST /v1/is_authorized with principal, action, resource,
context and optional per-request entities, answered with the decision and the ids of the
policies that determined it. The cedar/server target starts it; run it yourself to put your
own load tool in front of Cedar.`,
		Example: `  authzbench cedar-server --policies policy.cedar --entities entities.json --schema app.cedarschema
  curl -s localhost:8181/v1/is_authorized -d '{"principal":{"type":"User","id":"alice"},
    "action":{"type":"Action","id":"view"},"resource":{"type":"Photo","id":"p1"},"context":{}}'`,
		Main: cedarserver.Main,
	})
}

// serverCommand is the command line of authzbench's Cedar server serving the workload's Cedar
// files with extra arguments (its addresses, TLS). The workload is loaded in this process first
// (once per run, shared with the other Cedar targets), so a policy or schema error is reported
// with its position before any server starts.
func serverCommand(common kinds.Common, w *workload.Workload, extra ...string) (*exec.Cmd, error) {
	if _, err := Load(context.Background(), common.Prepared, w); err != nil {
		return nil, err
	}
	paths, err := Paths(common.TempDir, w)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable to serve Cedar: %w", err)
	}
	args := []string{cedarserver.Arg}
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
	return exec.Command(self, append(args, extra...)...), nil
}
