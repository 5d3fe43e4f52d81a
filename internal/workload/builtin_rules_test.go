package workload

import (
	"fmt"
	"strings"
	"testing"
)

// Every kind and style, at a small N and at the largest, denies only where no rule matches and
// allows only by the last rule (OPA's and Cedar's versions are checked against the model in
// their packages).
func TestRulesMatchReferenceModel(t *testing.T) {
	sizes := []int{1, 10, MaxRules}
	if testing.Short() {
		sizes = []int{1, 10}
	}
	for _, k := range ruleKinds {
		for _, n := range sizes {
			for _, suffix := range []string{"", "-indexed"} {
				name := fmt.Sprintf("rules-%s-%d%s", k.name, n, suffix)
				t.Run(name, func(t *testing.T) {
					// At the largest N, a hundred inputs: an N-rules ip policy evaluates every
					// CIDR rule for each, and the test need not take minutes.
					inputs := DefaultInputs
					if n == MaxRules {
						inputs = 100
					}
					w, err := buildRules(name, DefaultSeed, inputs)
					if err != nil {
						t.Fatal(err)
					}
					if w.Name != name || w.Description == "" {
						t.Errorf("workload identity: name %q, description %q", w.Name, w.Description)
					}
					reasons := checkInputs(t, w)
					if len(reasons) != 1 || reasons["deny: no rule matches"] == 0 {
						t.Errorf("deny reasons %v; want only \"deny: no rule matches\"", reasons)
					}
					for i, in := range w.Inputs {
						if in.Expect == ExpectAllow && in.Reason != "allow: last rule" {
							t.Fatalf("input %d is allowed by %q; every allowed input must match only the last rule", i, in.Reason)
						}
					}
				})
			}
		}
	}
}

// The reference model itself, by hand: a request matching an earlier rule is allowed by that
// rule, one matching the last by the last, and the neighbours of a rule's value match nothing.
func TestRulesDecide(t *testing.T) {
	kind := func(name string) *ruleKind {
		for i := range ruleKinds {
			if ruleKinds[i].name == name {
				return &ruleKinds[i]
			}
		}
		t.Fatalf("no kind %s", name)
		return nil
	}
	tests := []struct {
		kind   string
		q      RulesRequest
		reason string
	}{
		{"path", RulesRequest{Path: "/api/svc-00002/items"}, "allow: last rule"},
		{"path", RulesRequest{Path: "/api/svc-00001/items"}, "allow: rule 1"},
		{"path", RulesRequest{Path: "/api/svc-00003/items"}, "deny: no rule matches"},
		{"path", RulesRequest{Path: "/api/svc-00002/items/x"}, "deny: no rule matches"},
		{"ip", RulesRequest{SourceIP: "10.0.2.200"}, "allow: last rule"},
		{"ip", RulesRequest{SourceIP: "10.0.0.1"}, "allow: rule 0"},
		{"ip", RulesRequest{SourceIP: "10.0.3.1"}, "deny: no rule matches"},
		{"ip", RulesRequest{SourceIP: "11.0.2.1"}, "deny: no rule matches"},
		{"ip", RulesRequest{SourceIP: "not an address"}, "deny: no rule matches"},
		{"principal", RulesRequest{Principal: "spiffe://cluster.local/ns/ns-00002/sa/app"}, "allow: last rule"},
		{"principal", RulesRequest{Principal: "spiffe://cluster.local/ns/ns-00002/sa/other"}, "deny: no rule matches"},
		{"jwt-claim", RulesRequest{Groups: []string{"team-1", "group-00002"}}, "allow: last rule"},
		{"jwt-claim", RulesRequest{Groups: []string{"group-00000", "group-00002"}}, "allow: rule 0"},
		{"jwt-claim", RulesRequest{Groups: []string{"group-00003"}}, "deny: no rule matches"},
		{"jwt-claim", RulesRequest{}, "deny: no rule matches"},
	}
	for _, tc := range tests {
		allow, reason := newRulesModel(kind(tc.kind), 3).decide(tc.q)
		if reason != tc.reason || allow != strings.HasPrefix(tc.reason, "allow") {
			t.Errorf("%s %+v: %v, %q; want %q", tc.kind, tc.q, allow, reason, tc.reason)
		}
	}
}

func TestRulesNames(t *testing.T) {
	good := map[string]*Scale{
		"rules-path-1":                &Scale{Family: "rules-path", Param: "rules", N: 1},
		"rules-ip-10000":              &Scale{Family: "rules-ip", Param: "rules", N: 10000},
		"rules-jwt-claim-100-indexed": &Scale{Family: "rules-jwt-claim", Param: "rules", N: 100},
	}
	for name, want := range good {
		w, err := Builtin(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s := w.Scale; s == nil || s.Family != want.Family || s.Param != want.Param || s.N != want.N {
			t.Errorf("%s: scale %+v; want %+v", name, s, want)
		}
	}

	bad := map[string]string{
		"rules-path-0":         "N is 0; rules-<kind>-<N>[-indexed] takes N from 1 to 10000",
		"rules-path-10001":     "N is 10001",
		"rules-path-99999999":  "N is 99999999",
		"rules-foo-10":         `unknown rule kind "foo"; want rules-<kind>-<N>[-indexed] with kind one of path, ip, principal, jwt-claim`,
		"rules-path-":          "N a whole number from 1 to 10000",
		"rules-path":           "want rules-<kind>-<N>[-indexed], N a whole number",
		"rules-path-ten":       "N a whole number from 1 to 10000",
		"rules-path-10-sorted": "N a whole number",
		"rules-path-010":       "without leading zeros",
		"rules-path--10":       "N a whole number",
		"rules-jwt-10":         `unknown rule kind "jwt"`,
		"rules-":               `unknown rule kind ""`,
	}
	for name, want := range bad {
		_, err := Builtin(name)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"`+name+`"`) {
			t.Errorf("%s: error %v; want one naming the workload and saying %q", name, err, want)
		}
	}
	if _, err := Builtin("rulez-path-10"); err == nil || !strings.Contains(err.Error(), `unknown workload "rulez-path-10"`) {
		t.Errorf("an unknown name: error %v", err)
	}
}

// Generated workloads are the same from one build to the next, and with another seed other
// inputs, as TestBuiltinsAreDeterministic asks of the others.
func TestRulesAreDeterministic(t *testing.T) {
	for _, name := range []string{"rules-ip-50", "rules-jwt-claim-50-indexed"} {
		a, _ := buildRules(name, DefaultSeed, 300)
		b, _ := buildRules(name, DefaultSeed, 300)
		assertSameWorkload(t, a, b)
		c, _ := buildRules(name, DefaultSeed+1, 300)
		if string(c.Inputs[0].JSON) == string(a.Inputs[0].JSON) {
			t.Errorf("%s: another seed gave the same first input", name)
		}
	}
}
