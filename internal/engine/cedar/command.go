package cedar

import (
	"github.com/authzbench/authzbench/internal/cedarserver"
	"github.com/authzbench/authzbench/internal/engine"
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
