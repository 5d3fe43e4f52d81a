package openfga

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// Registered is OpenFGA as the engine registry knows it: models in OpenFGA's DSL, a Check per
// input, answers from its HTTP API ({"allowed": true, "resolution": ""}).
var Registered engine.Engine = registered{}

// Name is OpenFGA's name in the registry, its target kinds and results.
const Name = "openfga"

func init() { engine.Register(Registered) }

type registered struct{}

func (registered) Name() string        { return Name }
func (registered) Languages() []string { return []string{"OpenFGA"} }

// Version is the OpenFGA module linked in; a server someone else runs is recorded by its URL.
func (registered) Version() string { return Version() }

// Written reports whether w has an OpenFGA version: the user's files (userfiles.go), or a
// built-in's (builtin.go).
func (registered) Written(w *workload.Workload) bool { return w.VersionFor(Name) != nil }

// Request is the input's Check as a JSON object: {"user": "user:anne", "relation": "viewer",
// "object": "doc:1"}, with "context", "contextual_tuples" and "tuple_set" (which of the
// workload's tuple sets it is checked against) where it has them.
func (registered) Request(in workload.Input) []byte { return in.Requests[Name].Body }

// Source is the check's line when the user's files gave it, the input's otherwise.
func (registered) Source(in workload.Input) string {
	if s := in.Requests[Name].Source; s != "" {
		return s
	}
	return in.Source
}

// Handed says what a built-in workload's OpenFGA version is handed ready-made because OpenFGA
// cannot compute it (engine.Handed): the ‡ rows.
func (registered) Handed(w *workload.Workload) string {
	if v := w.Versions[Name]; v != nil {
		return v.Differences
	}
	return ""
}

// WhyNot says why a built-in has no OpenFGA version, where its rules do what OpenFGA cannot
// (engine.Explained); empty for the others.
func (registered) WhyNot(w *workload.Workload) string {
	switch w.Model.(type) {
	case *workload.APIData:
		return "its rules verify a JWT (HS256 signature, audience, expiry), split its scope string and read the clock; " +
			"OpenFGA's relations and conditions can do none of it, and handing all of it over ready-made would leave OpenFGA nothing of the policy to decide"
	case *workload.RiskData:
		return "its rules sum, count and sort the applicant's debts and scores and compare the results with thresholds; " +
			"OpenFGA's relations cannot compute over a list, and its conditions cannot either"
	}
	return ""
}

// HealthPath is OpenFGA's HTTP health check, which answers once its datastore is ready.
func (registered) HealthPath() string { return "/healthz" }

// Answer reads OpenFGA's HTTP Check answer, {"allowed": true, "resolution": ""}: resolution is
// empty unless the request asks for a trace, so the two bodies are nearly every answer.
func (registered) Answer() engine.Answer {
	return engine.Answer{Field: "allowed",
		AllowBody: `{"allowed":true,"resolution":""}`, DenyBody: `{"allowed":false,"resolution":""}`}
}

// Loaded is a workload read into OpenFGA's terms and started in this process: the fixture
// (model, tuple sets, one assertion per input, in input order), an in-process server holding
// it, and every input's Check request built for that server. Built once per run, before the
// clock, through the run's engine.Prepared.
type Loaded struct {
	Fixture  *Fixture
	Engine   *Engine
	Requests []*openfgav1.CheckRequest
}

// Load returns the workload loaded, once per run.
func Load(ctx context.Context, p *engine.Prepared, w *workload.Workload) (*Loaded, error) {
	v, err := engine.Prepare(ctx, p, Registered, w)
	if err != nil {
		return nil, err
	}
	return v.(*Loaded), nil
}

// Prepare reads the workload's model and tuples, starts an in-process OpenFGA with them and
// builds every input's Check (engine.Preparer). Starting it here, not only in openfga/inproc,
// has OpenFGA itself refuse a model or a tuple, naming its line, before any target starts.
func (registered) Prepare(ctx context.Context, w *workload.Workload) (any, error) {
	f, err := FixtureOf(w)
	if err != nil {
		return nil, err
	}
	e, err := Start(ctx, f)
	if err != nil {
		return nil, err
	}
	reqs := make([]*openfgav1.CheckRequest, len(f.Assertions))
	for i, a := range f.Assertions {
		if reqs[i], err = e.Prepare(a); err != nil {
			e.Close()
			return nil, err
		}
	}
	// The engine lives as long as the run's preparations: a run is one process, and what it
	// holds is the in-memory store its targets read.
	return &Loaded{Fixture: f, Engine: e, Requests: reqs}, nil
}

// FixtureOf reads the workload's OpenFGA version: its model and tuple sets, and one assertion
// per input, built from the input's Check and expected decision.
func FixtureOf(w *workload.Workload) (*Fixture, error) {
	v := w.VersionFor(Name)
	if v == nil {
		return nil, workload.NewSettingError("policy", func(n func(string) string) string {
			return fmt.Sprintf("workload %s has no OpenFGA version; the openfga targets run %s, or your own store file with %s",
				w.Name, strings.Join(workload.NamesWhere(Registered.Written), ", "), n("policy"))
		})
	}
	var f *Fixture
	var err error
	switch b := builtinOf(w); {
	case b != nil:
		f, err = builtinFixture(w, b)
	case v.Files[FileStore] != "":
		f, err = LoadStore(v.Files[FileStore])
	default:
		model := v.Files[FileModel]
		f = &Fixture{Source: model, ModelOrigin: model, TupleSets: []TupleSet{{Name: "store"}}}
		f.Model, err = LoadModel(model)
		if tuples := v.Files[FileTuples]; err == nil && tuples != "" {
			f.TupleSets[0].Tuples, err = LoadTuples(tuples)
		}
	}
	if err != nil {
		return nil, err
	}
	f.Assertions = make([]Assertion, len(w.Inputs))
	for i, in := range w.Inputs {
		origin := Registered.Source(in)
		if origin == "" {
			origin = fmt.Sprintf("workload %s input %d", w.Name, i+1)
		}
		check := Registered.Request(in)
		if check == nil {
			return nil, fmt.Errorf("%s: no OpenFGA check", origin)
		}
		a, err := inputCheck(origin, check)
		if err != nil {
			return nil, err
		}
		if a.TupleSet < 0 || a.TupleSet >= len(f.TupleSets) {
			return nil, fmt.Errorf("%s: tuple set %d, but the workload has %d", origin, a.TupleSet, len(f.TupleSets))
		}
		a.Expect = in.Expect == workload.ExpectAllow
		f.Assertions[i] = a
	}
	return f, nil
}

// inputCheck reads an input's Check: a line of a checks file without its "expect" (the input
// carries that), and with the tuple set it is asked against.
func inputCheck(origin string, data []byte) (Assertion, error) {
	var c struct {
		TupleSet int `json:"tuple_set"`
	}
	// The tuple set is ours, not a check's: read apart, then left out for jsonCheck, which
	// refuses keys it does not know.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return Assertion{}, fmt.Errorf("%s: check: %w", origin, err)
	}
	if raw, ok := fields["tuple_set"]; ok {
		if err := json.Unmarshal(raw, &c.TupleSet); err != nil {
			return Assertion{}, fmt.Errorf("%s: check: tuple_set: %w", origin, err)
		}
		delete(fields, "tuple_set")
	}
	fields["expect"] = json.RawMessage("false") // the input's Expect replaces it
	rest, err := json.Marshal(fields)
	if err != nil {
		return Assertion{}, fmt.Errorf("%s: check: %w", origin, err)
	}
	a, err := jsonCheck(origin, bytes.TrimSpace(rest))
	a.TupleSet = c.TupleSet
	return a, err
}

// CheckJSON writes an assertion as an input's Check (Registered.Request), so that a user's
// store file or checks file becomes a workload whose inputs the other code reads as any other.
func CheckJSON(a Assertion) ([]byte, error) {
	c := map[string]any{"user": a.User, "relation": a.Relation, "object": a.Object}
	if a.Context != nil {
		c["context"] = a.Context.AsMap()
	}
	if len(a.ContextualTuples) > 0 {
		var tuples []json.RawMessage
		for _, t := range a.ContextualTuples {
			data, err := tupleJSON(t.Key)
			if err != nil {
				return nil, err
			}
			tuples = append(tuples, data)
		}
		c["contextual_tuples"] = tuples
	}
	if a.TupleSet != 0 {
		c["tuple_set"] = a.TupleSet
	}
	return json.Marshal(c)
}

func tupleJSON(k *openfgav1.TupleKey) ([]byte, error) {
	t := map[string]any{"user": k.GetUser(), "relation": k.GetRelation(), "object": k.GetObject()}
	if c := k.GetCondition(); c != nil {
		cond := map[string]any{"name": c.GetName()}
		if c.GetContext() != nil {
			cond["context"] = c.GetContext().AsMap()
		}
		t["condition"] = cond
	}
	return json.Marshal(t)
}
