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

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// OpenFGA's ListObjects, asked as an operation of its own (--operation list-objects): every
// object of a type a user has a relation to, judged whole against the reference model's set.
// OpenFGA cuts its answer without saying so, at a deadline (--listObjects-deadline, 3 s by
// default) or a number of results (--listObjects-max-results, 1,000): a short answer that
// reached either is counted as truncated, never as ok; one that reached neither is wrong.

// listLimits are where OpenFGA cuts a ListObjects answer: MaxResults objects (0: none), or the
// Deadline.
type listLimits struct {
	MaxResults uint32
	Deadline   time.Duration
}

// defaultListLimits are OpenFGA's own, which its server and pkg/server take when not told.
var defaultListLimits = listLimits{MaxResults: serverconfig.DefaultListObjectsMaxResults, Deadline: serverconfig.DefaultListObjectsDeadline}

// cut says whether an answer of n objects after elapsed may have been cut by the limits. The
// deadline counts from 90 % of it: OpenFGA's clock starts after the request has reached it.
func (l listLimits) cut(n int, elapsed time.Duration) bool {
	return (l.MaxResults > 0 && n >= int(l.MaxResults)) || (l.Deadline > 0 && elapsed >= l.Deadline*9/10)
}

// listing is a target's list queries and their expected sets, built at its Start, before the
// clock; nil queries for a run of checks.
type listing struct {
	queries *workload.ListQueries
	sets    []*verify.Set
}

// prepare builds the list queries of w and their expected sets when op asks for them.
func (l *listing) prepare(op kinds.Operation, w *workload.Workload) error {
	if op != kinds.ListObjects {
		return nil
	}
	q, err := workload.ListQueriesOf(w)
	if err != nil {
		return fmt.Errorf("--operation %s: %w", op, err)
	}
	l.queries, l.sets = q, make([]*verify.Set, len(q.Queries))
	for i, lq := range q.Queries {
		l.sets[i] = verify.NewSet(lq.Expected)
	}
	return nil
}

func (l *listing) on() bool { return l.queries != nil }

// requests are the ListObjects requests of the queries, in the store the workload was written
// into (a relationship family's world is one tuple set).
func (l *listing) requests(s *Stores) ([]*openfgav1.ListObjectsRequest, error) {
	if s == nil || len(s.Stores) != 1 {
		n := 0
		if s != nil {
			n = len(s.Stores)
		}
		return nil, fmt.Errorf("openfga list-objects: the workload is in %d stores; a list query asks one", n)
	}
	reqs := make([]*openfgav1.ListObjectsRequest, len(l.queries.Queries))
	for i, q := range l.queries.Queries {
		reqs[i] = &openfgav1.ListObjectsRequest{StoreId: s.Stores[0], AuthorizationModelId: s.Models[0],
			Type: q.ResourceType, Relation: q.Permission, User: q.Subject.String()}
	}
	return reqs, nil
}

// listObjects is what asks ListObjects: OpenFGA's server in process, or a gRPC client of one.
type listObjects func(context.Context, *openfgav1.ListObjectsRequest) (*openfgav1.ListObjectsResponse, error)

// listWorker asks each input's list query and judges the answer whole.
type listWorker struct {
	l       *listing
	ask     listObjects
	reqs    []*openfgav1.ListObjectsRequest
	limits  listLimits
	timeout time.Duration // 0: none of its own (in process)
	judge   verify.Judge
	grpc    bool
}

func (w *listWorker) Decide(ctx context.Context, i int) verify.Outcome {
	if w.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.timeout)
		defer cancel()
	}
	n := w.l.queries.ByInput[i]
	began := time.Now()
	resp, err := w.ask(ctx, w.reqs[n])
	if err != nil {
		if w.grpc {
			return kinds.GRPCCheckFailed(ctx, "openfga grpc list-objects", err)
		}
		return verify.Outcome{Kind: verify.EvalFailed, Err: fmt.Errorf("openfga list-objects: %s", status.Convert(err).Message())}
	}
	got := resp.GetObjects()
	return w.judge.Judge(w.l.sets[n], got, w.limits.cut(len(got), time.Since(began)))
}

// ListObjects asks OpenFGA's server for every object of a prepared request's type the user has
// its relation to.
func (e *Engine) ListObjects(ctx context.Context, req *openfgav1.ListObjectsRequest) (*openfgav1.ListObjectsResponse, error) {
	return e.srv.ListObjects(ctx, req)
}

// Lists: openfga/inproc asks ListObjects of its server in process.
func (t *openfgaInproc) Lists(op kinds.Operation) error {
	if op == kinds.ListObjects {
		return nil
	}
	return fmt.Errorf("openfga/inproc does not answer %s yet", op)
}

// listWorker is a worker asking the target's list queries; the engine's limits are OpenFGA's
// defaults, or those the engine was started with.
func (t *openfgaInproc) listWorker() kinds.Decider {
	reqs, err := t.lists.requests(t.engine.Stores)
	if err != nil {
		return kinds.FailedDecider(err)
	}
	return &listWorker{l: &t.lists, ask: t.engine.ListObjects, reqs: reqs, limits: t.engine.listLimits()}
}

// listLimits are the engine's ListObjects limits: OpenFGA's defaults unless it was started
// with others (startListing).
func (e *Engine) listLimits() listLimits {
	if e.limits != nil {
		return *e.limits
	}
	return defaultListLimits
}

// Lists: openfga/server asks ListObjects over gRPC, of the server it starts (whose gRPC address
// it chose) or of a running one whose gRPC API the URL names (api grpc).
func (t *openfgaServer) Lists(op kinds.Operation) error {
	if op != kinds.ListObjects {
		return fmt.Errorf("openfga/server does not answer %s yet", op)
	}
	if t.cfg.URL != "" && t.api != "grpc" {
		return errors.New("openfga/server with a url asks list-objects over gRPC: give api grpc and the url of its gRPC API")
	}
	return nil
}

// listWorker is a worker asking the target's list queries over a gRPC connection of its own.
func (t *openfgaServer) listWorker() kinds.Decider {
	reqs, err := t.lists.requests(t.listStores)
	if err != nil {
		return kinds.FailedDecider(err)
	}
	conn, err := t.dial()
	if err != nil {
		return kinds.FailedDecider(err)
	}
	client := openfgav1.NewOpenFGAServiceClient(conn)
	ask := func(ctx context.Context, r *openfgav1.ListObjectsRequest) (*openfgav1.ListObjectsResponse, error) {
		return client.ListObjects(ctx, r)
	}
	return &listWorker{l: &t.lists, ask: ask, reqs: reqs, limits: serverListLimits(t.cfg.Args),
		timeout: t.Common().RequestTimeout(), grpc: true}
}

// serverListLimits are the limits of a server started with args: OpenFGA's defaults, unless
// the args set --listObjects-max-results or --listObjects-deadline. A running server the user
// gave is taken to run with the defaults.
func serverListLimits(args []string) listLimits {
	l := defaultListLimits
	for i := 0; i < len(args); i++ {
		name, value, ok := strings.Cut(args[i], "=")
		if !ok && i+1 < len(args) && (name == "--listObjects-max-results" || name == "--listObjects-deadline") {
			i++
			value = args[i]
		}
		switch name {
		case "--listObjects-max-results":
			if n, err := strconv.ParseUint(value, 10, 32); err == nil {
				l.MaxResults = uint32(n)
			}
		case "--listObjects-deadline":
			if d, err := time.ParseDuration(value); err == nil {
				l.Deadline = d
			}
		}
	}
	return l
}

// startListing is Start with OpenFGA's ListObjects limits set (0 results: no cap): where it
// cuts an answer, for the tests that count a cut answer as truncated.
func startListing(ctx context.Context, f *Fixture, limits listLimits) (*Engine, error) {
	if f.Model == nil {
		return nil, errors.New("start openfga: no model")
	}
	srv, err := server.NewServerWithOpts(server.WithDatastore(memory.New()),
		server.WithListObjectsMaxResults(limits.MaxResults), server.WithListObjectsDeadline(limits.Deadline), defaultExperimentals())
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
