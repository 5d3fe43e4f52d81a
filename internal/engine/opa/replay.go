package opa

import (
	"context"
	"fmt"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/authzbench/authzbench/internal/engine"
	// OPA's decision logs, read into workloads to replay (it registers its reader).
	_ "github.com/authzbench/authzbench/internal/engine/opa/opalog"
	"github.com/authzbench/authzbench/internal/workload"
)

// Redecide evaluates every replayed event's input with the workload's policy, in process
// (engine.Redecider), with the query every OPA target of the run uses.
func (opa) Redecide(ctx context.Context, p *engine.Prepared, w *workload.Workload) ([]string, error) {
	pq, err := Compiled(ctx, p, w)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", w.Name, err)
	}
	out := make([]string, len(w.Inputs))
	for i, in := range w.Inputs {
		if out[i], err = redecided(ctx, pq, in.JSON, w.UndefinedAs); err != nil {
			return nil, fmt.Errorf("%s: decision %s: %w", in.Source, in.DecisionID, err)
		}
	}
	return out, nil
}

// redecided is the policy's decision for one input: allow, deny, undefined, or what else it gave.
func redecided(ctx context.Context, pq rego.PreparedEvalQuery, input []byte, undefinedAs workload.Expect) (string, error) {
	v, err := ast.ValueFromReader(strings.NewReader(string(input)))
	if err != nil {
		return "", fmt.Errorf("input: %w", err)
	}
	rs, err := pq.Eval(ctx, rego.EvalParsedInput(v))
	if err != nil {
		return "error: " + err.Error(), nil
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		if undefinedAs != workload.Unverified {
			return undefinedAs.String(), nil
		}
		return "undefined", nil
	}
	switch b := rs[0].Expressions[0].Value.(type) {
	case bool:
		if b {
			return workload.ExpectAllow.String(), nil
		}
		return workload.ExpectDeny.String(), nil
	default:
		return fmt.Sprintf("not a boolean: %v", b), nil
	}
}
