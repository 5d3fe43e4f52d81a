package all

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/authzbench/authzbench/internal/engine/cedar"
	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/workload"
)

// Tests that hold two engines' versions of a built-in to each other, rule by rule, beyond each
// agreeing with the reference model (which each engine's package tests): they need both
// engines, which only this package links.

// riskNoForbid are the Rego deny rules that are no forbid in Cedar: the score and the
// tier's limits decide there by which tier permit, if any, applies.
var riskNoForbid = []string{"score too low", "amount over tier limit", "dti over tier limit", "ltv over tier limit"}

// Cedar decides each generated input through the
// same rules as Rego, not merely with the same answer: the forbids that apply are exactly the
// Rego deny rules of the same name that hold (Cedar's "unknown employment type" aside, which
// Rego expresses as an undefined score), and an approved loan is permitted by the tier the
// reference model names.
func TestRiskDeniesForTheSameReason(t *testing.T) {
	w, err := workload.Builtin("risk")
	if err != nil {
		t.Fatal(err)
	}
	e := prepareCedar(t, w)
	pq := prepareRego(t, w, "data.authzbench.risk.deny")
	seen := map[string]int{}
	for i, in := range w.Inputs {
		req, err := e.ParseRequest(cedar.Engine.Request(in))
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		_, diag := e.Decide(&req)
		var ids, forbids, permits []string
		for _, r := range diag.Reasons {
			id := string(r.PolicyID)
			ids = append(ids, id)
			if strings.HasPrefix(id, "tier ") {
				permits = append(permits, id)
			} else if id != "unknown employment type" {
				forbids = append(forbids, id)
			}
		}
		sort.Strings(forbids)
		regoDenies := regoDenies(t, pq, in.JSON)
		regoDenies = slices.DeleteFunc(regoDenies, func(r string) bool { return slices.Contains(riskNoForbid, r) })
		if !slices.Equal(forbids, regoDenies) {
			t.Errorf("input %d: Cedar's forbids %v, Rego's hard stops %v\nCedar request: %s", i, forbids, regoDenies, cedar.Engine.Request(in))
		}
		seen[in.Reason]++
		var ok bool
		reason, isDeny := strings.CutPrefix(in.Reason, "deny: ")
		switch {
		case isDeny && slices.Contains(riskNoForbid, reason):
			ok = len(forbids) == 0 && len(permits) == 0
		case isDeny:
			ok = len(permits) == 0 && slices.Contains(ids, reason)
		default:
			tier, _ := strings.CutPrefix(in.Reason, "allow: ")
			ok = slices.Equal(permits, []string{"tier " + tier}) && len(forbids) == 0
		}
		if !ok {
			t.Errorf("input %d: the model says %q but Cedar's deciding policies are %v\nCedar request: %s", i, in.Reason, ids, cedar.Engine.Request(in))
		}
	}
	t.Logf("reasons: %v", seen)
	for _, r := range []string{"allow: prime", "allow: near_prime", "allow: subprime", "deny: score too low",
		"deny: amount over tier limit", "deny: dti over tier limit"} {
		if seen[r] == 0 {
			t.Errorf("no generated input is decided with %q", r)
		}
	}
}

// regoDenies returns the sorted names of the Rego deny rules that hold for an input.
func regoDenies(t *testing.T, pq rego.PreparedEvalQuery, input []byte) []string {
	t.Helper()
	v, err := ast.ValueFromReader(bytes.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := pq.Eval(context.Background(), rego.EvalParsedInput(v))
	if err != nil || len(rs) != 1 || len(rs[0].Expressions) != 1 {
		t.Fatalf("evaluate deny: %v, %v", rs, err)
	}
	set, ok := rs[0].Expressions[0].Value.([]any)
	if !ok {
		t.Fatalf("deny is %T, not a set", rs[0].Expressions[0].Value)
	}
	names := []string{}
	for _, r := range set {
		names = append(names, r.(string))
	}
	sort.Strings(names)
	return names
}

// prepareRego compiles the query of the workload's Rego version over its data, with OPA's own
// library, for a test that holds Cedar's decisions to Rego's rules one by one.
func prepareRego(t *testing.T, w *workload.Workload, query string) rego.PreparedEvalQuery {
	t.Helper()
	opts := []func(*rego.Rego){rego.Query(query)}
	for _, f := range w.Policies {
		opts = append(opts, rego.Module(f.Name, string(f.Content)))
	}
	data := map[string]any{}
	// util.UnmarshalJSON keeps numbers exact (json.Number), as OPA's loader does.
	if err := util.UnmarshalJSON(w.Data, &data); err != nil {
		t.Fatalf("workload %s: data is not a JSON object: %v", w.Name, err)
	}
	opts = append(opts, rego.Store(inmem.NewFromObject(data)))
	pq, err := rego.New(opts...).PrepareForEval(context.Background())
	if err != nil {
		t.Fatalf("workload %s: compile policies: %v", w.Name, err)
	}
	return pq
}

// prepareCedar loads the workload's Cedar version with cedar-go, validating its policies and
// entities against its schema.
func prepareCedar(t *testing.T, w *workload.Workload) *cedarengine.Engine {
	t.Helper()
	v := w.VersionFor(cedar.Name)
	if v == nil {
		t.Fatalf("workload %s has no Cedar version", w.Name)
	}
	f := v.Own.(*cedar.Files)
	var pols []cedarengine.Source
	for _, p := range f.Policies {
		pols = append(pols, cedarengine.Source{Name: p.Name, Text: p.Content})
	}
	var entities, schema *cedarengine.Source
	if len(f.Entities) > 0 {
		entities = &cedarengine.Source{Name: "entities.json", Text: f.Entities}
	}
	if f.Schema != nil {
		schema = &cedarengine.Source{Name: f.Schema.Name, Text: f.Schema.Content}
	}
	e, err := cedarengine.New(pols, entities, schema)
	if err != nil {
		t.Fatalf("workload %s: load Cedar version: %v", w.Name, err)
	}
	return e
}
