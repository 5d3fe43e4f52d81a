// Package spicedb is SpiceDB inside authzbench: its in-process permission checker
// (pkg/embedded) over its memory datastore (the spicedb/inproc mode), the loading of a served
// SpiceDB over its gRPC API (the spicedb/server mode; the server itself is serve's, a program of
// its own, authzbench-spicedb), and the files
// SpiceDB's users already keep — the validation file `zed validate` and the playground read, or
// a schema, a relationships file and a JSONL of checks — read into assertions with expected
// decisions.
//
// It is the engine's core, not its wiring: it knows nothing of targets, workloads, load loops or
// results. Everything here happens before the clock except Engine.Check, which is
// pkg/embedded's Check on a request built beforehand, and a look at its answer (BenchmarkCheck
// holds it to that). A conditional answer (a caveat whose context is missing) is never a
// decision: Check returns a *ConditionalError.
//
// Linking SpiceDB has side effects on process globals: its init replaces the Go collector of
// Prometheus's default registry and sets zerolog's default context logger to a no-op. Nothing
// of authzbench's own uses those globals (TestOwnMetricsAndLogsUnaffected holds to that).
package spicedb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/authzed/spicedb/pkg/datalayer"
	"github.com/authzed/spicedb/pkg/development"
	"github.com/authzed/spicedb/pkg/embedded"
	core "github.com/authzed/spicedb/pkg/proto/core/v1"
	devinterface "github.com/authzed/spicedb/pkg/proto/developer/v1"
	"github.com/authzed/spicedb/pkg/tuple"

	"github.com/authzbench/authzbench/internal/buildinfo"
)

// ErrConditional is what a Check that comes back conditional wraps: the relationships hold
// only under a caveat whose context the request did not give, so there is no decision.
var ErrConditional = errors.New("conditional")

// ConditionalError is a conditional answer, with the caveat context fields it lacked.
type ConditionalError struct {
	Missing []string
}

func (e *ConditionalError) Error() string {
	if len(e.Missing) == 0 {
		return "conditional: a caveat lacks context"
	}
	// SpiceDB names a field once per caveat that lacks it: said once here.
	var names []string
	for _, m := range e.Missing {
		if !slices.Contains(names, m) {
			names = append(names, m)
		}
	}
	return "conditional: caveat context missing " + strings.Join(names, ", ")
}

func (e *ConditionalError) Is(target error) bool { return target == ErrConditional }

// Engine is SpiceDB's in-process checker over a memory datastore holding one schema and its
// relationships.
type Engine struct {
	dev   *development.DevContext
	perms *embedded.Permissions
}

// Start writes the schema and relationships of f into a SpiceDB memory datastore and builds an
// in-process checker over it. It is all setup: call it before the clock.
//
// The datastore is loaded by SpiceDB's own development loader, the one its playground and
// `zed validate` use: it compiles the schema, validates every relationship against it (a
// subject type the relation does not allow, a caveat it does not name, an unknown relation)
// and writes them in one transaction of its memory datastore, which has no per-write limit
// (the per-request limit of SpiceDB's API is its server's, for the server mode).
func Start(ctx context.Context, f *Fixture) (*Engine, error) {
	if strings.TrimSpace(f.Schema) == "" {
		return nil, fmt.Errorf("%s: start spicedb: no schema", f.Source)
	}
	rels := make([]*core.RelationTuple, len(f.Relationships))
	origin := make(map[string]string, len(f.Relationships))
	for i, r := range f.Relationships {
		rels[i] = r.Rel.ToCoreTuple()
		origin[tuple.StringWithoutCaveatOrExpiration(r.Rel)] = r.Origin
	}
	dev, devErrs, err := development.NewDevContext(ctx, &devinterface.RequestContext{Schema: f.Schema, Relationships: rels})
	if err != nil {
		return nil, fmt.Errorf("%s: start spicedb: %w", f.Source, err)
	}
	if devErrs != nil && len(devErrs.GetInputErrors()) > 0 {
		errs := make([]error, len(devErrs.GetInputErrors()))
		for i, de := range devErrs.GetInputErrors() {
			errs[i] = f.inputError(de, origin)
		}
		return nil, errors.Join(errs...)
	}
	perms, err := embedded.NewPermissions(embedded.Config{Datastore: datalayer.UnwrapDatastore(dev.DataLayer)})
	if err != nil {
		dev.Dispose()
		return nil, fmt.Errorf("start spicedb: %w", err)
	}
	return &Engine{dev: dev, perms: perms}, nil
}

// inputError names the file and line SpiceDB's loader refuses: a schema error at its line in
// the schema's file, a relationship at the line that wrote it.
func (f *Fixture) inputError(de *devinterface.DeveloperError, origin map[string]string) error {
	switch de.GetSource() {
	case devinterface.DeveloperError_SCHEMA:
		line := f.SchemaLine
		if de.GetLine() > 0 {
			line += int(de.GetLine()) - 1
		}
		return fmt.Errorf("%s:%d: spicedb refuses the schema: %s", f.SchemaFile, line, de.GetMessage())
	case devinterface.DeveloperError_RELATIONSHIP:
		where := f.Source
		if rel, err := tuple.Parse(de.GetContext()); err == nil {
			if o, ok := origin[tuple.StringWithoutCaveatOrExpiration(rel)]; ok {
				where = o
			}
		}
		return fmt.Errorf("%s: spicedb refuses relationship %s: %s", where, de.GetContext(), de.GetMessage())
	default:
		return fmt.Errorf("%s: spicedb: %s", f.Source, de.GetMessage())
	}
}

// Prepare builds the request for a: the request the clock will time, built before it.
func (e *Engine) Prepare(a Assertion) embedded.CheckRequest {
	return embedded.CheckRequest{
		ResourceType:    a.Resource.ObjectType,
		ResourceID:      a.Resource.ObjectID,
		Permission:      a.Resource.Relation,
		SubjectType:     a.Subject.ObjectType,
		SubjectID:       a.Subject.ObjectID,
		SubjectRelation: a.Subject.Relation,
		CaveatContext:   a.Context,
	}
}

// Check asks SpiceDB for a prepared request's decision. An error is never a decision: a
// conditional answer is a *ConditionalError (errors.Is ErrConditional), and the caller counts it
// as an error, not as a deny.
func (e *Engine) Check(ctx context.Context, req embedded.CheckRequest) (allowed bool, err error) {
	res, err := e.perms.Check(ctx, req)
	if err != nil {
		return false, err
	}
	if res.IsConditional {
		return false, &ConditionalError{Missing: res.MissingContext}
	}
	return res.HasPermission, nil
}

// Permissions is the checker the engine wraps, for a bare loop to call its Check directly.
func (e *Engine) Permissions() *embedded.Permissions { return e.perms }

// Close stops the checker's dispatcher and closes the datastore.
func (e *Engine) Close() {
	if e.perms != nil {
		_ = e.perms.Close()
		e.perms = nil
	}
	if e.dev != nil {
		e.dev.Dispose()
		e.dev = nil
	}
}

// Version is the version of SpiceDB linked into this binary, for the environment a result
// records. A test binary carries no module versions: "unknown".
func Version() string {
	if v := buildinfo.ModuleVersion("github.com/authzed/spicedb"); v != "" {
		return v
	}
	return "unknown"
}
