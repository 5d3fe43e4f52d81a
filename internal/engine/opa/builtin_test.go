package opa

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/authzbench/authzbench/internal/workload"
)

// prepareOPA compiles the workload's policies and data with OPA in-process, ready to evaluate
// its query.
func prepareOPA(t *testing.T, w *workload.Workload) rego.PreparedEvalQuery {
	t.Helper()
	if !w.HasRego() {
		t.Fatalf("workload %s has no Rego version", w.Name)
	}
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

// checkAgainstModel evaluates every input of w with OPA and fails the test for each one whose
// decision differs from the reference model's (its Expect); an undefined or non-boolean result
// is a failure too, and so is a workload without inputs, which would check nothing.
func checkAgainstModel(t *testing.T, w *workload.Workload) {
	t.Helper()
	if len(w.Inputs) == 0 {
		t.Fatalf("workload %s has no inputs", w.Name)
	}
	pq := prepareOPA(t, w)
	const maxReported = 20
	wrong := 0
	for i, in := range w.Inputs {
		allow, defined, err := opaDecide(pq, in.JSON)
		var problem string
		switch {
		case err != nil:
			problem = "evaluation failed: " + err.Error()
		case !defined:
			problem = "OPA's result is undefined or not a boolean"
		case in.Expect == workload.Unverified:
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
}

func expectOf(allow bool) workload.Expect {
	if allow {
		return workload.ExpectAllow
	}
	return workload.ExpectDeny
}

// OPA decides every input of every built-in as its reference model says: every listed workload
// (the -opt rewrites among them) and points of each generated family, from the smallest to a
// large one, on the default seed and on others, which reach other corners of the policies (other
// data, other inputs). A rule written wrong in a policy, its data or a generated file fails here.
func TestBuiltinsMatchReferenceModel(t *testing.T) {
	type point struct {
		name   string
		inputs int
	}
	var points []point
	for _, n := range workload.Names() {
		points = append(points, point{n, workload.DefaultInputs})
	}
	for _, n := range []string{"rbac-data-10", "rbac-data-1000", "docshare-3",
		"gdrive-10", "gdrive-200", "github-10", "github-200", "tinytodo-10", "tinytodo-200"} {
		points = append(points, point{n, workload.DefaultInputs})
	}
	for _, kind := range []string{"path", "ip", "principal", "jwt-claim"} {
		for _, n := range []int{1, 10, workload.MaxRules} {
			// At the largest N, a hundred inputs: an N-rules ip policy evaluates every CIDR
			// rule for each, and the test need not take minutes.
			inputs := workload.DefaultInputs
			if n == workload.MaxRules {
				if testing.Short() {
					continue
				}
				inputs = 100
			}
			for _, suffix := range []string{"", "-indexed"} {
				points = append(points, point{fmt.Sprintf("rules-%s-%d%s", kind, n, suffix), inputs})
			}
		}
	}
	seeds := []int64{workload.DefaultSeed, 1, 2, 3}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, p := range points {
		for _, seed := range seeds {
			if seed != workload.DefaultSeed && (strings.HasPrefix(p.name, "rules-") || p.inputs < workload.DefaultInputs) {
				continue // the family's rules are the same at every seed
			}
			t.Run(fmt.Sprintf("%s/seed-%d", p.name, seed), func(t *testing.T) {
				w, err := workload.BuiltinWith(p.name, seed, p.inputs)
				if err != nil {
					t.Fatal(err)
				}
				checkAgainstModel(t, w)
			})
		}
	}
}

// Each built-in's version is written as its policy and the series of its runs say: the query of
// its package, the scaling series' style, one `allow if` per rule of a rule-count point.
func TestBuiltinVersions(t *testing.T) {
	for name, want := range map[string]struct{ query, series string }{
		"nop":                   {"data.authzbench.nop.allow", ""},
		"rbac":                  {"data.authzbench.rbac.allow", ""},
		"rbac-data-10":          {"data.authzbench.rbac.allow", "rbac-data/rego"},
		"rbac-opt":              {"data.authzbench.rbac_opt.allow", ""},
		"docshare-5":            {"data.authzbench.docshare.allow", ""},
		"gdrive-10":             {"data.authzbench.gdrive.allow", "gdrive/rego"},
		"github-10":             {"data.authzbench.github.allow", "github/rego"},
		"tinytodo-10":           {"data.authzbench.tinytodo.allow", "tinytodo/rego"},
		"rules-path-10":         {"data.authzbench.rules.path.allow", "rules-path/rego-rules"},
		"rules-path-10-indexed": {"data.authzbench.rules.path.allow", "rules-path/rego-indexed"},
		"rules-jwt-claim-7":     {"data.authzbench.rules.jwt_claim.allow", "rules-jwt-claim/rego-rules"},
	} {
		w, err := workload.BuiltinWith(name, workload.DefaultSeed, 10)
		if err != nil {
			t.Fatal(err)
		}
		if w.Query != want.query || w.Scale.Series("opa") != want.series || !Engine.Written(w) {
			t.Errorf("%s: query %q, series %q, written %t; want %q, %q, true", name, w.Query, w.Scale.Series("opa"), Engine.Written(w), want.query, want.series)
		}
	}
	for _, n := range []int{1, 10, 137} {
		w, err := workload.BuiltinWith(fmt.Sprintf("rules-ip-%d", n), workload.DefaultSeed, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(w.Policies[0].Content), "\nallow if "); got != n {
			t.Errorf("rules-ip-%d: the Rego holds %d allow rules; want %d", n, got, n)
		}
	}
}

func TestNopAllowsEverything(t *testing.T) {
	w, err := workload.BuiltinWith("nop", workload.DefaultSeed, 200)
	if err != nil {
		t.Fatal(err)
	}
	pq := prepareOPA(t, w)
	for i, in := range w.Inputs {
		if allow, defined, err := opaDecide(pq, in.JSON); err != nil || !defined || !allow {
			t.Fatalf("OPA on input %d: allow %v, defined %v, error %v", i, allow, defined, err)
		}
	}
}

// TestAPITamperedTokenIsDenied takes allowed inputs, raises the token's privileges in its
// payload while keeping the signature, and checks that OPA then denies, as the model does
// (the workload package's test of the same name).
func TestAPITamperedTokenIsDenied(t *testing.T) {
	w, err := workload.BuiltinWith("api", workload.DefaultSeed, 200)
	if err != nil {
		t.Fatal(err)
	}
	pq := prepareOPA(t, w)
	tampered := 0
	for i, in := range w.Inputs {
		if in.Expect != workload.ExpectAllow {
			continue
		}
		var req workload.APIInput
		if err := json.Unmarshal(in.JSON, &req); err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(req.Token, ".")
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatal(err)
		}
		var claims map[string]any
		if err := json.Unmarshal(payload, &claims); err != nil {
			t.Fatal(err)
		}
		claims["tier"] = "enterprise"
		claims["scope"] = claims["scope"].(string) + " admin accounts:any"
		parts[1] = base64.RawURLEncoding.EncodeToString(mustJSON(claims))
		req.Token = strings.Join(parts, ".")
		if allow, reason := w.Model.(*workload.APIData).Decide(req); allow || reason != "deny: bad signature" {
			t.Fatalf("input %d with a tampered payload: model says %v, %q; want deny: bad signature", i, allow, reason)
		}
		opaAllow, defined, err := opaDecide(pq, mustJSON(req))
		if err != nil || !defined || opaAllow {
			t.Errorf("input %d with a tampered payload: OPA allow %v, defined %v, error %v; want a deny", i, opaAllow, defined, err)
		}
		tampered++
	}
	if tampered < 20 {
		t.Errorf("only %d allowed inputs to tamper with", tampered)
	}
}

func TestRiskPolicySize(t *testing.T) {
	m, err := ast.ParseModule("risk.rego", string(riskPolicy))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Rules); n < 60 {
		t.Errorf("risk.rego has %d rules, want at least 60", n)
	}
	if n := bytes.Count(riskPolicy, []byte("\n")); n < 400 {
		t.Errorf("risk.rego has %d lines, want at least 400", n)
	}
}
