// Package casbin is Casbin inside authzbench, the whole of it: the engine as the registry knows
// it, its two target kinds (casbin/inproc, a SyncedEnforcer in authzbench's own process as a Go
// service embeds one; casbin/server, a thin HTTP server of ours, "authzbench casbin-server",
// since Casbin ships none as a Go module), its versions of the built-in workloads (nop, rbac,
// rbac-data-<N>, the rule-count families and api), and the files Casbin's users keep (a model
// .conf, a policy .csv, and requests with their expected decisions).
//
// Everything here happens before the clock except the Enforce call on a request decoded
// beforehand, and a look at its answer. Nothing outside this package names Casbin but the one
// import line of internal/engine/all.
package casbin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	casbinv3 "github.com/casbin/casbin/v3"
	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/buildinfo"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Name is Casbin's name in target kinds and results, and the key of its version of a workload
// (workload.Workload.Versions) and of its requests (workload.Input.Requests).
const Name = "casbin"

// Registered is Casbin as the engine registry knows it.
var Registered engine.Engine = registered{}

func init() { engine.Register(Registered) }

type registered struct{}

func (registered) Name() string        { return Name }
func (registered) Languages() []string { return []string{"Casbin"} }

// Version is the Casbin module linked in; "unknown" where the binary carries no module
// versions, as test binaries do.
func (registered) Version() string { return Version() }

// Version is the version of github.com/casbin/casbin/v3 linked into this binary.
func Version() string {
	if v := buildinfo.ModuleVersion("github.com/casbin/casbin/v3"); v != "" {
		return v
	}
	return "unknown"
}

// Written: the user's Casbin files, or a built-in's Casbin version (added as it was built).
func (registered) Written(w *workload.Workload) bool { return w.VersionFor(Name) != nil }

// Request is the input's Casbin request: a JSON array of its values (ParseRequest).
func (registered) Request(in workload.Input) []byte { return in.Requests[Name].Body }

// Source is the request's line in the user's files, the input's otherwise.
func (registered) Source(in workload.Input) string {
	if s := in.Requests[Name].Source; s != "" {
		return s
	}
	return in.Source
}

// HealthPath is the health path of authzbench's Casbin server.
func (registered) HealthPath() string { return "/health" }

// Answer reads the Casbin server's answers: {"allow":true} or {"allow":false}, byte for byte,
// or {"error": "..."} for an Enforce that failed.
func (registered) Answer() engine.Answer {
	return engine.Answer{Field: "allow", AllowBody: allowBody, DenyBody: denyBody, Read: readAnswer}
}

const (
	allowBody = `{"allow":true}`
	denyBody  = `{"allow":false}`
)

func readAnswer(doc *fastjson.Value) verify.Outcome {
	if e := doc.Get("error"); e != nil {
		return verify.Outcome{Kind: verify.EvalFailed, Err: errors.New("casbin enforce: " + string(e.GetStringBytes()))}
	}
	switch v := doc.Get("allow"); {
	case v == nil:
		return verify.Outcome{Kind: verify.Malformed, Err: errors.New(`no "allow" in the body`)}
	case v.Type() == fastjson.TypeTrue:
		return verify.Outcome{Kind: verify.Decided, Allow: true}
	case v.Type() == fastjson.TypeFalse:
		return verify.Outcome{Kind: verify.Decided, Allow: false}
	}
	return verify.Outcome{Kind: verify.NotBoolean}
}

// Handed says what the Casbin version of w is handed ready-made that Rego computes
// (engine.Handed): the ‡ rows.
func (registered) Handed(w *workload.Workload) string {
	if v := w.VersionFor(Name); v != nil {
		return v.Differences
	}
	return ""
}

// WhyNot says why w has no Casbin version (engine.Explained).
func (registered) WhyNot(w *workload.Workload) string { return whyNot(w) }

// FilesHint says how users give their Casbin files (engine.FilesHinted).
func (registered) FilesHint() (flags, keys string) {
	return "--policy model.conf --data policy.csv --inputs requests.csv (a request a line, its expected decision last: alice, data1, read, true) or requests.jsonl",
		"policy: model.conf, data: policy.csv, inputs: requests.csv (or requests.jsonl)"
}

// Loaded is a workload loaded into Casbin: the files it came from, the enforcer every
// casbin/inproc target of the run shares (as the goroutines of a service share one), and every
// input's request decoded for Enforce, in input order. Built once per run, before the clock,
// through the run's engine.Prepared.
type Loaded struct {
	Files    Files
	Enforcer *casbinv3.SyncedEnforcer
	Requests [][]any
	// UserFiles says Files are the user's own, on disk under their names; a built-in's are
	// text in memory, written out for a server to read.
	UserFiles bool
}

// Load returns the workload loaded, once per run.
func Load(ctx context.Context, p *engine.Prepared, w *workload.Workload) (*Loaded, error) {
	v, err := engine.Prepare(ctx, p, Registered, w)
	if err != nil {
		return nil, err
	}
	return v.(*Loaded), nil
}

// Prepare loads the workload's model and policy into an enforcer and decodes every input's
// request (engine.Preparer). Loading here, whichever mode runs, has Casbin refuse a model, a
// policy line or a request, naming its file and line, before any target starts.
func (registered) Prepare(_ context.Context, w *workload.Workload) (any, error) {
	v := w.VersionFor(Name)
	if v == nil {
		return nil, noVersion(w)
	}
	l := &Loaded{}
	var err error
	if path := v.Files[FileModel]; path != "" {
		l.UserFiles = true
		if l.Files, err = ReadFiles(path, v.Files[FilePolicy]); err != nil {
			return nil, err
		}
	} else if l.Files, err = builtinFiles(w); err != nil {
		return nil, fmt.Errorf("workload %s: %w", w.Name, err)
	}
	if l.Enforcer, err = NewEnforcer(l.Files); err != nil {
		return nil, err
	}
	tokens := RequestTokens(l.Enforcer.GetModel())
	l.Requests = make([][]any, len(w.Inputs))
	for i, in := range w.Inputs {
		where := Registered.Source(in)
		if where == "" {
			where = fmt.Sprintf("workload %s input %d", w.Name, i+1)
		}
		body := in.Requests[Name].Body
		if body == nil {
			return nil, fmt.Errorf("%s: no Casbin request", where)
		}
		if l.Requests[i], err = ParseRequest(body); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if len(l.Requests[i]) != len(tokens) {
			return nil, fmt.Errorf("%s: casbin refuses the request: %w", where, requestSizeError(len(l.Requests[i]), tokens))
		}
	}
	return l, nil
}

// Decide is one Enforce of a decoded request, as a decision: Casbin's error (a matcher that
// fails on the request's values) is an evaluation error, never a deny.
func (l *Loaded) Decide(i int) verify.Outcome {
	allowed, err := l.Enforcer.Enforce(l.Requests[i]...)
	if err != nil {
		return verify.Outcome{Kind: verify.EvalFailed, Err: fmt.Errorf("casbin enforce: %w", err)}
	}
	return verify.Outcome{Kind: verify.Decided, Allow: allowed}
}

// The parts of the user's files, as workload.Version.Files names them.
const (
	FileModel    = "model"
	FilePolicy   = "policy"
	FileRequests = "requests"
)

func noVersion(w *workload.Workload) error {
	return workload.NewSettingError("policy", func(n func(string) string) string {
		why := ""
		if s := whyNot(w); s != "" {
			why = " (" + s + ")"
		}
		return fmt.Sprintf("workload %s has no Casbin version%s; the casbin targets run %s, the rbac-data-<N> and rules-<kind>-<N> families, or your own files with %s model.conf, %s policy.csv and %s requests.csv",
			w.Name, why, strings.Join(workload.NamesWhere(Registered.Written), ", "), n("policy"), n("data"), n("inputs"))
	})
}
