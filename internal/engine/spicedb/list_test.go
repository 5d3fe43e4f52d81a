package spicedb

import (
	"context"
	"slices"
	"strings"
	"testing"

	v1 "github.com/authzed/authzed-go/proto/authzed/api/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// askLists asks every input's list query of d and counts the outcomes by kind.
func askLists(t *testing.T, d kinds.Decider, inputs int) map[verify.Kind]int {
	t.Helper()
	counts := map[verify.Kind]int{}
	for i := range inputs {
		out := d.Decide(context.Background(), i)
		counts[out.Kind]++
		if out.Kind != verify.Listed && out.Kind != verify.WrongSet && out.Kind != verify.Cut {
			t.Fatalf("input %d: %+v: want a list answer", i+1, out)
		}
	}
	return counts
}

// LookupResources of SpiceDB's server answers every rbac list query with the reference model's
// set; one object added to an expectation, or a relationship deleted behind the engine's back,
// is counted wrong; a stream that ends early, after some resources, is counted truncated.
func TestLookupResourcesJudgedWhole(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs, w.Relationships.Checks = w.Inputs[:40], w.Relationships.Checks[:40]
	lists, err := workload.ListQueriesOf(w, workload.Objects)
	if err != nil {
		t.Fatal(err)
	}
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1, Operation: kinds.ListObjects}
	if err := kinds.TakesOperation("spicedb/inproc", nil, kinds.ListObjects); err == nil || !strings.Contains(err.Error(), "pkg/embedded has Check alone") {
		t.Errorf("spicedb/inproc list-objects: %v, want it refused, saying why", err)
	}
	if err := kinds.TakesOperation("spicedb/server", nil, kinds.ListObjects); err != nil {
		t.Errorf("spicedb/server list-objects: %v", err)
	}
	tg, err := kinds.New("spicedb/server", common, &SpiceDBServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Stop(context.Background()) })
	d := tg.Worker()
	defer kinds.CloseDecider(d)
	if got := askLists(t, d, len(w.Inputs)); got[verify.Listed] != len(w.Inputs) {
		t.Fatalf("%v: want all %d answers the reference model's set", got, len(w.Inputs))
	}
	lw := d.(*lookupWorker)

	t.Run("one object added to an expectation", func(t *testing.T) {
		first := lists.ByInput[0]
		orig := lw.l.sets[first]
		t.Cleanup(func() { lw.l.sets[first] = orig })
		ids := []string{"document-doc-9999"}
		for _, o := range lists.Queries[first].Expected {
			ids = append(ids, strings.TrimPrefix(o, "resource:"))
		}
		lw.l.sets[first] = verify.NewSet(ids)
		want := 0
		for _, q := range lists.ByInput {
			if q == first {
				want++
			}
		}
		if got := askLists(t, d, len(w.Inputs)); got[verify.WrongSet] != want || got[verify.Listed] != len(w.Inputs)-want {
			t.Errorf("%v: want %d wrong and the rest listed", got, want)
		}
		if out := d.Decide(context.Background(), 0); out.Err == nil || !strings.Contains(out.Err.Error(), "1 missing (document-doc-9999)") {
			t.Errorf("wrong answer's message %v: want it to name the missing object", out.Err)
		}
	})

	t.Run("relationship deleted behind the engine", func(t *testing.T) {
		q, n, owned := ownedOnly(t, w, lists)
		id := strings.TrimPrefix(owned, "resource:")
		rel := &v1.Relationship{Resource: &v1.ObjectReference{ObjectType: "resource", ObjectId: id}, Relation: "owner",
			Subject: &v1.SubjectReference{Object: &v1.ObjectReference{ObjectType: "user", ObjectId: q.Subject.ID}}}
		conn := tg.(*spicedbServer)
		c, err := conn.dial()
		if err != nil {
			t.Fatal(err)
		}
		client := v1.NewPermissionsServiceClient(c)
		write := func(op v1.RelationshipUpdate_Operation) *v1.ZedToken {
			resp, err := client.WriteRelationships(context.Background(), &v1.WriteRelationshipsRequest{Updates: []*v1.RelationshipUpdate{{Operation: op, Relationship: rel}}})
			if err != nil {
				t.Fatal(err)
			}
			return resp.GetWrittenAt()
		}
		at := write(v1.RelationshipUpdate_OPERATION_DELETE)
		t.Cleanup(func() { write(v1.RelationshipUpdate_OPERATION_TOUCH) })
		// The lookups ask at least as fresh as the load; this one as fresh as the delete.
		req := lw.l.resources[n]
		saved := req.Consistency
		req.Consistency = &v1.Consistency{Requirement: &v1.Consistency_AtLeastAsFresh{AtLeastAsFresh: at}}
		t.Cleanup(func() { req.Consistency = saved })
		i := slices.Index(lists.ByInput, n)
		if out := d.Decide(context.Background(), i); out.Kind != verify.WrongSet || !strings.Contains(out.Err.Error(), "1 missing ("+id+")") {
			t.Errorf("after deleting %s#owner@%s: %+v, want a wrong set naming it missing", owned, q.Subject, out)
		}
	})

	t.Run("stream ended early", func(t *testing.T) {
		orig := lw.client
		t.Cleanup(func() { lw.client = orig })
		lw.client = cutAfter{PermissionsServiceClient: orig, n: 3}
		cut := 0
		for _, q := range lists.ByInput {
			if len(lists.Queries[q].Expected) > 3 {
				cut++
			}
		}
		got := askLists(t, d, len(w.Inputs))
		if got[verify.Cut] != cut || got[verify.Listed] != len(w.Inputs)-cut {
			t.Errorf("%v: want the %d answers longer than 3 truncated and the rest listed", got, cut)
		}
	})
}

// cutAfter cancels each LookupResources call once its first n resources have come, as a client
// whose deadline passes mid-stream does, and answers what gRPC answers a cancelled stream (a
// stream whose last messages were already buffered could otherwise still deliver them whole).
type cutAfter struct {
	v1.PermissionsServiceClient
	n int
}

func (c cutAfter) LookupResources(ctx context.Context, in *v1.LookupResourcesRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[v1.LookupResourcesResponse], error) {
	ctx, cancel := context.WithCancel(ctx)
	s, err := c.PermissionsServiceClient.LookupResources(ctx, in, opts...)
	if err != nil {
		cancel()
		return nil, err
	}
	return &cutStream[v1.LookupResourcesResponse]{ServerStreamingClient: s, left: c.n, ctx: ctx, cancel: cancel}, nil
}

// cutStream ends a lookup's stream, cancelled, once left messages have come.
type cutStream[T any] struct {
	grpc.ServerStreamingClient[T]
	left   int
	ctx    context.Context
	cancel context.CancelFunc
}

func (s *cutStream[T]) Recv() (*T, error) {
	if s.left == 0 {
		s.cancel()
		return nil, status.FromContextError(s.ctx.Err()).Err()
	}
	s.left--
	return s.ServerStreamingClient.Recv()
}

// ownedOnly is a list query of w whose user reads an object only as its owner
// (ListQueries.OwnedOnly), with its number and that object.
func ownedOnly(t *testing.T, w *workload.Workload, lists *workload.ListQueries) (*workload.ListQuery, int, string) {
	t.Helper()
	n, o, ok := lists.OwnedOnly(w)
	if !ok {
		t.Fatal("no list query's user reads an object only as its owner")
	}
	return &lists.Queries[n], n, o
}

// LookupSubjects answers every rbac list-users query (every user who may act on the input's
// resource) with the reference model's set; one user added to an expectation is counted wrong,
// and a stream that ends early is counted truncated.
func TestLookupSubjectsJudgedWhole(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs, w.Relationships.Checks = w.Inputs[:30], w.Relationships.Checks[:30]
	lists, err := workload.ListQueriesOf(w, workload.Subjects)
	if err != nil {
		t.Fatal(err)
	}
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1, Operation: kinds.ListUsers}
	tg, err := kinds.New("spicedb/server", common, &SpiceDBServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Stop(context.Background()) })
	d := tg.Worker()
	defer kinds.CloseDecider(d)
	if got := askLists(t, d, len(w.Inputs)); got[verify.Listed] != len(w.Inputs) {
		t.Fatalf("%v: want all %d answers the reference model's set", got, len(w.Inputs))
	}
	lw := d.(*lookupWorker)
	first := lists.ByInput[0]
	orig := lw.l.sets[first]
	ids := []string{"user-9999"}
	for _, u := range lists.Queries[first].Expected {
		ids = append(ids, strings.TrimPrefix(u, "user:"))
	}
	lw.l.sets[first] = verify.NewSet(ids)
	if out := d.Decide(context.Background(), 0); out.Kind != verify.WrongSet || !strings.Contains(out.Err.Error(), "1 missing (user-9999)") {
		t.Errorf("one user added to the expectation: %+v, want a wrong set naming it", out)
	}
	lw.l.sets[first] = orig
	lw.client = cutSubjects{PermissionsServiceClient: lw.client}
	cut := 0
	for _, q := range lists.ByInput {
		if len(lists.Queries[q].Expected) > 3 {
			cut++
		}
	}
	if got := askLists(t, d, len(w.Inputs)); got[verify.Cut] != cut || got[verify.Listed] != len(w.Inputs)-cut {
		t.Errorf("streams cut after 3: %v, want the %d answers longer than 3 truncated and the rest listed", got, cut)
	}
}

// cutSubjects cancels each LookupSubjects call once 3 subjects have come, as cutAfter does
// LookupResources.
type cutSubjects struct{ v1.PermissionsServiceClient }

func (c cutSubjects) LookupSubjects(ctx context.Context, in *v1.LookupSubjectsRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[v1.LookupSubjectsResponse], error) {
	ctx, cancel := context.WithCancel(ctx)
	s, err := c.PermissionsServiceClient.LookupSubjects(ctx, in, opts...)
	if err != nil {
		cancel()
		return nil, err
	}
	return &cutStream[v1.LookupSubjectsResponse]{ServerStreamingClient: s, left: 3, ctx: ctx, cancel: cancel}, nil
}

// CheckBulkPermissions: every batch of 50 rbac checks decided as the reference model expects;
// one expectation turned is a wrong answer in each of the 50 batches holding it.
func TestCheckBulkPermissionsJudgedWhole(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs, w.Relationships.Checks = w.Inputs[:60], w.Relationships.Checks[:60]
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1, Operation: kinds.BatchCheck}
	tg, err := kinds.New("spicedb/server", common, &SpiceDBServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Stop(context.Background()) })
	d := tg.Worker()
	defer kinds.CloseDecider(d)
	if got := askLists(t, d, len(w.Inputs)); got[verify.Listed] != len(w.Inputs) {
		t.Fatalf("%v: want all %d batches decided as expected", got, len(w.Inputs))
	}
	bw := d.(*bulkWorker)
	for _, k := range []int{30, 90} { // input 30, laid out twice: the batches wrap around
		bw.b.expects[k] = map[workload.Expect]workload.Expect{workload.ExpectAllow: workload.ExpectDeny, workload.ExpectDeny: workload.ExpectAllow}[bw.b.expects[k]]
	}
	if got := askLists(t, d, len(w.Inputs)); got[verify.WrongSet] != kinds.BatchSize || got[verify.Listed] != len(w.Inputs)-kinds.BatchSize {
		t.Errorf("one expectation turned: %v, want the %d batches holding it wrong", got, kinds.BatchSize)
	}
}
