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

// SpiceDB's LookupResources and LookupSubjects, each asked as an operation of its own
// (--operation list-objects, list-users): every resource of a type a subject has a permission
// on, or every subject of a type with a permission on a resource, streamed, judged whole
// against the reference model's set. A stream that fails after it has sent some members is a
// truncated answer, never ok; one that ends cleanly short of the set is wrong.

// Lists: spicedb/server asks LookupResources, LookupSubjects and CheckBulkPermissions over gRPC.
func (t *spicedbServer) Lists(op kinds.Operation) error {
	if op.IsList() || op == kinds.BatchCheck {
		return nil
	}
	return fmt.Errorf("spicedb/server does not answer %s yet", op)
}

// Lists: spicedb/inproc answers checks only: SpiceDB's pkg/embedded, which it runs, has Check
// and nothing else.
func (t *spicedbInproc) Lists(op kinds.Operation) error {
	return fmt.Errorf("spicedb/inproc answers checks only (SpiceDB's pkg/embedded has Check alone); spicedb/server answers %s", op)
}

// lookups are the LookupResources or LookupSubjects requests of a workload's list queries, and
// their expected sets of ids, built before the clock.
type lookups struct {
	op        kinds.Operation
	queries   *workload.ListQueries
	resources []*v1.LookupResourcesRequest
	subjects  []*v1.LookupSubjectsRequest
	sets      []*verify.Set
}

// prepareLookups builds the list queries of w for op, asked at consistency (the checks' own).
func prepareLookups(op kinds.Operation, w *workload.Workload, consistency *v1.Consistency) (*lookups, error) {
	q, err := workload.ListQueriesOf(w, op.Lists())
	if err != nil {
		return nil, fmt.Errorf("--operation %s: %w", op, err)
	}
	l := &lookups{op: op, queries: q, sets: make([]*verify.Set, len(q.Queries))}
	for i, lq := range q.Queries {
		listed := lq.ResourceType
		if op == kinds.ListUsers {
			listed = lq.SubjectType
			l.subjects = append(l.subjects, &v1.LookupSubjectsRequest{Consistency: consistency,
				Resource: &v1.ObjectReference{ObjectType: lq.Resource.Type, ObjectId: lq.Resource.ID}, Permission: lq.Permission,
				SubjectObjectType: lq.SubjectType})
		} else {
			l.resources = append(l.resources, &v1.LookupResourcesRequest{Consistency: consistency, ResourceObjectType: lq.ResourceType, Permission: lq.Permission,
				Subject: &v1.SubjectReference{Object: &v1.ObjectReference{ObjectType: lq.Subject.Type, ObjectId: lq.Subject.ID}}})
		}
		// SpiceDB answers ids of the type asked: the expected set is of ids too, so that an
		// answer is judged without building a string a member.
		ids := make([]string, len(lq.Expected))
		for k, o := range lq.Expected {
			ids[k] = strings.TrimPrefix(o, listed+":")
		}
		l.sets[i] = verify.NewSet(ids)
	}
	return l, nil
}

// lookupWorker asks each input's lookup over one gRPC connection and judges the streamed answer
// whole.
type lookupWorker struct {
	l       *lookups
	client  v1.PermissionsServiceClient
	timeout time.Duration
	got     []string // reused between answers
	judge   verify.Judge
}

// stream is what a lookup's stream gives, one member at a time.
type stream[T any] interface{ Recv() (T, error) }

func (w *lookupWorker) Decide(ctx context.Context, i int) verify.Outcome {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	n := w.l.queries.ByInput[i]
	what := "spicedb lookup-resources"
	var err error
	w.got = w.got[:0]
	if w.l.subjects != nil {
		what = "spicedb lookup-subjects"
		var s v1.PermissionsService_LookupSubjectsClient
		if s, err = w.client.LookupSubjects(ctx, w.l.subjects[n]); err == nil {
			err = drain(s, &w.got, func(r *v1.LookupSubjectsResponse) string {
				sub := r.GetSubject()
				id := sub.GetSubjectObjectId()
				if sub.GetPermissionship() != v1.LookupPermissionship_LOOKUP_PERMISSIONSHIP_HAS_PERMISSION || len(r.GetExcludedSubjects()) > 0 {
					// Conditional, or a wildcard less some: not a member the model expects.
					id += " (" + sub.GetPermissionship().String() + ")"
				}
				return id
			})
		}
	} else {
		var s v1.PermissionsService_LookupResourcesClient
		if s, err = w.client.LookupResources(ctx, w.l.resources[n]); err == nil {
			err = drain(s, &w.got, func(r *v1.LookupResourcesResponse) string {
				id := r.GetResourceObjectId()
				if r.GetPermissionship() != v1.LookupPermissionship_LOOKUP_PERMISSIONSHIP_HAS_PERMISSION {
					// A conditional resource is not in the set the model expects: an extra.
					id += " (" + r.GetPermissionship().String() + ")"
				}
				return id
			})
		}
	}
	switch {
	case err != nil && len(w.got) == 0:
		return kinds.GRPCCheckFailed(ctx, what, err)
	case err != nil:
		// Ended early: what came is a part of an answer, never a whole one.
		return verify.Outcome{Kind: verify.Cut, Err: fmt.Errorf("%s: the stream failed after %d members: %w", what, len(w.got), err)}
	}
	return w.judge.Judge(w.l.sets[n], w.got, false)
}

// drain reads s to its end, appending each member's id to got; its error is the stream's, nil
// at its clean end.
func drain[T any](s stream[T], got *[]string, id func(T) string) error {
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		*got = append(*got, id(r))
	}
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
	op := t.Common().Operation
	if op == kinds.BatchCheck {
		return t.startBulk(w)
	}
	if !op.IsList() {
		return nil
	}
	var consistency *v1.Consistency
	if len(t.checks) > 0 {
		consistency = t.checks[0].GetConsistency()
	}
	var err error
	t.lookups, err = prepareLookups(op, w, consistency)
	return err
}
