// Package opa registers the Open Policy Agent as an engine: Rego policies, JSON input
// documents, answers from OPA's data API. authzbench links OPA itself (the in-process engine,
// and `authzbench opa run` for its server), and everything that knows OPA's runtime is here:
// its target kinds (opa/inproc, opa/wasm, opa/cli, opa/server, opa/extauthz, one file each,
// built on internal/kinds' generic ones), how to run its command line (Program; the command
// tree itself is opacli, which authzbench-opa links alone), its ext_authz plugin, its profiler
// (engine.Profiler), users' Rego files and bundles (userfiles.go, bundle.go), its decision logs
// read for replay (opalog) and its decisions of a replayed one (engine.Redecider).
package opa

import (
	"github.com/open-policy-agent/opa/v1/version"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// Engine is OPA, as registered.
var Engine engine.Engine = opa{}

func init() { engine.Register(Engine) }

type opa struct{}

func (opa) Name() string        { return "opa" }
func (opa) Languages() []string { return []string{"Rego"} }

// Version is the OPA linked into authzbench; a CLI or server run records the one it ran.
func (opa) Version() string { return version.Version }

func (opa) Written(w *workload.Workload) bool { return w.HasRego() }

// Request is the input document, the value of "input".
func (opa) Request(in workload.Input) []byte { return in.JSON }
func (opa) Source(in workload.Input) string  { return in.Source }

// HealthPath is OPA's health API, asked to answer only once the bundles its bundle plugin
// downloads are activated: without ?bundles it answers while they still load, and a bundle's
// activation would be timed as part of the load. A server given no bundle plugin answers it as
// the plain /health.
func (opa) HealthPath() string { return "/health?bundles" }

// Answer is the data API's {"result": ...}: a boolean or an object with a boolean "allow".
func (opa) Answer() engine.Answer {
	return engine.Answer{Field: "result", AllowBody: `{"result":true}`, DenyBody: `{"result":false}`}
}

// Dialect is "v0" for Rego in OPA's v0 syntax, which every OPA target then parses as
// --v0-compatible does.
func (opa) Dialect(w *workload.Workload) string {
	if regoV0(w) {
		return "v0"
	}
	return ""
}

// Query is the decision a running OPA is asked for (data.authz.allow).
func (opa) Query(w *workload.Workload) string { return w.Query }
