package workload

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
)

// The rule-count family, rules-<kind>-<N>: how latency grows with the number of authorization
// rules, the question Istio's performance study asks of its proxy, asked of OPA and Cedar. Every
// request matches no rule (deny) or only the last one (allow): the worst case for an engine
// that tries rules in order.
//
// Two styles: rules-<kind>-<N> has N separate rules, as a policy translated from Istio's
// AuthorizationPolicy would; rules-<kind>-<N>-indexed one rule that looks the request's value up
// in data holding the N values, for an engine that can. Each engine's version writes them in its
// own language from the family's model (Rules).

// MaxRules is the largest N of the rule-count family.
const MaxRules = 10000

const rulesPattern = "rules-<kind>-<N>[-indexed]"

// ruleKind is what the rules of one kind match on.
type ruleKind struct {
	name string // as in the workload's name: "jwt-claim"
	// what one rule matches, for descriptions
	what string
	// key is the value rule i allows, as the indexed style's data holds it and the reference
	// model (rulesModel) compares.
	key func(i int) string
	// allowed sets, in q, the field this kind reads to what the last rule (last) allows.
	allowed func(r *rand.Rand, last int, q *RulesRequest)
}

// RulesRequest is one request of the family: every kind's field is present, as every request
// through a proxy carries a path, a source address, a peer identity and a token; each kind's
// rules read one of them.
type RulesRequest struct {
	Path      string
	SourceIP  string
	Principal string
	Groups    []string
}

func (q RulesRequest) rego() []byte {
	return mustJSON(map[string]any{
		"path":      q.Path,
		"source_ip": q.SourceIP,
		"principal": q.Principal,
		"claims":    map[string]any{"iss": RulesIssuer, "groups": q.Groups},
	})
}

// RulesIssuer is the issuer of every request's token.
const RulesIssuer = "https://issuer.example.com"

// Rules is what the reference model of rules-<kind>-<N>[-indexed] decides over: N rules of
// one kind, the first allowing Allowed(0), the last Allowed(N-1).
type Rules struct {
	Kind string // "path", "ip", "principal" or "jwt-claim"
	What string // what one rule matches, in words: "an exact request path"
	N    int
	// Indexed says the version is one rule looking the value up in data, not N rules.
	Indexed bool
	kind    *ruleKind
}

// Allowed is the value rule i allows: a path, a source network (10.a.b.0/24), a peer identity
// (SPIFFE ID) or a group of the token's groups claim.
func (r *Rules) Allowed(i int) string { return r.kind.key(i) }

func rulePath(i int) string      { return fmt.Sprintf("/api/svc-%05d/items", i) }
func rulePrincipal(i int) string { return fmt.Sprintf("spiffe://cluster.local/ns/ns-%05d/sa/app", i) }
func ruleGroup(i int) string     { return fmt.Sprintf("group-%05d", i) }

// ruleCIDR is rule i's source network, the i-th /24 of 10.0.0.0/8: 10.a.b.0/24 with a and b
// the high and low bytes of i.
func ruleCIDR(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)
}

var ruleKinds = []ruleKind{
	{
		name: "path", what: "an exact request path",
		key:     rulePath,
		allowed: func(_ *rand.Rand, last int, q *RulesRequest) { q.Path = rulePath(last) },
	},
	{
		name: "ip", what: "a source network (CIDR /24)",
		key: func(i int) string { return ruleCIDR(i).String() },
		allowed: func(r *rand.Rand, last int, q *RulesRequest) {
			n := ruleCIDR(last).Addr().As4()
			n[3] = byte(1 + r.IntN(254))
			q.SourceIP = netip.AddrFrom4(n).String()
		},
	},
	{
		name: "principal", what: "a peer identity (SPIFFE ID)",
		key:     rulePrincipal,
		allowed: func(_ *rand.Rand, last int, q *RulesRequest) { q.Principal = rulePrincipal(last) },
	},
	{
		name: "jwt-claim", what: "a group in the token's groups claim",
		key: ruleGroup,
		// The allowed group comes last in the claim, after the ones no rule allows.
		allowed: func(_ *rand.Rand, last int, q *RulesRequest) { q.Groups = append(q.Groups, ruleGroup(last)) },
	},
}

func ruleKindNames() []string {
	var out []string
	for _, k := range ruleKinds {
		out = append(out, k.name)
	}
	return out
}

func init() {
	registerFamily(family{
		Prefix:  "rules-",
		Pattern: rulesPattern,
		Description: fmt.Sprintf("N rules (1 to %d) of one kind (%s), requests matching none (deny) or only the last (allow); "+
			"in Rego N separate rules, or with -indexed one rule looking the value up in data; in Cedar N policies",
			MaxRules, strings.Join(ruleKindNames(), ", ")),
		Build: buildRules,
	})
}

// parseRulesName reads rules-<kind>-<N>[-indexed].
func parseRulesName(name string) (kind *ruleKind, n int, indexed bool, err error) {
	rest := strings.TrimPrefix(name, "rules-")
	for i := range ruleKinds {
		if k := &ruleKinds[i]; rest == k.name || strings.HasPrefix(rest, k.name+"-") {
			kind = k
			rest = strings.TrimPrefix(rest, k.name+"-")
			break
		}
	}
	if kind == nil {
		k, _, _ := strings.Cut(rest, "-")
		return nil, 0, false, fmt.Errorf("workload %q: unknown rule kind %q; want %s with kind one of %s",
			name, k, rulesPattern, strings.Join(ruleKindNames(), ", "))
	}
	rest, indexed = strings.CutSuffix(rest, "-indexed")
	n, err = sizeOf(name, rest, rulesPattern, 1, MaxRules)
	return kind, n, indexed, err
}

func buildRules(name string, seed int64, inputs int) (*Workload, error) {
	kind, n, indexed, err := parseRulesName(name)
	if err != nil {
		return nil, err
	}
	w := &Workload{
		Name:  name,
		Scale: &Scale{Family: "rules-" + kind.name, Param: "rules", N: n},
		Model: &Rules{Kind: kind.name, What: kind.what, N: n, Indexed: indexed, kind: kind},
	}
	if indexed {
		w.Description = fmt.Sprintf("%d rules each allowing %s, in Rego one rule looking the value up in data (no Cedar version: see rules-%s-%d); requests match none (deny) or only the last (allow)",
			n, kind.what, kind.name, n)
	} else {
		w.Description = fmt.Sprintf("%d rules each allowing %s, in Rego one allow rule each, in Cedar one policy each; requests match none (deny) or only the last (allow)",
			n, kind.what)
	}

	model := newRulesModel(kind, n)
	r := rand.New(rand.NewPCG(uint64(seed), 0x72756c6573)) // "rules"
	for i := range inputs {
		// Values no rule allows: other paths, identities and groups, and source addresses
		// outside 10.0.0.0/8.
		q := RulesRequest{
			Path:      fmt.Sprintf("/api/other-%05d/items", r.IntN(100000)),
			SourceIP:  netip.AddrFrom4([4]byte{192, 168, byte(r.IntN(256)), byte(1 + r.IntN(254))}).String(),
			Principal: fmt.Sprintf("spiffe://cluster.local/ns/other-%05d/sa/app", r.IntN(100000)),
			Groups:    []string{fmt.Sprintf("team-%05d", r.IntN(100000)), fmt.Sprintf("team-%05d", r.IntN(100000))},
		}
		if i%2 == 1 {
			kind.allowed(r, n-1, &q)
		}
		allow, reason := model.decide(q)
		w.Inputs = append(w.Inputs, Input{JSON: q.rego(), Expect: expectOf(allow), Reason: reason, Model: q})
	}
	return w, nil
}

// rulesModel is the reference model of one workload: the values its N rules allow, in rule
// order, and for each the first rule allowing it.
type rulesModel struct {
	kind     *ruleKind
	n        int
	first    map[string]int // path, principal, jwt-claim: value -> first rule
	networks []netip.Prefix // ip: rule i's network
}

func newRulesModel(kind *ruleKind, n int) *rulesModel {
	m := &rulesModel{kind: kind, n: n, first: map[string]int{}}
	for i := range n {
		if kind.name == "ip" {
			m.networks = append(m.networks, ruleCIDR(i))
			continue
		}
		if _, dup := m.first[kind.key(i)]; !dup {
			m.first[kind.key(i)] = i
		}
	}
	return m
}

// decide allows the request when some rule of the N matches it; the reason names the first
// that does.
func (m *rulesModel) decide(q RulesRequest) (allow bool, reason string) {
	rule := -1
	switch m.kind.name {
	case "path":
		rule = m.lookup(q.Path)
	case "principal":
		rule = m.lookup(q.Principal)
	case "jwt-claim":
		for _, g := range q.Groups {
			if i := m.lookup(g); i >= 0 && (rule < 0 || i < rule) {
				rule = i
			}
		}
	case "ip":
		a, err := netip.ParseAddr(q.SourceIP)
		for i, p := range m.networks {
			if err == nil && p.Contains(a) {
				rule = i
				break
			}
		}
	}
	switch rule {
	case -1:
		return false, "deny: no rule matches"
	case m.n - 1:
		return true, "allow: last rule"
	}
	return true, fmt.Sprintf("allow: rule %d", rule)
}

func (m *rulesModel) lookup(v string) int {
	if i, ok := m.first[v]; ok {
		return i
	}
	return -1
}
