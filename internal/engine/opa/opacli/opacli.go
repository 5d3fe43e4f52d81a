// Package opacli links OPA's own command tree (opa eval, opa run, opa bench ...) into
// authzbench, so the CLI and server modes run the real OPA without anything to install.
//
// In authzbench, OPA runs with authzbench's Envoy ext_authz plugin registered (engine/opa, its
// parent, registers it when linked), as OPA-Envoy's opa binary runs with its own: configured with --set
// plugins.<name>.addr=..., it serves Envoy's gRPC Check API beside OPA's REST API. The slim
// authzbench-opa links OPA alone, without it: opa/cli needs no plugin, and each of its processes
// would pay the plugin's imports' start-up.
//
// authzbench starts OPA by executing itself with "opa" as its first argument; test binaries do
// the same through engine.DispatchIfAsked in their TestMain (engine/opa registers it).
package opacli

import (
	"errors"

	opacmd "github.com/open-policy-agent/opa/cmd"
)

// Arg is the first argument that turns an authzbench (or test) process into OPA.
const Arg = "opa"

// Command is the slim program that is OPA's command line and no more (cmd/authzbench-opa). A
// process of it starts in about the time the opa binary does, where authzbench, which links
// every engine, pays all of their package inits first: 40-44 ms an `opa eval` against 13 ms
// (docs/benchmarks.md), which opa/cli, one process a decision, would report as OPA's.
const Command = "authzbench-opa"

// Main runs OPA's command line with args (without the leading "opa") and returns its exit code.
func Main(args []string) int {
	root := opacmd.RootCommand
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		var exit *opacmd.ExitError
		if errors.As(err, &exit) {
			return exit.Exit
		}
		return 1
	}
	return 0
}
