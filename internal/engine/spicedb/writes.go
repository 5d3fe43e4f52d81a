package spicedb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "github.com/authzed/authzed-go/proto/authzed/api/v1"
	"github.com/authzed/spicedb/pkg/datalayer"
	"github.com/authzed/spicedb/pkg/tuple"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/kinds"
	// The consistency option this engine's ConsistencySetting reads.
	_ "github.com/authzbench/authzbench/internal/kinds/consistencyflag"
	"github.com/authzbench/authzbench/internal/workload"
)

// A run whose world changes (--changes) writes into SpiceDB as its users do: WriteRelationships,
// each relationship written a TOUCH and each deleted a DELETE, in one request, and SpiceDB's
// written_at token kept (change.Ack.Token) for checks asked at_least_as_fresh. The change's form
// is the request as SpiceDB's API takes it in JSON ({"updates": [{"operation":
// "OPERATION_DELETE", "relationship": {...}}]}).

// Write is a built-in family's change as SpiceDB takes it (engine.Writer).
func (registered) Write(w *workload.Workload, c workload.Change) (json.RawMessage, error) {
	if len(c.Writes)+len(c.Deletes) == 0 {
		return nil, fmt.Errorf("workload %s: change %q writes no relationships, and SpiceDB takes relationship updates", w.Name, c.What)
	}
	if w.Relationships == nil {
		return nil, fmt.Errorf("workload %s has no relationships for SpiceDB", w.Name)
	}
	relations, err := familyRelations(w.Relationships.Family)
	if err != nil {
		return nil, err
	}
	req := &v1.WriteRelationshipsRequest{}
	add := func(op v1.RelationshipUpdate_Operation, rs []workload.Relationship) error {
		for _, r := range rs {
			// Written as the workload's load writes it (a relation the family also computes is
			// direct_<name> in the schema).
			rel, err := relationshipOf(located{r, fmt.Sprintf("workload %s change %q", w.Name, c.What)}, relations)
			if err != nil {
				return err
			}
			req.Updates = append(req.Updates, &v1.RelationshipUpdate{Operation: op, Relationship: tuple.ToV1Relationship(rel.Rel)})
		}
		return nil
	}
	if err := errors.Join(add(v1.RelationshipUpdate_OPERATION_DELETE, c.Deletes), add(v1.RelationshipUpdate_OPERATION_TOUCH, c.Writes)); err != nil {
		return nil, err
	}
	return protojson.MarshalOptions{UseProtoNames: true}.Marshal(req)
}

// relationsByFamily caches each built-in family's schema relations: a stream writes thousands of
// changes of one family.
var relationsByFamily sync.Map // family → map[string]map[string]bool

// familyRelations are the relations (not permissions) of a built-in family's schema.
func familyRelations(family string) (map[string]map[string]bool, error) {
	if r, ok := relationsByFamily.Load(family); ok {
		return r.(map[string]map[string]bool), nil
	}
	fam, ok := builtinFamilies[family]
	if !ok {
		return nil, fmt.Errorf("SpiceDB has no schema for the %s family", family)
	}
	text, err := builtinSchemas.ReadFile("builtin/" + fam.schema)
	if err != nil {
		return nil, err
	}
	relations, err := schemaRelations(fam.schema, string(text))
	if err != nil {
		return nil, err
	}
	relationsByFamily.Store(family, relations)
	return relations, nil
}

// CheckWrite reads a changes file's write as SpiceDB's (engine.WriteChecker): a
// WriteRelationships request in JSON, strictly, as SpiceDB validates one.
func (registered) CheckWrite(form json.RawMessage) error {
	_, err := readWrite(form)
	return err
}

func readWrite(form json.RawMessage) (*v1.WriteRelationshipsRequest, error) {
	req := &v1.WriteRelationshipsRequest{}
	if err := protojson.Unmarshal(form, req); err != nil {
		return nil, fmt.Errorf(`not a SpiceDB WriteRelationships request: %v; want {"updates": [{"operation": "OPERATION_TOUCH", "relationship": {"resource": {"object_type": "document", "object_id": "1"}, "relation": "viewer", "subject": {"object": {"object_type": "user", "object_id": "anne"}}}}]}`, err)
	}
	if len(req.GetUpdates()) == 0 {
		return nil, errors.New(`a WriteRelationships with no update: give "updates"`)
	}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("SpiceDB would refuse it: %w", err)
	}
	return req, nil
}

// writeFailed classifies a write SpiceDB did not acknowledge.
func writeFailed(ctx context.Context, err error) change.Ack {
	if ctx.Err() != nil {
		return change.Ack{Class: "timeout", Err: err}
	}
	st, ok := status.FromError(err)
	if !ok {
		return change.Ack{Class: "error", Err: err}
	}
	err = fmt.Errorf("spicedb write: %s (%s)", st.Message(), st.Code())
	switch st.Code() {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.NotFound:
		return change.Ack{Class: "refused", Err: err}
	case codes.Aborted, codes.AlreadyExists:
		return change.Ack{Class: "conflict", Err: err}
	case codes.DeadlineExceeded:
		return change.Ack{Class: "timeout", Err: err}
	case codes.Unavailable:
		return change.Ack{Class: "transport", Err: err}
	}
	return change.Ack{Class: "error", Err: err}
}

// serverWriter applies each change with WriteRelationships; the written_at token it returns is
// what checks asked at_least_as_fresh ask for from then on.
// Each token is also the revision of its version, by which the answers' checked_at is placed
// (checkedat.go).
type serverWriter struct {
	client   v1.PermissionsServiceClient
	fresh    *atomic.Pointer[v1.Consistency]
	versions *versions
}

func (a *serverWriter) Apply(ctx context.Context, version int, c change.Change) change.Ack {
	req, err := readWrite(c.Form)
	if err != nil {
		a.versions.failed()
		return change.Ack{Class: "refused", Err: err}
	}
	a.versions.sending()
	resp, err := a.client.WriteRelationships(ctx, req)
	if err != nil {
		a.versions.failed()
		return writeFailed(ctx, err)
	}
	token := resp.GetWrittenAt()
	a.versions.written(version, token)
	if a.fresh != nil {
		a.fresh.Store(&v1.Consistency{Requirement: &v1.Consistency_AtLeastAsFresh{AtLeastAsFresh: token}})
	}
	return change.Ack{Token: token.GetToken()}
}

// Writer applies changes through the server's WriteRelationships (kinds.Writable).
func (t *spicedbServer) Writer() (change.Applier, error) {
	if t.loaded == nil {
		return nil, errors.New("the SpiceDB server is not started")
	}
	conn, err := t.dial()
	if err != nil {
		return nil, err
	}
	t.versions.start()
	return &serverWriter{client: v1.NewPermissionsServiceClient(conn), fresh: t.fresh, versions: t.versions}, nil
}

// inprocWriter applies each change in one transaction of the checker's datastore, as SpiceDB's
// WriteRelationships does: a check after it reads the new head revision.
type inprocWriter struct{ e *Engine }

func (a *inprocWriter) Apply(ctx context.Context, _ int, c change.Change) change.Ack {
	req, err := readWrite(c.Form)
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	updates, err := tuple.UpdatesFromV1RelationshipUpdates(req.GetUpdates())
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	rev, err := a.e.dev.DataLayer.ReadWriteTx(ctx, func(ctx context.Context, rwt datalayer.ReadWriteTransaction) error {
		return rwt.WriteRelationships(ctx, updates)
	})
	if err != nil {
		if ctx.Err() != nil {
			return change.Ack{Class: "timeout", Err: err}
		}
		return change.Ack{Class: "refused", Err: fmt.Errorf("spicedb write: %w", err)}
	}
	return change.Ack{Token: rev.String()}
}

// Writer applies changes to a checker of the target's own (kinds.Writable): the run's shared one
// is every spicedb/inproc target's world, so the target first loads the workload again into a
// datastore its writes change alone, before the clock.
func (t *spicedbInproc) Writer() (change.Applier, error) {
	if t.loaded == nil {
		return nil, errors.New("the SpiceDB checker is not started")
	}
	if t.own == nil {
		e, err := Start(context.Background(), t.loaded.Fixture)
		if err != nil {
			return nil, fmt.Errorf("a checker of the target's own for its writes: %w", err)
		}
		t.own, t.checker = e, e
	}
	return &inprocWriter{e: t.own}, nil
}

// The consistency a check asks of SpiceDB (kinds.Consistent), in its words.
const (
	minimizeLatency = "minimize_latency"
	atLeastAsFresh  = "at_least_as_fresh"
	fullyConsistent = "fully_consistent"
)

// quantizedStaleness is how old a snapshot SpiceDB may answer from under minimize_latency by
// its defaults: its revision quantization (--datastore-revision-quantization-interval 5s) and
// the 10 % more its max staleness allows (--datastore-revision-quantization-max-staleness-percent).
const quantizedStaleness = 5500 * time.Millisecond

// ConsistencySetting is the consistency option of SpiceDB's kinds.
type ConsistencySetting struct {
	Consistency string `yaml:"consistency"`
}

// check refuses a consistency SpiceDB does not name, or one the kind cannot ask.
func (c ConsistencySetting) check(kind string, takes ...string) error {
	for _, k := range append(takes, "") {
		if c.Consistency == k {
			return nil
		}
	}
	return kinds.NewOptionError("consistency", func(n func(string) string) string {
		msg := fmt.Sprintf("%s %q: %s takes SpiceDB's %v", n("consistency"), c.Consistency, kind, takes)
		if kind == "spicedb/inproc" {
			msg += " (its in-process checker, pkg/embedded, always checks at the datastore's head revision; spicedb/server takes minimize_latency and at_least_as_fresh)"
		}
		return msg
	})
}

// Promise is spicedb/inproc's consistency: pkg/embedded checks at the head revision, always.
func (c *SpiceDBInprocConfig) Promise() kinds.Consistency {
	return kinds.Consistency{Name: fullyConsistent, Default: c.Consistency == "",
		Why: "spicedb/inproc's checker (pkg/embedded) reads the datastore's head revision at every check"}
}

// Promise is spicedb/server's consistency. Asked none, its checks ask at_least_as_fresh the
// workload's load (so that none sees the world before it), which SpiceDB may answer from its
// quantized snapshot once that is past the load, as minimize_latency does.
func (c *SpiceDBServerConfig) Promise() kinds.Consistency {
	switch c.Consistency {
	case minimizeLatency:
		return kinds.Consistency{Name: minimizeLatency, Stale: quantizedStaleness,
			Why: "SpiceDB may answer from a snapshot up to its revision quantization (5 s by default) and 10 % more old"}
	case atLeastAsFresh:
		return kinds.Consistency{Name: atLeastAsFresh,
			Why: "each check asks at least as fresh as the last acknowledged write's token (written_at)"}
	case fullyConsistent:
		return kinds.Consistency{Name: fullyConsistent, Why: "each check reads SpiceDB's head revision"}
	}
	return kinds.Consistency{Name: atLeastAsFresh, Default: true, Stale: quantizedStaleness,
		Why: "authzbench's default: at least as fresh as the workload's load, never the last write's; past the load SpiceDB may answer " +
			"from a snapshot up to its revision quantization (5 s by default) and 10 % more old, as under minimize_latency"}
}

// checkConsistency is the Consistency every check asks, for the settings and the load's token;
// nil for at_least_as_fresh, whose token moves with each write (t.fresh).
func (t *spicedbServer) checkConsistency(written *v1.ZedToken) *v1.Consistency {
	switch t.settings.Consistency {
	case minimizeLatency:
		return &v1.Consistency{Requirement: &v1.Consistency_MinimizeLatency{MinimizeLatency: true}}
	case fullyConsistent:
		return &v1.Consistency{Requirement: &v1.Consistency_FullyConsistent{FullyConsistent: true}}
	case atLeastAsFresh:
		t.fresh = &atomic.Pointer[v1.Consistency]{}
		t.fresh.Store(&v1.Consistency{Requirement: &v1.Consistency_AtLeastAsFresh{AtLeastAsFresh: written}})
		return nil
	}
	return &v1.Consistency{Requirement: &v1.Consistency_AtLeastAsFresh{AtLeastAsFresh: written}}
}

// awaitSnapshot waits, before the clock, until SpiceDB answers minimize_latency from a snapshot
// that holds the workload's last relationship: a check asked so at once after the load may be
// answered from a snapshot before it, a world the run never had. It gives up after 15 s, 2.7
// times SpiceDB's default staleness.
func awaitSnapshot(ctx context.Context, conn grpc.ClientConnInterface, f *Fixture) error {
	if len(f.Relationships) == 0 {
		return nil
	}
	last := tuple.ToV1Relationship(f.Relationships[len(f.Relationships)-1].Rel)
	filter := &v1.RelationshipFilter{ResourceType: last.GetResource().GetObjectType(), OptionalResourceId: last.GetResource().GetObjectId(),
		OptionalRelation: last.GetRelation(), OptionalSubjectFilter: &v1.SubjectFilter{SubjectType: last.GetSubject().GetObject().GetObjectType(),
			OptionalSubjectId: last.GetSubject().GetObject().GetObjectId()}}
	if r := last.GetSubject().GetOptionalRelation(); r != "" {
		filter.OptionalSubjectFilter.OptionalRelation = &v1.SubjectFilter_RelationFilter{Relation: r}
	}
	client := v1.NewPermissionsServiceClient(conn)
	deadline := time.Now().Add(15 * time.Second)
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		stream, err := client.ReadRelationships(rctx, &v1.ReadRelationshipsRequest{RelationshipFilter: filter, OptionalLimit: 1,
			Consistency: &v1.Consistency{Requirement: &v1.Consistency_MinimizeLatency{MinimizeLatency: true}}})
		found := false
		if err == nil {
			_, err = stream.Recv()
			found = err == nil
		}
		cancel()
		if found {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("SpiceDB answered minimize_latency from a snapshot without the workload for 15 s after writing it: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
