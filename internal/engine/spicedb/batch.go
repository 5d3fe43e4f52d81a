package spicedb

import (
	"context"
	"fmt"
	"time"

	v1 "github.com/authzed/authzed-go/proto/authzed/api/v1"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// SpiceDB's CheckBulkPermissions, asked as an operation of its own (--operation batch-check):
// each request asks kinds.BatchSize checks, the input's and those after it, at the consistency
// the checks ask, and the answer is judged whole: every decision as expected is ok, one
// otherwise is wrong, a check the answer has no decision for (left out, an error or a
// conditional answer in its place) makes it truncated.

// bulk is a batch-check run's requests, one per input, and what each check expects, laid out as
// the batches are.
type bulk struct {
	reqs    []*v1.CheckBulkPermissionsRequest
	expects []workload.Expect
	size    int
}

// startBulk prepares the batches, when the run asks for them, from the checks Start built.
func (t *spicedbServer) startBulk(w *workload.Workload) error {
	if t.Common().Operation != kinds.BatchCheck || len(t.checks) == 0 {
		return nil
	}
	items := make([]*v1.CheckBulkPermissionsRequestItem, len(t.checks))
	for k, c := range t.checks {
		items[k] = &v1.CheckBulkPermissionsRequestItem{Resource: c.GetResource(), Permission: c.GetPermission(), Subject: c.GetSubject(), Context: c.GetContext()}
	}
	expects := make([]workload.Expect, len(w.Inputs))
	for i, in := range w.Inputs {
		expects[i] = in.Expect
	}
	laid, size := kinds.Batches(items)
	b := &bulk{size: size, reqs: make([]*v1.CheckBulkPermissionsRequest, len(items))}
	b.expects, _ = kinds.Batches(expects)
	for i := range items {
		b.reqs[i] = &v1.CheckBulkPermissionsRequest{Consistency: t.checks[0].GetConsistency(), Items: laid[i : i+size]}
	}
	t.bulk = b
	return nil
}

// bulkWorker asks each input's batch over a gRPC connection of its own.
func (t *spicedbServer) bulkWorker() kinds.Decider {
	conn, err := t.dial()
	if err != nil {
		return kinds.FailedDecider(err)
	}
	return &bulkWorker{b: t.bulk, client: v1.NewPermissionsServiceClient(conn), timeout: t.Common().RequestTimeout(),
		got: make([]verify.BatchItem, t.bulk.size)}
}

type bulkWorker struct {
	b       *bulk
	client  v1.PermissionsServiceClient
	timeout time.Duration
	got     []verify.BatchItem // reused between answers
}

func (w *bulkWorker) Decide(ctx context.Context, i int) verify.Outcome {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	resp, err := w.client.CheckBulkPermissions(ctx, w.b.reqs[i])
	if err != nil {
		return kinds.GRPCCheckFailed(ctx, "spicedb check-bulk-permissions", err)
	}
	pairs := resp.GetPairs()
	for k := range w.got {
		if k >= len(pairs) {
			w.got[k] = verify.BatchItem{}
			continue
		}
		p := pairs[k]
		if e := p.GetError(); e != nil {
			w.got[k] = verify.BatchItem{Err: status.ErrorProto(e)}
			continue
		}
		switch ps := p.GetItem().GetPermissionship(); ps {
		case v1.CheckPermissionResponse_PERMISSIONSHIP_HAS_PERMISSION:
			w.got[k] = verify.BatchItem{Decided: true, Allow: true}
		case v1.CheckPermissionResponse_PERMISSIONSHIP_NO_PERMISSION:
			w.got[k] = verify.BatchItem{Decided: true}
		default:
			w.got[k] = verify.BatchItem{Err: fmt.Errorf("permissionship %s", ps)}
		}
	}
	return verify.JudgeBatch(w.b.expects[i:i+w.b.size], w.got)
}
