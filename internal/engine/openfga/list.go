package openfga

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"github.com/openfga/openfga/pkg/server"
	serverconfig "github.com/openfga/openfga/pkg/server/config"
	"github.com/openfga/openfga/pkg/storage/memory"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// OpenFGA's ListObjects and ListUsers, each asked as an operation of its own (--operation
// list-objects, list-users): every object of a type a user has a relation to, or every user
// with a relation to an object, judged whole against the reference model's set. OpenFGA cuts
// either answer without saying so, at a deadline (--listObjects-deadline, --listUsers-deadline,
// 3 s by default) or a number of results (--listObjects-max-results, --listUsers-max-results,
// 1,000): a short answer that reached either is counted as truncated, never as ok; one that
// reached neither is wrong.

// listLimits are where OpenFGA cuts a list answer: MaxResults members (0: none), or the
// Deadline.
type listLimits struct {
	MaxResults uint32
	Deadline   time.Duration
}

// defaultListLimits are OpenFGA's own, by operation, which its server and pkg/server take when
// not told.
var defaultListLimits = map[kinds.Operation]listLimits{
	kinds.ListObjects: {MaxResults: serverconfig.DefaultListObjectsMaxResults, Deadline: serverconfig.DefaultListObjectsDeadline},
	kinds.ListUsers:   {MaxResults: serverconfig.DefaultListUsersMaxResults, Deadline: serverconfig.DefaultListUsersDeadline},
}

// cut says whether an answer of n members, where want were expected, after elapsed may have
// been cut by the limits: it reached the cap on results, or the whole answer is larger than the
// cap (ListUsers cut at 5 answered 4 when an exclusion removed one of the 5 it had collected), or
// it came back after 90 % of the deadline (OpenFGA's clock starts after the request has reached
// it).
func (l listLimits) cut(n, want int, elapsed time.Duration) bool {
	return (l.MaxResults > 0 && (n >= int(l.MaxResults) || want > int(l.MaxResults))) || (l.Deadline > 0 && elapsed >= l.Deadline*9/10)
}

// listing is a target's list queries and their expected sets, built at its Start, before the
// clock; nil queries for a run of checks.
type listing struct {
	op      kinds.Operation
	queries *workload.ListQueries
	sets    []*verify.Set
	// A batch-check run's checks (batch.go), one per input, and what each expects.
	assertions []Assertion
	expects    []workload.Expect
}

// prepare builds the list queries of w and their expected sets when op asks for them: objects
// as OpenFGA names them (type:id), users by their id alone, as ListUsers answers them.
func (l *listing) prepare(ctx context.Context, p *engine.Prepared, op kinds.Operation, w *workload.Workload) error {
	if op == kinds.BatchCheck {
		return l.prepareBatch(ctx, p, w)
	}
	if !op.IsList() {
		return nil
	}
	q, err := workload.ListQueriesOf(w, op.Lists())
	if err != nil {
		return fmt.Errorf("--operation %s: %w", op, err)
	}
	l.op, l.queries, l.sets = op, q, make([]*verify.Set, len(q.Queries))
	for i, lq := range q.Queries {
		members := lq.Expected
		if op == kinds.ListUsers {
			members = make([]string, len(lq.Expected))
			for k, u := range lq.Expected {
				members[k] = strings.TrimPrefix(u, lq.SubjectType+":")
			}
		}
		l.sets[i] = verify.NewSet(members)
	}
	return nil
}

func (l *listing) on() bool { return l.queries != nil || l.expects != nil }

// store is the store the workload was written into: a relationship family's world is one
// tuple set, and a list query asks one store.
func (l *listing) store(s *Stores) (store, model string, err error) {
	if s == nil || len(s.Stores) != 1 {
		n := 0
		if s != nil {
			n = len(s.Stores)
		}
		return "", "", fmt.Errorf("openfga %s: the workload is in %d stores; a list query asks one", l.op, n)
	}
	return s.Stores[0], s.Models[0], nil
}

// lister is OpenFGA's two list calls, on its server in process or a gRPC client of one.
type lister interface {
	ListObjects(context.Context, *openfgav1.ListObjectsRequest) (*openfgav1.ListObjectsResponse, error)
	ListUsers(context.Context, *openfgav1.ListUsersRequest) (*openfgav1.ListUsersResponse, error)
	BatchCheck(context.Context, *openfgav1.BatchCheckRequest) (*openfgav1.BatchCheckResponse, error)
}

// grpcLister is a gRPC client of OpenFGA as a lister (its calls take call options).
type grpcLister struct {
	c openfgav1.OpenFGAServiceClient
}

func (g grpcLister) ListObjects(ctx context.Context, r *openfgav1.ListObjectsRequest) (*openfgav1.ListObjectsResponse, error) {
	return g.c.ListObjects(ctx, r)
}

func (g grpcLister) BatchCheck(ctx context.Context, r *openfgav1.BatchCheckRequest) (*openfgav1.BatchCheckResponse, error) {
	return g.c.BatchCheck(ctx, r)
}

func (g grpcLister) ListUsers(ctx context.Context, r *openfgav1.ListUsersRequest) (*openfgav1.ListUsersResponse, error) {
	return g.c.ListUsers(ctx, r)
}

// worker is a decider asking the queries of l of api in store s, within limits.
func (l *listing) worker(api lister, s *Stores, limits listLimits, timeout time.Duration, grpc bool) kinds.Decider {
	if l.op == kinds.BatchCheck {
		return l.batchWorker(api, s, timeout, grpc)
	}
	store, model, err := l.store(s)
	if err != nil {
		return kinds.FailedDecider(err)
	}
	w := &listWorker{l: l, api: api, limits: limits, timeout: timeout, grpc: grpc}
	for _, q := range l.queries.Queries {
		if l.op == kinds.ListUsers {
			w.users = append(w.users, &openfgav1.ListUsersRequest{StoreId: store, AuthorizationModelId: model,
				Object: &openfgav1.Object{Type: q.Resource.Type, Id: q.Resource.ID}, Relation: q.Permission,
				UserFilters: []*openfgav1.UserTypeFilter{{Type: q.SubjectType}}})
		} else {
			w.objects = append(w.objects, &openfgav1.ListObjectsRequest{StoreId: store, AuthorizationModelId: model,
				Type: q.ResourceType, Relation: q.Permission, User: q.Subject.String()})
		}
	}
	return w
}

// listWorker asks each input's list query and judges the answer whole.
type listWorker struct {
	l       *listing
	api     lister
	objects []*openfgav1.ListObjectsRequest
	users   []*openfgav1.ListUsersRequest
	limits  listLimits
	timeout time.Duration // 0: none of its own (in process)
	grpc    bool
	judge   verify.Judge
	got     []string // reused between answers
}

func (w *listWorker) Decide(ctx context.Context, i int) verify.Outcome {
	if w.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.timeout)
		defer cancel()
	}
	n := w.l.queries.ByInput[i]
	began := time.Now()
	var err error
	if w.users != nil {
		var resp *openfgav1.ListUsersResponse
		if resp, err = w.api.ListUsers(ctx, w.users[n]); err == nil {
			w.got = w.got[:0]
			for _, u := range resp.GetUsers() {
				// A user of the type asked is named by its id; anything else (a wildcard, a
				// userset, another type) is no member of the expected set: an extra.
				if o := u.GetObject(); o != nil && o.GetType() == w.users[n].GetUserFilters()[0].GetType() {
					w.got = append(w.got, o.GetId())
				} else {
					w.got = append(w.got, u.String())
				}
			}
		}
	} else {
		var resp *openfgav1.ListObjectsResponse
		if resp, err = w.api.ListObjects(ctx, w.objects[n]); err == nil {
			w.got = append(w.got[:0], resp.GetObjects()...)
		}
	}
	if err != nil {
		if w.grpc {
			return kinds.GRPCCheckFailed(ctx, "openfga grpc "+w.l.op.String(), err)
		}
		return verify.Outcome{Kind: verify.EvalFailed, Err: fmt.Errorf("openfga %s: %s", w.l.op, status.Convert(err).Message())}
	}
	return w.judge.Judge(w.l.sets[n], w.got, w.limits.cut(len(w.got), w.l.sets[n].Len(), time.Since(began)))
}

// ListObjects asks OpenFGA's server for every object of a prepared request's type the user has
// its relation to.
func (e *Engine) ListObjects(ctx context.Context, req *openfgav1.ListObjectsRequest) (*openfgav1.ListObjectsResponse, error) {
	return e.srv.ListObjects(ctx, req)
}

// ListUsers asks OpenFGA's server for every user of the filter's type with the relation to a
// prepared request's object.
func (e *Engine) ListUsers(ctx context.Context, req *openfgav1.ListUsersRequest) (*openfgav1.ListUsersResponse, error) {
	return e.srv.ListUsers(ctx, req)
}

// Lists: openfga/inproc asks ListObjects, ListUsers and BatchCheck of its server in process.
func (t *openfgaInproc) Lists(op kinds.Operation) error {
	if op.IsList() || op == kinds.BatchCheck {
		return nil
	}
	return fmt.Errorf("openfga/inproc does not answer %s yet", op)
}

// listWorker is a worker asking the target's list queries; the engine's limits are OpenFGA's
// defaults, or those the engine was started with.
func (t *openfgaInproc) listWorker() kinds.Decider {
	return t.lists.worker(t.engine, t.engine.Stores, t.engine.listLimits(t.lists.op), 0, false)
}

// listLimits are the engine's limits of op: OpenFGA's defaults unless it was started with
// others (startListing).
func (e *Engine) listLimits(op kinds.Operation) listLimits {
	if e.limits != nil {
		return *e.limits
	}
	return defaultListLimits[op]
}

// Lists: openfga/server asks ListObjects, ListUsers and BatchCheck over gRPC, of the server it
// starts (whose gRPC address it chose) or of a running one whose gRPC API the URL names (api
// grpc).
func (t *openfgaServer) Lists(op kinds.Operation) error {
	if !op.IsList() && op != kinds.BatchCheck {
		return fmt.Errorf("openfga/server does not answer %s yet", op)
	}
	if t.cfg.URL != "" && t.api != "grpc" {
		return fmt.Errorf("openfga/server with a url asks %s over gRPC: give api grpc and the url of its gRPC API", op)
	}
	return nil
}

// listWorker is a worker asking the target's list queries over a gRPC connection of its own.
func (t *openfgaServer) listWorker() kinds.Decider {
	conn, err := t.dial()
	if err != nil {
		return kinds.FailedDecider(err)
	}
	return t.lists.worker(grpcLister{openfgav1.NewOpenFGAServiceClient(conn)}, t.listStores,
		serverListLimits(t.lists.op, t.cfg.Args), t.Common().RequestTimeout(), true)
}

// serverListLimits are the limits of op in a server started with args: OpenFGA's defaults,
// unless the args set the operation's --listObjects-max-results or --listObjects-deadline
// (--listUsers-...). A running server the user gave is taken to run with the defaults.
func serverListLimits(op kinds.Operation, args []string) listLimits {
	l := defaultListLimits[op]
	prefix := "--listObjects-"
	if op == kinds.ListUsers {
		prefix = "--listUsers-"
	}
	for i := 0; i < len(args); i++ {
		name, value, ok := strings.Cut(args[i], "=")
		if !ok && i+1 < len(args) && (name == prefix+"max-results" || name == prefix+"deadline") {
			i++
			value = args[i]
		}
		switch name {
		case prefix + "max-results":
			if n, err := strconv.ParseUint(value, 10, 32); err == nil {
				l.MaxResults = uint32(n)
			}
		case prefix + "deadline":
			if d, err := time.ParseDuration(value); err == nil {
				l.Deadline = d
			}
		}
	}
	return l
}

// startListing is Start with OpenFGA's ListObjects and ListUsers limits set (0 results: no
// cap): where it cuts an answer, for the tests that count a cut answer as truncated.
func startListing(ctx context.Context, f *Fixture, limits listLimits) (*Engine, error) {
	if f.Model == nil {
		return nil, errors.New("start openfga: no model")
	}
	srv, err := server.NewServerWithOpts(server.WithDatastore(memory.New()),
		server.WithListObjectsMaxResults(limits.MaxResults), server.WithListObjectsDeadline(limits.Deadline),
		server.WithListUsersMaxResults(limits.MaxResults), server.WithListUsersDeadline(limits.Deadline), defaultExperimentals())
	if err != nil {
		return nil, fmt.Errorf("start openfga: %w", err)
	}
	e := &Engine{srv: srv, limits: &limits}
	if e.Stores, err = WriteFixture(ctx, srv, f); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// defaultExperimentals are the experimental features OpenFGA's run enables by default
// (serverconfig's, pipeline_list_objects among them), which pkg/server alone leaves off: without
// them ListObjects in process took its older algorithm, some 300 times slower over rbac than the
// same OpenFGA served (measured 2026-11-28 on the shared 2-core machine: 300 ms against 1 ms).
func defaultExperimentals() server.OpenFGAServiceV1Option {
	return server.WithExperimentals(serverconfig.DefaultConfig().Experimentals...)
}
