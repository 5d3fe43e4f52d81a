// Package engine is the registry of the policy engines authzbench measures (OPA, Cedar, ...),
// in the spirit of database/sql's drivers: each engine's package registers it from its init
// function (Register), the program links it with one blank import, and the rest of authzbench
// asks the registered value what it needs to know (the language a workload is written in for
// it, its requests, how its server's answers read, its version) instead of comparing names.
//
// What only some engines have is a named optional interface here (Preparer, Handed, Dialect,
// Queried, GRPCHealth, FilesHinted, Explained, Exported, Profiler, Redecider, Writer, WriteChecker, WriteResolver, PolicyWriter), checked for where
// it matters, never an anonymous type assertion.
//
// This package holds no engine and decides nothing; target kinds, which run an engine in one
// mode or another, are each engine's own, built on internal/kinds.
package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Engine is one policy engine as the rest of authzbench sees it.
type Engine interface {
	// Name is the engine's name in target kinds and results: "opa", "cedar".
	Name() string
	// Languages are the policy languages it reads, as users call them ("Rego", "Cedar"); the
	// first is the one messages name.
	Languages() []string
	// Version is the engine's version linked into authzbench, for the result's environment.
	Version() string
	// Written reports whether the workload is written in the engine's language, so that a
	// target of the engine can load it.
	Written(w *workload.Workload) bool
	// Request is the input as the engine is asked it (OPA's input document, a Cedar request),
	// nil when the input has none for it.
	Request(in workload.Input) []byte
	// Source is the file and line the engine's version of the input came from, for messages;
	// empty for a built-in workload.
	Source(in workload.Input) string
	// HealthPath is the path its server answers readiness on: "/health" for OPA's; empty for
	// a server that answers it on gRPC health alone (GRPCHealth).
	HealthPath() string
	// Answer says how its server's answers read as decisions.
	Answer() Answer
}

// Answer is how the answers of an engine's server read as decisions: a JSON object whose
// member Field holds the decision. A body equal to AllowBody or DenyBody (the one or two
// answers nearly every response is, byte for byte, without a final newline) is that decision,
// read without a parser; empty ones are compared with no body.
type Answer struct {
	Field               string
	AllowBody, DenyBody string
	// Read reads the decision from the whole answer document; nil reads Field as a boolean or
	// an object with a boolean "allow" (OPA's data API). An answer Read finds to be no decision
	// document is verify.Malformed, its Err saying why (the reader quotes the body after it).
	Read func(doc *fastjson.Value) verify.Outcome
}

// Handed is implemented by an engine that is handed, ready-made, parts of a built-in workload
// it cannot compute (Cedar is given a JWT's verdict): the ‡ rows of a comparison.
type Handed interface {
	// Handed says what the engine's version of w is handed; empty when it does the same work.
	Handed(w *workload.Workload) string
}

// GRPCHealth is implemented by an engine whose server answers readiness on the standard gRPC
// health service (grpc.health.v1.Health/Check) rather than on an HTTP path: its served targets
// probe that.
type GRPCHealth interface {
	// HealthService is the service asked about; empty for the server as a whole.
	HealthService() string
}

// FilesHinted is implemented by an engine that says how users give a workload's version in its
// language, for a run that asks an engine of a workload with none.
type FilesHinted interface {
	// FilesHint names the flags that give it ("--policy validation.yaml") and the keys of a
	// scenario file's workload entry ("policy: validation.yaml").
	FilesHint() (flags, keys string)
}

// Explained is implemented by an engine that says itself why a workload has no version in its
// language (what the workload's rules do that the language cannot), where the workload does not
// say it (Workload.Inexpressible): see WhyNotFor.
type Explained interface {
	// WhyNot says why w has no version for the engine; empty when it has one or the engine
	// has nothing to say.
	WhyNot(w *workload.Workload) string
}

// WhyNotFor says why w has no version for the engine called name: the engine's own words
// (Explained), else the workload's (Inexpressible, by the engine's language); empty when
// neither says.
func WhyNotFor(name string, w *workload.Workload) string {
	if e := For(name); e != nil {
		return WhyNot(e, w)
	}
	return ""
}

// WhyNot is WhyNotFor for the engine e.
func WhyNot(e Engine, w *workload.Workload) string {
	if x, ok := e.(Explained); ok {
		if why := x.WhyNot(w); why != "" {
			return why
		}
	}
	return w.Inexpressible[Language(e)]
}

// Exported is implemented by an engine whose version of a workload is files of its own, beside
// the workload's policy and inputs (Cedar's policies, schema, entities and requests): `authzbench
// workloads show` prints them, and `workloads export` writes them.
type Exported interface {
	// Show prints the engine's version of w, with its first requests; nothing when it has none.
	Show(w *workload.Workload, out io.Writer)
	// Export writes the engine's version of w under dir, as its users' files are read; nothing
	// when it has none.
	Export(w *workload.Workload, dir string) error
}

// Dialect is implemented by an engine whose language has versions a workload chooses between
// (Rego v0 and v1), recorded with every run of it.
type Dialect interface {
	// Dialect names the version w is written in; empty for the engine's default.
	Dialect(w *workload.Workload) string
}

// Queried is implemented by an engine whose server is asked for one decision of its policy by
// name (OPA's data.authz.allow): a running server of it, which has its policy, still needs the
// workload to say which decision to ask for.
type Queried interface {
	// Query is the decision w asks the server for; empty when w names none.
	Query(w *workload.Workload) string
}

// Writer is implemented by an engine whose targets take writes in a run whose world changes
// (--changes builtin): it puts each change of a built-in family's stream, made by the family's
// reference model as a patch of its data (workload.Change), into the engine's own write form,
// which its targets' applier (kinds.Writable) sends: OPA's is the patch itself, for its Data
// API; an engine of tuples writes and deletes the tuples the patch means.
type Writer interface {
	Write(w *workload.Workload, c workload.Change) (json.RawMessage, error)
}

// WriteChecker is implemented by a Writer engine whose targets take a changes file's lines in
// its own write form ("write": a JSON Patch of OPA's data, an update of Cedar's entities, an
// OpenFGA Write's body, a SpiceDB WriteRelationships request): it reads one strictly, before any
// load, so that a bad line is refused naming its file and line.
type WriteChecker interface {
	CheckWrite(form json.RawMessage) error
}

// CheckWriteFor reads form as the engine called name's write; an error when the engine takes
// no writes of its own form (see WriteChecker).
func CheckWriteFor(name string, form json.RawMessage) error {
	if wc, ok := For(name).(WriteChecker); ok {
		return wc.CheckWrite(form)
	}
	return fmt.Errorf("engine %s takes no changes file in its own form yet: give --changes builtin", name)
}

// WriteFor is change c of w's stream in the form of the engine called name; an error when the
// engine takes no built-in changes (see Writer), or c replaces the policy and the engine takes
// no built-in policy replacement (see PolicyWriter).
func WriteFor(name string, w *workload.Workload, c workload.Change) (json.RawMessage, error) {
	if c.Policy != nil {
		if pw, ok := For(name).(PolicyWriter); ok {
			return pw.WritePolicy(w, c)
		}
		var takers []string
		for _, e := range All() {
			if _, ok := e.(PolicyWriter); ok {
				takers = append(takers, e.Name())
			}
		}
		return nil, fmt.Errorf("engine %s takes no built-in policy replacement (engines that do: %s)", name, strings.Join(takers, ", "))
	}
	if wr, ok := For(name).(Writer); ok {
		return wr.Write(w, c)
	}
	return nil, fmt.Errorf("engine %s takes no built-in changes yet", name)
}

// PolicyWriter is implemented by a Writer engine whose targets take a built-in family's policy
// replacements (--changes builtin-policy; workload.Change.Policy): WritePolicy writes the whole
// policy after the change in the engine's own language, as the write its targets apply (OPA: a
// module, put as a policy PUT; Cedar: an update's "policies"; Casbin: a policy to reload),
// checked as the engine would check it, before any load.
type PolicyWriter interface {
	WritePolicy(w *workload.Workload, c workload.Change) (json.RawMessage, error)
}

// WriteResolver is implemented by an engine whose changes-file writes name files of their own
// (OPA's policy replacement names a .rego file): ResolveWrite reads them, relative to dir (the
// changes file's), checks the write against w before any load and returns the form its targets
// apply, the files' texts in it. A form naming no file comes back as it was.
type WriteResolver interface {
	ResolveWrite(w *workload.Workload, form json.RawMessage, dir string) (json.RawMessage, error)
}

// ResolveWriteFor is ResolveWrite of the engine called name; the form as it is when the engine
// names no files in its writes.
func ResolveWriteFor(name string, w *workload.Workload, form json.RawMessage, dir string) (json.RawMessage, error) {
	if r, ok := For(name).(WriteResolver); ok {
		return r.ResolveWrite(w, form, dir)
	}
	return form, nil
}

// Preparer is implemented by an engine that builds something from a workload before any clock
// runs (OPA's compiled query, Cedar's loaded policies and parsed requests), shared by every
// target of the engine: see Prepared.
type Preparer interface {
	// Prepare builds the engine's artefact from w; its error names the file and line at fault.
	Prepare(ctx context.Context, w *workload.Workload) (any, error)
}

var (
	mu      sync.RWMutex
	engines = map[string]Engine{}
)

// Register adds an engine; called from the init function of the engine's package. A second
// engine of the same name, or one without a name, is a programming error: it panics.
func Register(e Engine) {
	mu.Lock()
	defer mu.Unlock()
	if e == nil || e.Name() == "" {
		panic("engine: Register of an engine without a name")
	}
	if _, dup := engines[e.Name()]; dup {
		panic("engine: " + e.Name() + " registered twice")
	}
	engines[e.Name()] = e
}

// Lookup returns the engine called name; the error lists the known ones.
func Lookup(name string) (Engine, error) {
	if e := For(name); e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("unknown engine %q; known: %s", name, strings.Join(Names(), ", "))
}

// For returns the engine called name, nil when none is registered: a target kind that is no
// policy engine (http, trivial) names what answers instead.
func For(name string) Engine {
	mu.RLock()
	defer mu.RUnlock()
	return engines[name]
}

// Names lists the registered engines, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(engines))
	for n := range engines {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// All lists the registered engines, sorted by name.
func All() []Engine {
	var out []Engine
	for _, n := range Names() {
		out = append(out, For(n))
	}
	return out
}

// Versions are the registered engines' versions by name, for the result's environment.
func Versions() map[string]string {
	out := map[string]string{}
	for _, e := range All() {
		name := e.Name()
		if p, ok := e.(Packaged); ok {
			name = p.Package()
		}
		out[name] = e.Version()
	}
	return out
}

// Packaged is implemented by an engine whose version is that of a library with a name of its
// own (Cedar's is cedar-go's): the environment records the version under that name, the one
// reports and their readers (gobench's "cedar-go:", OpenMetrics' cedar_go label) have always
// used.
type Packaged interface {
	Package() string
}

// Language is the language messages name for the engine.
func Language(e Engine) string {
	if l := e.Languages(); len(l) > 0 {
		return l[0]
	}
	return e.Name()
}

// WrittenFor names the language the engine called name reads and reports whether w is written
// in it. A kind that is no policy engine (http) reads the inputs alone: every workload serves.
func WrittenFor(name string, w *workload.Workload) (language string, ok bool) {
	e := For(name)
	if e == nil {
		return "", true
	}
	return Language(e), e.Written(w)
}

// RequestsFor reports whether every input of w carries a request for the engine called name.
// That is all a running server, which already has its policy, needs.
func RequestsFor(name string, w *workload.Workload) bool {
	e := For(name)
	for _, in := range w.Inputs {
		if e != nil && e.Request(in) == nil {
			return false
		}
	}
	return len(w.Inputs) > 0
}

// SourceFor is the file and line the version of in that the engine called name reads came from.
func SourceFor(name string, in workload.Input) string {
	if e := For(name); e != nil {
		return e.Source(in)
	}
	return in.Source
}

// RequestFor is in as the engine called name is asked it; the input document for a kind that
// is no policy engine.
func RequestFor(name string, in workload.Input) []byte {
	if e := For(name); e != nil {
		return e.Request(in)
	}
	return in.JSON
}

// HandedTo says what the engine called name is handed of w that it cannot compute; empty when
// nothing (see Handed).
func HandedTo(name string, w *workload.Workload) string {
	if h, ok := For(name).(Handed); ok {
		return h.Handed(w)
	}
	return ""
}

// DialectOf names the version of the engine's language w is written in; empty for its default
// (see Dialect).
func DialectOf(name string, w *workload.Workload) string {
	if d, ok := For(name).(Dialect); ok {
		return d.Dialect(w)
	}
	return ""
}
