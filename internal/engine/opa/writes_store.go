package opa

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// liveStore is OPA in process with a store that takes writes, kept as OPA's server keeps its
// own: an in-memory store (inmem, with the options `opa run` gives it), the policy compiled
// once, and the query prepared again after every commit, as the server empties its
// prepared-query cache on each (server.reload). Every evaluation reads the data through a read
// transaction of the store, so a commit, which takes the store's lock exclusively, waits for the
// evaluations in flight and holds new ones until it is done: the pause the server shows, without
// its transport.
type liveStore struct {
	store storage.Store
	// compiler holds the policy compiled; a policy replacement puts a new one in.
	compiler atomic.Pointer[ast.Compiler]
	query    string
	v0       bool
	// prepared is the query prepared since the last commit; nil until a decision prepares it.
	prepared atomic.Pointer[preparedQuery]
	// pending is the policy a replacement commits, compiled again by the commit (recompile).
	// Set and read by the writer's goroutine only: the commit runs its triggers in it.
	pending *pendingPolicy
}

// preparedQuery is a query prepared with compiler: once a policy replacement has put another
// compiler in, it is prepared again, even if a decision stored it after the commit dropped it.
type preparedQuery struct {
	compiler *ast.Compiler
	query    rego.PreparedEvalQuery
}

// newLiveStore loads the workload's policy and data into a store of its own, as OPA's loader
// reads them (Compiled's options), and prepares the query over it.
func newLiveStore(ctx context.Context, common kinds.Common, w *workload.Workload) (*liveStore, error) {
	dir, policies, data, err := workloadFiles(ctx, common, w)
	if dir != "" {
		defer os.RemoveAll(dir) // loaded, the store no longer reads its files
	}
	if err != nil {
		return nil, err
	}
	l := &liveStore{store: inmem.NewWithOpts(inmem.OptRoundTripOnWrite(false)), query: w.Query, v0: regoV0(w)}
	// The compiler rego.New would make itself, kept so that preparing the query again compiles
	// the query alone, as the server does with its own compiler.
	compiler := ast.NewCompiler().WithUseTypeCheckAnnotations(true)
	if l.v0 {
		compiler = compiler.WithDefaultRegoVersion(ast.RegoV0)
	}
	l.compiler.Store(compiler)
	txn, err := l.store.NewTransaction(ctx, storage.WriteParams)
	if err != nil {
		return nil, err
	}
	opts := append([]func(*rego.Rego){rego.Query(w.Query), rego.Store(l.store), rego.Transaction(txn), rego.Compiler(compiler)},
		LoadOptions(policies, data)...)
	if l.v0 {
		opts = append(opts, rego.SetRegoVersion(ast.RegoV0))
	}
	pq, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		l.store.Abort(ctx, txn)
		return nil, fmt.Errorf("load workload %s into a store that takes writes: %w", w.Name, err)
	}
	if _, err := l.store.Register(ctx, txn, storage.TriggerConfig{OnCommit: func(_ context.Context, _ storage.Transaction, ev storage.TriggerEvent) {
		if ev.PolicyChanged() {
			l.recompile()
		}
		l.prepared.Store(nil)
	}}); err != nil {
		l.store.Abort(ctx, txn)
		return nil, err
	}
	if err := l.store.Commit(ctx, txn); err != nil {
		return nil, err
	}
	l.prepared.Store(&preparedQuery{compiler: compiler, query: pq})
	return l, nil
}

// current is the prepared query, prepared again when a commit has dropped it. Workers that miss
// together each prepare one, as the server's requests do; any of them serves.
func (l *liveStore) current(ctx context.Context) (*rego.PreparedEvalQuery, error) {
	compiler := l.compiler.Load()
	if p := l.prepared.Load(); p != nil && p.compiler == compiler {
		return &p.query, nil
	}
	opts := []func(*rego.Rego){rego.Query(l.query), rego.Compiler(compiler), rego.Store(l.store)}
	if l.v0 {
		opts = append(opts, rego.SetRegoVersion(ast.RegoV0))
	}
	pq, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("prepare %s again after a write: %w", l.query, err)
	}
	p := &preparedQuery{compiler: compiler, query: pq}
	l.prepared.Store(p)
	return &p.query, nil
}

// storePatcher applies each change, a JSON Patch of OPA's data, as OPA's server applies a
// PATCH of its Data API: one write transaction, each operation written, the paths checked
// against the policy's rules (when a compiler is given), and the transaction committed.
// Acknowledged means committed: a decision begun after it reads the new data.
type storePatcher struct {
	store storage.Store
	// live, for opa/inproc, holds the compiler the paths are checked against and takes policy
	// replacements; nil (the SDK's store): no check of the paths, no policy replacement.
	live *liveStore
	// v0 parses a policy replacement's module in Rego v0, for the SDK's store.
	v0 bool
}

func (p *storePatcher) Apply(ctx context.Context, _ int, c change.Change) change.Ack {
	if isPolicyWrite(c.Form) {
		if p.live == nil {
			return replaceStorePolicy(ctx, p.store, p.v0, c.Form)
		}
		return p.live.replacePolicy(ctx, c.Form)
	}
	ops, err := readPatch(c.Form)
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	txn, err := p.store.NewTransaction(ctx, storage.WriteParams)
	if err != nil {
		return ackOf(err)
	}
	for _, op := range ops {
		if err := p.store.Write(ctx, txn, op.op, op.path, op.value); err != nil {
			p.store.Abort(ctx, txn)
			return change.Ack{Class: "refused", Err: fmt.Errorf("%s %s: %w", op.name, op.path, err)}
		}
	}
	if p.live != nil {
		if errs := ast.CheckPathConflicts(p.live.compiler.Load(), storage.NonEmpty(ctx, p.store, txn)); len(errs) > 0 {
			p.store.Abort(ctx, txn)
			return change.Ack{Class: "refused", Err: errs}
		}
	}
	if err := p.store.Commit(ctx, txn); err != nil {
		return ackOf(err)
	}
	return change.Ack{}
}

func ackOf(err error) change.Ack {
	if errors.Is(err, context.DeadlineExceeded) {
		return change.Ack{Class: "timeout", Err: err}
	}
	return change.Ack{Class: "error", Err: err}
}

// patchOp is one operation of a JSON Patch, as OPA's store takes it.
type patchOp struct {
	name  string
	op    storage.PatchOp
	path  storage.Path
	value any
	// pointer is the path as the patch gave it, a JSON Pointer (a delta bundle's path).
	pointer string
}

// readPatch reads a JSON Patch (RFC 6902) of OPA's data document as OPA's Data API reads one:
// add, remove and replace, each with a JSON Pointer path from the root of data; the error says
// which operation is at fault.
func readPatch(form []byte) ([]patchOp, error) {
	if len(bytes.TrimSpace(form)) == 0 {
		return nil, errors.New("no JSON Patch of OPA's data")
	}
	var raw []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value *any   `json:"value"`
	}
	if err := util.NewJSONDecoder(bytes.NewReader(form)).Decode(&raw); err != nil {
		return nil, fmt.Errorf(`a JSON Patch of OPA's data: %v; want [{"op": "replace", "path": "/a/b", "value": ...}]`, err)
	}
	if len(raw) == 0 {
		return nil, errors.New("an empty JSON Patch: give at least one operation")
	}
	ops := make([]patchOp, 0, len(raw))
	for i, r := range raw {
		var o patchOp
		o.name = r.Op
		switch r.Op {
		case "add":
			o.op = storage.AddOp
		case "remove":
			o.op = storage.RemoveOp
		case "replace":
			o.op = storage.ReplaceOp
		default:
			return nil, fmt.Errorf("operation %d: op %q: OPA's Data API takes add, remove and replace", i+1, r.Op)
		}
		if !strings.HasPrefix(r.Path, "/") {
			return nil, fmt.Errorf("operation %d: path %q: want a JSON Pointer from the root of data, such as /rbac/users", i+1, r.Path)
		}
		path, ok := storage.ParsePathEscaped(r.Path)
		if !ok {
			return nil, fmt.Errorf("operation %d: path %q is not a JSON Pointer", i+1, r.Path)
		}
		o.path, o.pointer = path, r.Path
		if o.op != storage.RemoveOp {
			if r.Value == nil {
				return nil, fmt.Errorf("operation %d: %s %s has no value", i+1, r.Op, r.Path)
			}
			o.value = *r.Value
		}
		ops = append(ops, o)
	}
	return ops, nil
}

// Writer applies each change to a store of the target's own, through OPA's storage API as its
// server does (kinds.Writable). Asked for before the first worker, it moves the target's
// decisions onto that store: a run without changes never asks, and keeps the shared prepared
// query.
func (t *inproc) Writer() (change.Applier, error) {
	if t.w == nil {
		return nil, errors.New("opa/inproc is not started")
	}
	if t.live == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		l, err := newLiveStore(ctx, t.common, t.w)
		if err != nil {
			return nil, err
		}
		t.live = l
	}
	return &storePatcher{store: t.live.store, live: t.live}, nil
}

// Writer applies each change to the SDK's store, through OPA's storage API (kinds.Writable):
// as a service that embeds the SDK and holds its store writes, beside the bundle the SDK
// activated (which polls too seldom to overwrite them in a run). The SDK keeps its prepared
// queries across data commits; it prepares again only when the policy changes.
func (t *sdkTarget) Writer() (change.Applier, error) {
	if t.store == nil {
		return nil, errors.New("opa/sdk is not started")
	}
	return &storePatcher{store: t.store, v0: t.v0}, nil
}

// CheckWrite reads a changes file's write as OPA's targets take it: a JSON Patch of the data,
// or a policy replacement, its file read by ResolveWrite (engine.WriteChecker).
func (opa) CheckWrite(form json.RawMessage) error {
	if isPolicyWrite(form) {
		_, err := readPolicyWrite(form, true)
		return err
	}
	_, err := readPatch(form)
	return err
}
