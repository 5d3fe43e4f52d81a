package spicedb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	v1 "github.com/authzed/authzed-go/proto/authzed/api/v1"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// SpiceDB's LookupResources, asked as an operation of its own (--operation list-objects): every
// resource of a type a subject has a permission on, streamed, judged whole against the reference
// model's set. A stream that fails after it has sent some resources is a truncated answer,
// never ok; one that ends cleanly short of the set is wrong.

// Lists: spicedb/server asks LookupResources over gRPC.
func (t *spicedbServer) Lists(op kinds.Operation) error {
	if op == kinds.ListObjects {
		return nil
	}
	return fmt.Errorf("spicedb/server does not answer %s yet", op)
}

// Lists: spicedb/inproc answers checks only: SpiceDB's pkg/embedded, which it runs, has Check
// and nothing else.
func (t *spicedbInproc) Lists(op kinds.Operation) error {
	return fmt.Errorf("spicedb/inproc answers checks only (SpiceDB's pkg/embedded has Check alone); spicedb/server answers %s with LookupResources", op)
}

// lookups are the LookupResources requests of a workload's list queries, and their expected
// sets of resource ids, built before the clock.
type lookups struct {
	queries *workload.ListQueries
	reqs    []*v1.LookupResourcesRequest
	sets    []*verify.Set
}

// prepareLookups builds the list queries of w as LookupResources requests asked at
// consistency (the checks' own).
func prepareLookups(w *workload.Workload, consistency *v1.Consistency) (*lookups, error) {
	q, err := workload.ListQueriesOf(w)
	if err != nil {
		return nil, fmt.Errorf("--operation %s: %w", kinds.ListObjects, err)
	}
	l := &lookups{queries: q, reqs: make([]*v1.LookupResourcesRequest, len(q.Queries)), sets: make([]*verify.Set, len(q.Queries))}
	for i, lq := range q.Queries {
		l.reqs[i] = &v1.LookupResourcesRequest{Consistency: consistency, ResourceObjectType: lq.ResourceType, Permission: lq.Permission,
			Subject: &v1.SubjectReference{Object: &v1.ObjectReference{ObjectType: lq.Subject.Type, ObjectId: lq.Subject.ID}}}
		// SpiceDB answers ids of the type asked: the expected set is of ids too, so that an
		// answer is judged without building a string a resource.
		ids := make([]string, len(lq.Expected))
		for k, o := range lq.Expected {
			ids[k] = strings.TrimPrefix(o, lq.ResourceType+":")
		}
		l.sets[i] = verify.NewSet(ids)
	}
	return l, nil
}

// lookupWorker asks each input's LookupResources over one gRPC connection and judges the
// streamed answer whole.
type lookupWorker struct {
	l       *lookups
	client  v1.PermissionsServiceClient
	timeout time.Duration
	got     []string // reused between answers
	judge   verify.Judge
}

func (w *lookupWorker) Decide(ctx context.Context, i int) verify.Outcome {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	n := w.l.queries.ByInput[i]
	stream, err := w.client.LookupResources(ctx, w.l.reqs[n])
	if err != nil {
		return kinds.GRPCCheckFailed(ctx, "spicedb lookup-resources", err)
	}
	w.got = w.got[:0]
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if len(w.got) == 0 {
				return kinds.GRPCCheckFailed(ctx, "spicedb lookup-resources", err)
			}
			// Ended early: what came is a part of an answer, never a whole one.
			return verify.Outcome{Kind: verify.Cut, Err: fmt.Errorf("spicedb lookup-resources: the stream failed after %d resources: %w", len(w.got), err)}
		}
		id := resp.GetResourceObjectId()
		if resp.GetPermissionship() != v1.LookupPermissionship_LOOKUP_PERMISSIONSHIP_HAS_PERMISSION {
			// A conditional resource is not in the set the model expects: an extra member.
			id += " (" + resp.GetPermissionship().String() + ")"
		}
		w.got = append(w.got, id)
	}
	return w.judge.Judge(w.l.sets[n], w.got, false)
}

// lookupWorker is a worker of its own connection asking the target's list queries.
func (t *spicedbServer) lookupWorker() kinds.Decider {
	conn, err := t.dial()
	if err != nil {
		return kinds.FailedDecider(err)
	}
	return &lookupWorker{l: t.lookups, client: v1.NewPermissionsServiceClient(conn), timeout: t.Common().RequestTimeout()}
}

// startLookups prepares the list queries, when the run asks for them, at the consistency the
// checks ask.
func (t *spicedbServer) startLookups(w *workload.Workload) error {
	if t.Common().Operation != kinds.ListObjects {
		return nil
	}
	var consistency *v1.Consistency
	if len(t.checks) > 0 {
		consistency = t.checks[0].GetConsistency()
	}
	var err error
	t.lookups, err = prepareLookups(w, consistency)
	return err
}
