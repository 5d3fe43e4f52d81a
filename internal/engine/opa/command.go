package opa

import (
	"io"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/engine/opa/opacli"
)

// OPA's own command line runs inside authzbench ("authzbench opa eval ..."): opa/cli and
// opa/server start it. opacli stays free of the registry, which links every engine's
// workloads: authzbench-opa links opacli alone and must start as fast as the opa binary.
func init() {
	engine.RegisterCommand(engine.Command{
		Arg:   opacli.Arg,
		Use:   opacli.Arg + " [opa arguments]",
		Short: "Run OPA's own command line, linked into authzbench (opa eval, opa run, opa bench ...)",
		Long: `authzbench links in OPA's command tree, so nothing has to be installed to run it:
'authzbench opa eval', 'authzbench opa run --server' and 'authzbench opa bench' behave exactly
as the opa binary of the linked version does. The opa/cli and opa/server targets run it.`,
		Example: `  authzbench opa version
  authzbench opa eval --data policy.rego --stdin-input 'data.authz.allow' < input.json`,
		Main: func(args []string, _ io.Writer) int { return opacli.Main(args) },
	})
}
