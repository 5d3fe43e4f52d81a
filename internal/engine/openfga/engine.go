// Package openfga is OpenFGA inside authzbench: its server's Check over its in-memory datastore
// (the openfga/inproc mode), its server assembled as its own `run` command assembles it, from its
// public packages (the openfga/server mode, as `authzbench openfga run`), and the files OpenFGA's users already keep — the store
// file `fga model test` and `fga store import` read, or a model, a tuple file and a JSONL of
// checks — read into assertions with expected decisions.
//
// It is the engine's core, not its wiring: it knows nothing of targets, workloads, load loops or
// results. Everything here happens before the clock except Engine.Check, which is OpenFGA's own
// Server.Check on a request built beforehand, and nothing else (BenchmarkCheck holds it to that).
package openfga

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"github.com/openfga/openfga/pkg/encoder"
	"github.com/openfga/openfga/pkg/server"
	"github.com/openfga/openfga/pkg/storage"
	"github.com/openfga/openfga/pkg/storage/memory"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/buildinfo"
)

// MaxContextualTuples is OpenFGA's limit on contextual tuples in one Check request (its API
// validation refuses more). Entities beyond it must be written as tuples before the clock.
const MaxContextualTuples = 100

// Engine is an OpenFGA server in this process over its in-memory datastore, holding one store
// per distinct tuple set of a Fixture, all with the same model.
type Engine struct {
	srv *server.Server
	*Stores
	datastore storage.OpenFGADatastore // closed with the engine, when StartOver was given one
	limits    *listLimits              // the list calls' limits, when startListing set them (list.go)
}

// Start builds an OpenFGA server, and writes the model and every tuple set of f into its own
// store. It is all setup: call it before the clock.
func Start(ctx context.Context, f *Fixture) (*Engine, error) {
	if f.Model == nil {
		return nil, errors.New("start openfga: no model")
	}
	// OpenFGA's own defaults throughout: pkg/server takes them from serverconfig, as its run
	// command's flags do, so the engine in process decides with the settings its server has.
	srv, err := server.NewServerWithOpts(server.WithDatastore(memory.New()), defaultExperimentals())
	if err != nil {
		return nil, fmt.Errorf("start openfga: %w", err)
	}
	e := &Engine{srv: srv}
	if e.Stores, err = WriteFixture(ctx, srv, f); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// StartOver builds an OpenFGA server over ds (OpenFGA's defaults otherwise, as Start), with
// the continuation tokens ds needs, and writes f into it through OpenFGA's Write, in batches
// of its per-write limit. The engine owns ds from here: Close closes it, even on an error.
//
// opts are pkg/server's settings beyond OpenFGA's defaults (its caches, CacheSettings).
func StartOver(ctx context.Context, f *Fixture, ds storage.OpenFGADatastore, tokens encoder.ContinuationTokenSerializer, opts ...server.OpenFGAServiceV1Option) (*Engine, error) {
	if f.Model == nil {
		ds.Close()
		return nil, errors.New("start openfga: no model")
	}
	srv, err := server.NewServerWithOpts(append([]server.OpenFGAServiceV1Option{server.WithDatastore(ds), server.WithContinuationTokenSerializer(tokens), defaultExperimentals()}, opts...)...)
	if err != nil {
		ds.Close()
		return nil, fmt.Errorf("start openfga: %w", err)
	}
	e := &Engine{srv: srv, datastore: ds}
	if e.Stores, err = WriteFixture(ctx, srv, f); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// API is what writing a fixture takes of OpenFGA: its own server in process, a gRPC client of a
// server elsewhere, or HTTPAPI over its HTTP API.
type API interface {
	CreateStore(context.Context, *openfgav1.CreateStoreRequest) (*openfgav1.CreateStoreResponse, error)
	WriteAuthorizationModel(context.Context, *openfgav1.WriteAuthorizationModelRequest) (*openfgav1.WriteAuthorizationModelResponse, error)
	Write(context.Context, *openfgav1.WriteRequest) (*openfgav1.WriteResponse, error)
	DeleteStore(context.Context, *openfgav1.DeleteStoreRequest) (*openfgav1.DeleteStoreResponse, error)
}

// Stores are a fixture's tuple sets written into an OpenFGA: Stores[i] and Models[i] hold
// TupleSets[i], in the store named Names[i].
type Stores struct {
	Stores, Models, Names []string
}

// WriteFixture writes the model and every tuple set of f into a store of its own on api. It is
// all setup: call it before the clock. On an error, the stores it created so far are returned
// with it, for a server the user runs to have them removed (Delete).
func WriteFixture(ctx context.Context, api API, f *Fixture) (*Stores, error) {
	if f.Model == nil {
		return nil, errors.New("openfga: no model")
	}
	s := &Stores{}
	sets := f.TupleSets
	if len(sets) == 0 {
		sets = []TupleSet{{}}
	}
	for i, set := range sets {
		name := fmt.Sprintf("authzbench-%d", i)
		storeID, modelID, err := load(ctx, api, name, f, set.Tuples)
		if storeID != "" {
			s.Stores = append(s.Stores, storeID)
			s.Models = append(s.Models, modelID)
			s.Names = append(s.Names, name)
		}
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

// Delete removes the stores from api: what a run wrote into a server it did not start.
func (s *Stores) Delete(ctx context.Context, api API) error {
	var errs []error
	for i, id := range s.Stores {
		if _, err := api.DeleteStore(ctx, &openfgav1.DeleteStoreRequest{StoreId: id}); err != nil {
			errs = append(errs, fmt.Errorf("delete store %s (%s): %s", s.Names[i], id, status.Convert(err).Message()))
		}
	}
	return errors.Join(errs...)
}

// String names the stores as a user finds them in OpenFGA: "authzbench-0 (01K...)".
func (s *Stores) String() string {
	parts := make([]string, len(s.Stores))
	for i, id := range s.Stores {
		parts[i] = s.Names[i] + " (" + id + ")"
	}
	return strings.Join(parts, ", ")
}

// load creates a store, writes the model into it and then the tuples, in writes of at most
// OpenFGA's per-write limit. A store created is returned even with an error, to be removed.
func load(ctx context.Context, api API, name string, f *Fixture, tuples []Tuple) (storeID, modelID string, err error) {
	model := f.Model
	store, err := api.CreateStore(ctx, &openfgav1.CreateStoreRequest{Name: name})
	if err != nil {
		return "", "", fmt.Errorf("openfga: create store: %s", status.Convert(err).Message())
	}
	written, err := api.WriteAuthorizationModel(ctx, &openfgav1.WriteAuthorizationModelRequest{
		StoreId:         store.GetId(),
		SchemaVersion:   model.GetSchemaVersion(),
		TypeDefinitions: model.GetTypeDefinitions(),
		Conditions:      model.GetConditions(),
	})
	if err != nil {
		// OpenFGA names the type or relation; we name the file.
		return store.GetId(), "", fmt.Errorf("%s: openfga refuses the model: %s", f.ModelOrigin, status.Convert(err).Message())
	}
	for batch := range slices.Chunk(tuples, maxTuplesPerWrite) {
		if err := write(ctx, api, store.GetId(), written.GetAuthorizationModelId(), batch); err != nil {
			return store.GetId(), written.GetAuthorizationModelId(), err
		}
	}
	return store.GetId(), written.GetAuthorizationModelId(), nil
}

// maxTuplesPerWrite is OpenFGA's default limit on tuples in one Write (its memory datastore's and
// its server's, --max-tuples-per-write).
const maxTuplesPerWrite = 100

// write writes one batch. OpenFGA refuses a batch whole, naming a tuple only by its key; to name
// the line the user must fix, a refused batch is written again tuple by tuple.
func write(ctx context.Context, api API, storeID, modelID string, batch []Tuple) error {
	request := func(tuples []Tuple) *openfgav1.WriteRequest {
		keys := make([]*openfgav1.TupleKey, len(tuples))
		for i, t := range tuples {
			keys[i] = t.Key
		}
		return &openfgav1.WriteRequest{StoreId: storeID, AuthorizationModelId: modelID,
			Writes: &openfgav1.WriteRequestWrites{TupleKeys: keys}}
	}
	_, err := api.Write(ctx, request(batch))
	if err == nil {
		return nil
	}
	for i := range batch {
		if _, one := api.Write(ctx, request(batch[i:i+1])); one != nil {
			return fmt.Errorf("%s: openfga refuses tuple %s: %s", batch[i].Origin, tupleString(batch[i].Key), status.Convert(one).Message())
		}
	}
	return fmt.Errorf("%s to %s: openfga refuses the tuples: %s", batch[0].Origin, batch[len(batch)-1].Origin, status.Convert(err).Message())
}

// Prepare builds the Check request for a, aimed at its tuple set's store: the request the clock
// will time, built before it.
func (s *Stores) Prepare(a Assertion) (*openfgav1.CheckRequest, error) {
	if a.TupleSet < 0 || a.TupleSet >= len(s.Stores) {
		return nil, fmt.Errorf("%s: tuple set %d, but the engine holds %d", a.Origin, a.TupleSet, len(s.Stores))
	}
	if n := len(a.ContextualTuples); n > MaxContextualTuples {
		return nil, fmt.Errorf("%s: %d contextual tuples; OpenFGA takes at most %d per Check, so write the rest as tuples before the run", a.Origin, n, MaxContextualTuples)
	}
	req := &openfgav1.CheckRequest{
		StoreId:              s.Stores[a.TupleSet],
		AuthorizationModelId: s.Models[a.TupleSet],
		TupleKey:             &openfgav1.CheckRequestTupleKey{User: a.User, Relation: a.Relation, Object: a.Object},
		Context:              a.Context,
	}
	if len(a.ContextualTuples) > 0 {
		keys := make([]*openfgav1.TupleKey, len(a.ContextualTuples))
		for i, t := range a.ContextualTuples {
			keys[i] = t.Key
		}
		req.ContextualTuples = &openfgav1.ContextualTupleKeys{TupleKeys: keys}
	}
	return req, nil
}

// Check asks OpenFGA's server for a prepared request's decision. An error is never a decision:
// the caller counts it as an error, not as a deny.
func (e *Engine) Check(ctx context.Context, req *openfgav1.CheckRequest) (allowed bool, err error) {
	resp, err := e.srv.Check(ctx, req)
	if err != nil {
		return false, err
	}
	return resp.GetAllowed(), nil
}

// Server is the OpenFGA server the engine wraps, for a bare loop to call its Check directly.
func (e *Engine) Server() *server.Server { return e.srv }

// Close stops the server and releases its caches and background goroutines.
func (e *Engine) Close() {
	if e.srv != nil {
		e.srv.Close()
		e.srv = nil
	}
	if e.datastore != nil {
		e.datastore.Close()
		e.datastore = nil
	}
}

// tupleString writes a tuple as OpenFGA's users read one: object#relation@user.
func tupleString(k *openfgav1.TupleKey) string {
	s := k.GetObject() + "#" + k.GetRelation() + "@" + k.GetUser()
	if c := k.GetCondition(); c != nil {
		s += " (condition " + c.GetName() + ")"
	}
	return s
}

// Version is the version of OpenFGA linked into this binary, for the environment a result
// records (OpenFGA's own version command says "dev" when linked as a module). A test binary
// carries no module versions: "unknown".
func Version() string {
	if v := buildinfo.ModuleVersion("github.com/openfga/openfga"); v != "" {
		return v
	}
	return "unknown"
}
