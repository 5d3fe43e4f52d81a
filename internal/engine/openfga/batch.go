package openfga

import (
	"context"
	"fmt"
	"strconv"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// OpenFGA's BatchCheck, asked as an operation of its own (--operation batch-check): each request
// asks kinds.BatchSize checks of one store, the input's and those after it, each named by a
// correlation id, and the answer is judged whole: every decision as expected is ok, one
// otherwise is wrong, a check the answer has no decision for makes it truncated.

// prepareBatch keeps the workload's checks and what each expects; their requests are built per
// worker, in the store the target wrote.
func (l *listing) prepareBatch(ctx context.Context, p *engine.Prepared, w *workload.Workload) error {
	loaded, err := Load(ctx, p, w)
	if err != nil {
		return err
	}
	if n := len(loaded.Fixture.TupleSets); n > 1 {
		// Found at the start, before any load: each request would fail alike.
		return fmt.Errorf("--operation batch-check: workload %s is written into %d OpenFGA stores (the entities its requests carry); a batch asks one", w.Name, n)
	}
	l.op, l.assertions = kinds.BatchCheck, loaded.Fixture.Assertions
	l.expects = make([]workload.Expect, len(w.Inputs))
	for i, in := range w.Inputs {
		l.expects[i] = in.Expect
	}
	return nil
}

// batchWorker is a decider asking the batch of each input of api, in store s.
func (l *listing) batchWorker(api lister, s *Stores, timeout time.Duration, grpc bool) kinds.Decider {
	store, model, err := l.store(s)
	if err != nil {
		return kinds.FailedDecider(err)
	}
	items := make([]*openfgav1.BatchCheckItem, len(l.assertions))
	for k, a := range l.assertions {
		req, err := s.Prepare(a)
		if err != nil {
			return kinds.FailedDecider(err)
		}
		items[k] = &openfgav1.BatchCheckItem{TupleKey: req.GetTupleKey(), ContextualTuples: req.GetContextualTuples(),
			Context: req.GetContext(), CorrelationId: strconv.Itoa(k)}
	}
	laid, size := kinds.Batches(items)
	w := &batchWorker{api: api, timeout: timeout, grpc: grpc, size: size, got: make([]verify.BatchItem, size)}
	w.expects, _ = kinds.Batches(l.expects)
	w.reqs = make([]*openfgav1.BatchCheckRequest, len(items))
	for i := range items {
		w.reqs[i] = &openfgav1.BatchCheckRequest{StoreId: store, AuthorizationModelId: model, Checks: laid[i : i+size]}
	}
	return w
}

// batchWorker asks each input's batch and judges the answer whole.
type batchWorker struct {
	api     lister
	reqs    []*openfgav1.BatchCheckRequest
	expects []workload.Expect // laid out as the batches are
	size    int
	timeout time.Duration
	grpc    bool
	got     []verify.BatchItem // reused between answers
}

func (w *batchWorker) Decide(ctx context.Context, i int) verify.Outcome {
	if w.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.timeout)
		defer cancel()
	}
	req := w.reqs[i]
	resp, err := w.api.BatchCheck(ctx, req)
	if err != nil {
		if w.grpc {
			return kinds.GRPCCheckFailed(ctx, "openfga grpc batch-check", err)
		}
		return verify.Outcome{Kind: verify.EvalFailed, Err: fmt.Errorf("openfga batch-check: %s", status.Convert(err).Message())}
	}
	results := resp.GetResult()
	for k, c := range req.GetChecks() {
		r, ok := results[c.GetCorrelationId()]
		switch {
		case !ok:
			w.got[k] = verify.BatchItem{}
		case r.GetError() != nil:
			w.got[k] = verify.BatchItem{Err: fmt.Errorf("%s", r.GetError().GetMessage())}
		default:
			w.got[k] = verify.BatchItem{Decided: true, Allow: r.GetAllowed()}
		}
	}
	return verify.JudgeBatch(w.expects[i:i+w.size], w.got)
}

// BatchCheck asks OpenFGA's server a prepared batch of checks.
func (e *Engine) BatchCheck(ctx context.Context, req *openfgav1.BatchCheckRequest) (*openfgav1.BatchCheckResponse, error) {
	return e.srv.BatchCheck(ctx, req)
}
