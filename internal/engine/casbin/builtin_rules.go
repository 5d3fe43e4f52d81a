package casbin

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

// The rule-count family, rules-<kind>-<N>, in Casbin: N policy lines, one per rule, walked by
// the matcher in order, as Casbin evaluates a matcher that reads p once per line until one
// allows. Every request matches none of them (deny) or only the last (allow), so every decision
// walks all N: how that walk grows with N is what Casbin's users ask (casbin#778, casbin#681).
//
// The -indexed style, one Rego rule looking the request's value up in data, is in Casbin one
// role link per rule (g, value, allowed) and a matcher that asks the role manager, with no
// policy line to walk; written where the lookup key is the request's value as it is (path,
// principal).

// rulesKind is one kind of rule in Casbin.
type rulesKind struct {
	// token names the policy definition's one value, what each line holds.
	token string
	// matcher compares the request with one line.
	matcher string
	// indexed looks the request's value up among the role links; "" for a kind without the
	// style, and noIndexed says why.
	indexed, noIndexed string
}

var rulesKinds = map[string]rulesKind{
	"rules-path":      {token: "path", matcher: "r.path == p.path", indexed: `g(r.path, "allowed")`},
	"rules-principal": {token: "principal", matcher: "r.principal == p.principal", indexed: `g(r.principal, "allowed")`},
	// Casbin's own CIDR match, as its IP-based models write it.
	"rules-ip": {token: "network", matcher: "ipMatch(r.ip, p.network)",
		noIndexed: "its one rule looks the request's /24 network up, which Rego cuts from the address; a Casbin role link is looked up by the request's value as it is, " +
			"and a matcher cannot cut an address to its network, so no lookup style is written (rules-ip-<N> walks the N networks with ipMatch)"},
	// The token's groups are a list among the request's values; in asks whether a line's group
	// is one of them.
	"rules-jwt-claim": {token: "group", matcher: "p.group in r.groups",
		noIndexed: "its one rule looks each of the token's groups up; a Casbin matcher cannot walk a list of the request's values to look each up, " +
			"so no lookup style is written (rules-jwt-claim-<N> walks the N groups with in)"},
}

// rulesFamilyOf is the Casbin family of a rule-count workload, nil where it has no version.
func rulesFamilyOf(w *workload.Workload) *builtinFamily {
	k, ok := rulesKinds[w.Scale.Family]
	if !ok {
		return nil
	}
	indexed := strings.HasSuffix(w.Name, "-indexed")
	if indexed && k.indexed == "" {
		return nil
	}
	f := &builtinFamily{style: "casbin-policies", requests: eachInput(rulesRequest),
		files: func(w *workload.Workload) (Files, error) { return rulesFiles(w, k, indexed) }}
	if indexed {
		f.style = "casbin-roles"
	}
	return f
}

func rulesIndexedWhyNot(w *workload.Workload) string {
	if k, ok := rulesKinds[w.Scale.Family]; ok && k.noIndexed != "" {
		return k.noIndexed
	}
	return "none is written for it"
}

// rulesRequest is one request of the family: every kind's value, as every request through a
// proxy carries a path, a source address, a peer identity and a token, each kind's rules
// reading one of them.
func rulesRequest(in workload.Input) ([]byte, error) {
	var q struct {
		Path      string `json:"path"`
		SourceIP  string `json:"source_ip"`
		Principal string `json:"principal"`
		Claims    struct {
			Groups []string `json:"groups"`
		} `json:"claims"`
	}
	if err := json.Unmarshal(in.JSON, &q); err != nil {
		return nil, err
	}
	groups := make([]any, len(q.Claims.Groups))
	for i, g := range q.Claims.Groups {
		groups[i] = g
	}
	return requestJSON(q.Path, q.SourceIP, q.Principal, groups)
}

// rulesFiles writes the N rules of w, in rule order.
func rulesFiles(w *workload.Workload, k rulesKind, indexed bool) (Files, error) {
	values := w.Scale.RuleValues()
	if len(values) == 0 {
		return Files{}, fmt.Errorf("the family %s gives no rules", w.Scale.Family)
	}
	var model strings.Builder
	if indexed {
		fmt.Fprintf(&model, "# %s, written by authzbench: %d rules, each a role link (g, value, allowed) the matcher looks the request's value up among.\n", w.Name, len(values))
	} else {
		fmt.Fprintf(&model, "# %s, written by authzbench: %d rules, one policy line each, which the matcher walks in order.\n", w.Name, len(values))
	}
	fmt.Fprintf(&model, "[request_definition]\nr = path, ip, principal, groups\n\n[policy_definition]\np = %s\n\n", k.token)
	if indexed {
		model.WriteString("[role_definition]\ng = _, _\n\n")
	}
	model.WriteString("[policy_effect]\ne = some(where (p.eft == allow))\n\n[matchers]\n")
	var pw policyWriter
	if indexed {
		fmt.Fprintf(&model, "m = %s\n", k.indexed)
		for _, v := range values {
			pw.line("g", v, "allowed")
		}
	} else {
		fmt.Fprintf(&model, "m = %s\n", k.matcher)
		for _, v := range values {
			pw.line("p", v)
		}
	}
	return Files{ModelName: "rules.conf", Model: model.String(), PolicyName: "rules.csv", Policy: pw.String()}, nil
}
