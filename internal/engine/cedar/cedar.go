// Package cedar is Cedar inside authzbench: the engine as registered (Cedar policies, entities
// and schema, Cedar requests, answers from authzbench's Cedar server, {"decision":
// "allow"|"deny", ...}) and the target kinds that run it, one file each: cedar/inproc (cedar-go
// in this process), cedar/server (authzbench's Cedar server over HTTP) and cedar/extauthz (the
// same server behind Envoy's ext_authz gRPC API). cedar-go itself is wrapped by cedarengine;
// the server, which Cedar does not ship, is cedarserver's.
package cedar

import (
	"errors"

	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/buildinfo"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Engine is Cedar, as registered.
var Engine engine.Engine = cedar{}

func init() { engine.Register(Engine) }

type cedar struct{}

func (cedar) Name() string { return Name }

// Package names the library whose version Version is.
func (cedar) Package() string     { return "cedar-go" }
func (cedar) Languages() []string { return []string{"Cedar"} }

// Version is the cedar-go module linked in, from the binary's module information (cedar-go
// has no version constant of its own); "unknown" where the binary carries none, as test
// binaries do.
func (cedar) Version() string {
	if v := buildinfo.ModuleVersion("github.com/cedar-policy/cedar-go"); v != "" {
		return v
	}
	return "unknown"
}

// Written: a built-in's Cedar version, or the user's Cedar files.
func (cedar) Written(w *workload.Workload) bool { return filesOf(w) != nil }

// Request is the Cedar request document the cedar targets read.
func (cedar) Request(in workload.Input) []byte { return in.Requests[Name].Body }

// Source is the Cedar request's line when the user gave both versions, the input's otherwise.
func (cedar) Source(in workload.Input) string {
	if s := in.Requests[Name].Source; s != "" {
		return s
	}
	return in.Source
}

// HealthPath is the health path of authzbench's Cedar server.
func (cedar) HealthPath() string { return "/health" }

// Answer reads the Cedar server's {"decision": ..., "reasons": [...], "errors": [...]}. An
// allow names the policies that allowed, so only a deny no policy had a word on has one exact
// form; AllowBody stays empty.
func (cedar) Answer() engine.Answer {
	return engine.Answer{Field: "decision", DenyBody: `{"decision":"deny","reasons":[],"errors":[]}`, Read: readAnswer}
}

func readAnswer(doc *fastjson.Value) verify.Outcome {
	// The Cedar server always answers with a decision; a body without one is not its answer.
	dv := doc.Get("decision")
	if dv == nil {
		return verify.Outcome{Kind: verify.Malformed, Err: errors.New(`no "decision" in the body`)}
	}
	if errs := doc.GetArray("errors"); len(errs) > 0 {
		// Policies that failed to evaluate were skipped, so the decision is not the policies'
		// answer: an evaluation error, as it is in process.
		return verify.Outcome{Kind: verify.EvalFailed, Err: errors.New("cedar evaluation error: " + string(errs[0].GetStringBytes()))}
	}
	switch string(dv.GetStringBytes()) {
	case "allow":
		return verify.Outcome{Kind: verify.Decided, Allow: true}
	case "deny":
		return verify.Outcome{Kind: verify.Decided, Allow: false}
	}
	return verify.Outcome{Kind: verify.NotBoolean}
}

// Handed says what a built-in workload's Cedar version is handed ready-made because Cedar
// cannot compute it (a JWT signature check, a division).
func (cedar) Handed(w *workload.Workload) string {
	if v := w.VersionFor(Name); v != nil {
		return v.Differences
	}
	return ""
}
