package workload

import (
	"bytes"
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"
)

// Shared limits on a built-in workload's input mix: enough of each decision that an engine
// answering always-allow or always-deny fails loudly.
const (
	minAllowShare = 0.30
	maxAllowShare = 0.70
)

// prepareOPA compiles the workload's policies and data with OPA in-process, ready to evaluate
// its query.
func prepareOPA(t *testing.T, w *Workload) rego.PreparedEvalQuery {
	t.Helper()
	opts := []func(*rego.Rego){rego.Query(w.Query)}
	for _, f := range w.Policies {
		opts = append(opts, rego.Module(f.Name, string(f.Content)))
	}
	data := map[string]any{}
	if len(w.Data) > 0 {
		// util.UnmarshalJSON keeps numbers exact (json.Number), as OPA's loader does.
		if err := util.UnmarshalJSON(w.Data, &data); err != nil {
			t.Fatalf("workload %s: data is not a JSON object: %v", w.Name, err)
		}
	}
	opts = append(opts, rego.Store(inmem.NewFromObject(data)))
	pq, err := rego.New(opts...).PrepareForEval(context.Background())
	if err != nil {
		t.Fatalf("workload %s: compile policies: %v", w.Name, err)
	}
	return pq
}

// opaDecide evaluates one input document. defined is false when the query has no boolean
// result; err is set when evaluation failed.
func opaDecide(pq rego.PreparedEvalQuery, input []byte) (allow, defined bool, err error) {
	// Parse to an AST value, not through json.Unmarshal into any, which would round large
	// integers such as nanosecond timestamps to float64.
	v, err := ast.ValueFromReader(bytes.NewReader(input))
	if err != nil {
		return false, false, err
	}
	rs, err := pq.Eval(context.Background(), rego.EvalParsedInput(v))
	if err != nil {
		return false, false, err
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return false, false, nil
	}
	b, ok := rs[0].Expressions[0].Value.(bool)
	return b, ok, nil
}

// checkAgainstOPA evaluates every input of w with OPA and fails the test for each one whose
// decision differs from its Expect (an undefined or non-boolean result is a failure too). It
// also checks that between 30 % and 70 % of the inputs expect allow, and returns how many
// inputs each deny reason of the reference model accounts for.
func checkAgainstOPA(t *testing.T, w *Workload) (denyReasons map[string]int) {
	t.Helper()
	if len(w.Inputs) == 0 {
		t.Fatalf("workload %s has no inputs", w.Name)
	}
	pq := prepareOPA(t, w)
	denyReasons = map[string]int{}
	const maxReported = 20
	wrong := 0
	for i, in := range w.Inputs {
		if in.Expect == ExpectDeny {
			denyReasons[in.Reason]++
		}
		allow, defined, err := opaDecide(pq, in.JSON)
		var problem string
		switch {
		case err != nil:
			problem = "evaluation failed: " + err.Error()
		case !defined:
			problem = "OPA's result is undefined or not a boolean"
		case in.Expect == Unverified:
			problem = "input has no expected decision"
		case expectOf(allow) != in.Expect:
			problem = "OPA decided " + expectOf(allow).String()
		default:
			continue
		}
		wrong++
		if wrong <= maxReported {
			t.Errorf("workload %s input %d: %s; the model expects %s (%s)\ninput: %s",
				w.Name, i, problem, in.Expect, in.Reason, in.JSON)
		}
	}
	if wrong > maxReported {
		t.Errorf("workload %s: %d of %d inputs wrong, only the first %d shown", w.Name, wrong, len(w.Inputs), maxReported)
	}

	allows, _, _ := w.Counts()
	share := float64(allows) / float64(len(w.Inputs))
	if share < minAllowShare || share > maxAllowShare {
		t.Errorf("workload %s: %d of %d inputs (%.1f %%) expect allow; want between %.0f %% and %.0f %%",
			w.Name, allows, len(w.Inputs), 100*share, 100*minAllowShare, 100*maxAllowShare)
	}
	t.Logf("workload %s: %d inputs, %.1f %% allow, deny reasons %v", w.Name, len(w.Inputs), 100*share, denyReasons)
	return denyReasons
}

// handCase is a hand-written input with the decision and the reason the reference model must
// give for it.
type handCase[I any] struct {
	name   string
	in     I
	allow  bool
	reason string
}

// checkHandCases runs each case through the reference model and through OPA with the
// workload's policy and data, so a disagreement on a hand-written case shows up by name rather
// than somewhere among the generated inputs.
func checkHandCases[I any](t *testing.T, w *Workload, cases []handCase[I], decide func(I) (bool, string)) {
	t.Helper()
	pq := prepareOPA(t, w)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := mustJSON(tc.in)
			allow, reason := decide(tc.in)
			if allow != tc.allow || reason != tc.reason {
				t.Errorf("reference model: %v, %q; want %v, %q\ninput: %s", allow, reason, tc.allow, tc.reason, in)
			}
			opaAllow, defined, err := opaDecide(pq, in)
			if err != nil || !defined || opaAllow != tc.allow {
				t.Errorf("OPA: allow %v, defined %v, error %v; want allow %v\ninput: %s", opaAllow, defined, err, tc.allow, in)
			}
		})
	}
}
