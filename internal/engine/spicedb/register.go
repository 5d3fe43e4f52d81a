package spicedb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/authzed/spicedb/pkg/embedded"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Name is SpiceDB's name in target kinds and results, and the key of its version of a workload
// (workload.Workload.Versions) and of its requests (workload.Input.Requests).
const Name = "spicedb"

// Registered is SpiceDB as the engine registry knows it: a schema in SpiceDB's schema
// language, relationships loaded before the clock, a permission check per input.
var Registered engine.Engine = registered{}

func init() { engine.Register(Registered) }

type registered struct{}

func (registered) Name() string        { return Name }
func (registered) Languages() []string { return []string{"SpiceDB schema"} }

// Version is the SpiceDB module linked in; a server started from another binary records its
// own.
func (registered) Version() string { return Version() }

// Written: the user's SpiceDB files, or a built-in workload's SpiceDB version (builtin.go).
func (registered) Written(w *workload.Workload) bool { return w.VersionFor(Name) != nil }

// Request is the input's check as a line of a checks file (CheckLine), when the user's files
// gave it; nil for a built-in workload, whose checks are its SpiceDB version's.
func (registered) Request(in workload.Input) []byte { return in.Requests[Name].Body }

// Source is the check's line in the user's files, the input's otherwise.
func (registered) Source(in workload.Input) string {
	if s := in.Requests[Name].Source; s != "" {
		return s
	}
	return in.Source
}

// Handed says what the SpiceDB version is handed ready-made that the others compute
// (engine.Handed): the ‡ rows.
func (registered) Handed(w *workload.Workload) string {
	if HasBuiltin(w) {
		return Differences(w)
	}
	if v := w.VersionFor(Name); v != nil {
		return v.Differences
	}
	return ""
}

// WhyNot says why w has no SpiceDB version (engine.Explained).
func (registered) WhyNot(w *workload.Workload) string { return WhyNot(w) }

// FilesHint says how users give their SpiceDB files (engine.FilesHinted).
func (registered) FilesHint() (flags, keys string) {
	return "--policy validation.yaml (the file zed validate reads), or --policy schema.zed with --inputs checks.jsonl (and --data relationships.txt)",
		"policy: a validation file (validation.yaml), or a schema (schema.zed) with inputs (checks.jsonl) and data (relationships)"
}

// HealthPath is empty: SpiceDB's server serves no HTTP unless asked, and answers readiness on
// the standard gRPC health service (HealthService), once its datastore and dispatcher are
// ready.
func (registered) HealthPath() string { return "" }

// HealthService is the gRPC health service SpiceDB reports its readiness under: the server as
// a whole (engine.GRPCHealth).
func (registered) HealthService() string { return "" }

// Answer is for an HTTP API SpiceDB's targets do not use (its HTTP gateway is off unless
// asked): CheckPermission's JSON answer, whose permissionship is a string, not a boolean, so
// that a server measured over HTTP reads as no decision rather than as a wrong one.
func (registered) Answer() engine.Answer {
	return engine.Answer{Field: "permissionship"}
}

// Loaded is a workload read into SpiceDB's terms and started in this process: the fixture
// (schema, relationships, one assertion per input, in input order), an in-process checker
// over it, and every input's request built for it. Built once per run, before the clock,
// through the run's engine.Prepared.
type Loaded struct {
	Fixture  *Fixture
	Engine   *Engine
	Requests []embedded.CheckRequest
}

// Load returns the workload loaded, once per run.
func Load(ctx context.Context, p *engine.Prepared, w *workload.Workload) (*Loaded, error) {
	v, err := engine.Prepare(ctx, p, Registered, w)
	if err != nil {
		return nil, err
	}
	return v.(*Loaded), nil
}

// Prepare reads the workload's schema, relationships and checks, starts the in-process checker
// with them and builds every input's request (engine.Preparer). Starting it here, not only in
// spicedb/inproc, has SpiceDB's own loader refuse a schema or a relationship, naming its
// line, before any target starts, whichever mode runs.
func (registered) Prepare(ctx context.Context, w *workload.Workload) (any, error) {
	f, err := FixtureOf(w)
	if err != nil {
		return nil, err
	}
	e, err := Start(ctx, f)
	if err != nil {
		return nil, err
	}
	reqs := make([]embedded.CheckRequest, len(f.Assertions))
	for i, a := range f.Assertions {
		reqs[i] = e.Prepare(a)
	}
	// The checker lives as long as the run's preparations: a run is one process, and what it
	// holds is the memory datastore its targets read.
	return &Loaded{Fixture: f, Engine: e, Requests: reqs}, nil
}

// FixtureOf reads the workload's SpiceDB version: the user's files, whose checks the inputs
// carry, or a built-in workload's (BuiltinFixture). Assertion i is input i's check, and its
// expectation the input's.
func FixtureOf(w *workload.Workload) (*Fixture, error) {
	if HasBuiltin(w) {
		f, err := BuiltinFixture(w)
		if err != nil {
			return nil, err
		}
		if len(f.Assertions) != len(w.Inputs) {
			return nil, fmt.Errorf("workload %s: its SpiceDB version has %d checks for %d inputs", w.Name, len(f.Assertions), len(w.Inputs))
		}
		for i, a := range f.Assertions {
			if err := agrees(a, w.Inputs[i]); err != nil {
				return nil, fmt.Errorf("workload %s input %d: %w", w.Name, i+1, err)
			}
		}
		return f, nil
	}
	v := w.VersionFor(Name)
	if v == nil {
		return nil, noVersion(w)
	}
	f, err := loadVersion(v)
	if err != nil {
		return nil, err
	}
	f.Assertions = make([]Assertion, len(w.Inputs))
	for i, in := range w.Inputs {
		origin := Registered.Source(in)
		if origin == "" {
			origin = fmt.Sprintf("workload %s input %d", w.Name, i+1)
		}
		body := in.Requests[Name].Body
		if body == nil {
			return nil, fmt.Errorf("%s: no SpiceDB check", origin)
		}
		if f.Assertions[i], err = ParseCheck(origin, body); err != nil {
			return nil, err
		}
		if err := agrees(f.Assertions[i], in); err != nil {
			return nil, fmt.Errorf("%s: %w", origin, err)
		}
	}
	return f, nil
}

// loadVersion reads the schema and relationships of the user's files; the checks are the
// inputs'.
func loadVersion(v *workload.Version) (*Fixture, error) {
	if path := v.Files[FileValidation]; path != "" {
		return LoadValidationFile(path)
	}
	schemaPath := v.Files[FileSchema]
	schema, err := readSchema(schemaPath)
	if err != nil {
		return nil, err
	}
	f := &Fixture{Source: schemaPath, Schema: schema, SchemaFile: schemaPath, SchemaLine: 1, NotMeasured: map[string]int{}}
	if rels := v.Files[FileRelationships]; rels != "" {
		if f.Relationships, err = LoadRelationships(rels); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// The parts of the user's files, as workload.Version.Files names them.
const (
	FileValidation    = "validation"
	FileSchema        = "schema"
	FileRelationships = "relationships"
	FileChecks        = "checks"
)

// ExpectOf is the decision an input expects for an assertion: a conditional answer grants
// nothing (SpiceDB has no permission to give while a caveat lacks its context), so
// assertCaveated expects no allow, and Outcome holds it to the conditional answer itself.
func ExpectOf(e Expect) workload.Expect {
	if e == ExpectAllowed {
		return workload.ExpectAllow
	}
	return workload.ExpectDeny
}

// agrees refuses a check whose expectation is not the input's (a built-in's generator out of
// step with its SpiceDB version).
func agrees(a Assertion, in workload.Input) error {
	if in.Expect != workload.Unverified && ExpectOf(a.Expect) != in.Expect {
		return fmt.Errorf("the SpiceDB check %s expects %s, and the input %s", a, a.Expect, in.Expect)
	}
	return nil
}

func noVersion(w *workload.Workload) error {
	return workload.NewSettingError("policy", func(n func(string) string) string {
		return fmt.Sprintf("workload %s has no SpiceDB version; the spicedb targets run %s, or your own files with %s validation.yaml (or %s schema.zed with relationships and checks)",
			w.Name, builtinList(), n("policy"), n("policy"))
	})
}

func builtinList() string {
	names := workload.NamesWhere(HasBuiltin)
	if len(names) == 0 {
		return "no built-in workload yet"
	}
	return strings.Join(names, ", ")
}

// Outcome is what SpiceDB's answer to a check (Engine.Check's, or a served CheckPermission's
// read the same way) means for the run, against the assertion it was asked for:
//   - an assertTrue or assertFalse check decided: that decision;
//   - an assertCaveated check answered conditional: the answer it asks for, recorded as the
//     deny its input expects (a conditional answer grants nothing);
//   - an assertCaveated check decided outright: allowed is a wrong decision; denied is no
//     decision of the kind asked for, an evaluation error saying so, never a pass;
//   - a conditional answer to any other check: an evaluation error naming the missing context,
//     never a deny.
func Outcome(a Assertion, allowed bool, err error) verify.Outcome {
	conditional := errors.Is(err, ErrConditional)
	switch {
	case a.Expect == ExpectConditional && conditional:
		return verify.Outcome{Kind: verify.Decided, Allow: false}
	case a.Expect == ExpectConditional && err == nil && allowed:
		return verify.Outcome{Kind: verify.Decided, Allow: true, Err: fmt.Errorf("%s: %s: allowed, want conditional (assertCaveated)", a.Origin, a)}
	case a.Expect == ExpectConditional && err == nil:
		return verify.Outcome{Kind: verify.EvalFailed, Err: fmt.Errorf("%s: %s: denied outright, want conditional (assertCaveated)", a.Origin, a)}
	case err != nil:
		return verify.Outcome{Kind: verify.EvalFailed, Err: fmt.Errorf("spicedb check %s: %w", a, err)}
	}
	return verify.Outcome{Kind: verify.Decided, Allow: allowed}
}
