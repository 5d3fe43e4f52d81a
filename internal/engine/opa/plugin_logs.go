package opa

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/plugins/logs"
	"github.com/open-policy-agent/opa/v1/rego"
	opaserver "github.com/open-policy-agent/opa/v1/server"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/topdown"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/extauthz"
)

// decideLogged decides with OPA's decision logger on, doing per check what OPA-Envoy's
// envoy_ext_authz_grpc does when it is: a decision ID, a storage transaction held from the
// evaluation to the logging (OPA's masking and drop policies are evaluated in it), the
// evaluation's metrics, and the event handed to OPA's decision logger inside the check, whose
// error answers the check (codes.Unknown), as OPA-Envoy's does. The eval timer is still the
// evaluation alone; the logging is in the check's time the client measures.
func (p *opaPlugin) decideLogged(ctx context.Context, lp *logs.Plugin, pq *rego.PreparedEvalQuery, cfg *pluginConfig, input map[string]any) (extauthz.Decision, int64, error) {
	txn, err := p.manager.Store.NewTransaction(ctx)
	if err != nil {
		return extauthz.Decision{}, 0, status.Errorf(codes.Internal, "start a storage transaction: %v", err)
	}
	defer p.manager.Store.Abort(ctx, txn)
	m := metrics.New()
	start := time.Now()
	rs, evalErr := pq.Eval(ctx, rego.EvalInput(input), rego.EvalTransaction(txn), rego.EvalMetrics(m))
	evalNS := time.Since(start).Nanoseconds()
	d, err := decisionOf(cfg.query, rs, evalErr)

	var in any = input
	info := &opaserver.Info{Timestamp: time.Now(), Input: &in, Path: cfg.Path, DecisionID: decisionID(), Metrics: m, Txn: txn}
	if evalErr != nil {
		info.Error = loggedError(evalErr)
	} else {
		var result any
		if len(rs) > 0 && len(rs[0].Expressions) > 0 {
			result = rs[0].Expressions[0].Value
		}
		info.Results = &result
	}
	if logErr := lp.Log(ctx, info); logErr != nil {
		return extauthz.Decision{}, evalNS, status.Errorf(codes.Unknown, "log decision %s: %v", info.DecisionID, logErr)
	}
	return d, evalNS, err
}

// loggedError is an evaluation error as OPA's decision log encodes it: OPA's own errors as they
// are, any other wrapped so that it encodes to JSON.
func loggedError(err error) error {
	switch err.(type) {
	case *storage.Error, *topdown.Error:
		return err
	}
	return &plainError{Message: err.Error()}
}

type plainError struct {
	Message string `json:"message"`
}

func (e *plainError) Error() string { return e.Message }

// decisionID is a random UUID (version 4), as OPA-Envoy gives each decision.
func decisionID() string {
	var b [16]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read does not fail
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
