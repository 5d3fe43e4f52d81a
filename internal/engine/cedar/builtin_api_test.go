package cedar

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// The api workload's Cedar version decides every generated input as the reference model does,
// on three draws of its world and inputs, and says what it is handed.
func TestAPIAgrees(t *testing.T) {
	for _, seed := range []int64{workload.DefaultSeed, workload.DefaultSeed + 1, workload.DefaultSeed + 2} {
		w, err := workload.BuiltinWith("api", seed, workload.DefaultInputs)
		if err != nil {
			t.Fatal(err)
		}
		if !Engine.Written(w) || Engine.(engine.Handed).Handed(w) == "" {
			t.Fatalf("seed %d: the api workload has no Cedar version, or it does not say what it is handed", seed)
		}
		checkAgainstModel(t, w)
	}
}

// Cedar decides each generated input through the policy that stands for the reference model's
// reason, not merely with the same answer: a bad token is refused by the token forbid, a revoked
// subject by the revocation forbid, a spent budget by the budget forbid, and an allowed call is
// permitted by the route the model names.
func TestAPIDeniesForTheSameReason(t *testing.T) {
	w := builtinOrFail(t, "api")
	e := prepare(t, w)
	seen := map[string]int{}
	for i, in := range w.Inputs {
		req, err := e.ParseRequest(Engine.Request(in))
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		_, diag := e.Decide(&req)
		var ids []string
		for _, r := range diag.Reasons {
			ids = append(ids, string(r.PolicyID))
		}
		seen[in.Reason]++
		var ok bool
		switch in.Reason {
		case "deny: missing token", "deny: malformed token", "deny: bad signature", "deny: wrong audience",
			"deny: token expired", "deny: token not yet valid":
			ok = slices.Contains(ids, "token-not-verified")
		case "deny: subject revoked":
			ok = slices.Contains(ids, "subject-revoked") && !slices.Contains(ids, "token-not-verified")
		case "deny: rate limit exceeded", "deny: unknown tier":
			ok = slices.Equal(ids, []string{"over-budget"})
		case "deny: no route", "deny: missing scope", "deny: tier too low", "deny: outside business hours",
			"deny: other account":
			// No route permits; the budget may be spent as well, which the model does not get to.
			ok = len(ids) == 0 || slices.Equal(ids, []string{"over-budget"})
		default:
			route, isAllow := strings.CutPrefix(in.Reason, "allow: ")
			ok = isAllow && slices.Contains(ids, "route "+route)
		}
		if !ok {
			t.Errorf("input %d: the model says %q but Cedar's deciding policies are %v\nCedar request: %s", i, in.Reason, ids, Engine.Request(in))
		}
	}
	for _, r := range []string{"deny: missing token", "deny: bad signature", "deny: wrong audience", "deny: token expired",
		"deny: no route", "deny: missing scope", "deny: tier too low", "deny: outside business hours",
		"deny: other account", "deny: rate limit exceeded"} {
		if seen[r] == 0 {
			t.Errorf("no generated input is denied with %q", r)
		}
	}
}

// signHS256 signs any payload with any header, as a client's token server would.
func signHS256(header string, payload map[string]any, secret string) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(header))
	p := base64.RawURLEncoding.EncodeToString(mustJSON(payload))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(h + "." + p))
	return h + "." + p + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// The api workload's hand-written cases, one or more per rule of the reference model (the
// workload's own TestAPIDecide checks the model and OPA on them), decide in Cedar as the model
// decides them, Go handing Cedar the token's verdict.
func TestAPIHandCases(t *testing.T) {
	const secret, audience = "test-secret", "authzbench-api"
	d := &workload.APIData{
		JWTSecret: secret,
		Audience:  audience,
		Tiers: map[string]workload.APITier{
			"free": {Rank: 0, RequestsPerWindow: 10},
			"pro":  {Rank: 1, RequestsPerWindow: 100},
		},
		Endpoints: []workload.APIEndpoint{
			{Method: "GET", Path: "/v1/items/special", Scopes: []string{"admin"}},
			{Method: "GET", Path: "/v1/items/*", Scopes: []string{"items:read"}},
			{Method: "POST", Path: "/v1/items", Scopes: []string{"items:write"}, MinTier: "pro"},
			{Method: "GET", Path: "/v1/accounts/*/orders", Scopes: []string{"orders:read"}, AccountSegment: 3},
			{Method: "DELETE", Path: "/v1/items/*", Scopes: []string{"items:write", "items:delete"}, BusinessHours: true},
		},
		BusinessHours: workload.APIHours{Days: []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}, StartHour: 8, EndHour: 18},
		Revoked:       map[string]string{"gone": "2025-01-01"},
	}
	// Wednesday 12 November 2025, 10:30 UTC: within business hours.
	wednesday := time.Date(2025, time.November, 12, 10, 30, 0, 0, time.UTC)
	saturday := time.Date(2025, time.November, 15, 10, 30, 0, 0, time.UTC)
	evening := time.Date(2025, time.November, 12, 18, 0, 0, 0, time.UTC)
	early := time.Date(2025, time.November, 12, 7, 59, 59, 999999999, time.UTC)
	const jwt = `{"alg":"HS256","typ":"JWT"}`
	token := func(edit func(map[string]any)) string {
		c := map[string]any{"sub": "ann", "aud": audience, "iat": wednesday.Unix() - 60, "exp": wednesday.Unix() + 3600,
			"tier": "free", "scope": "items:read items:write orders:read", "acct": "acct-1"}
		if edit != nil {
			edit(c)
		}
		return signHS256(jwt, c, secret)
	}
	req := func(tok, method, path string, now time.Time, used int) workload.APIInput {
		return workload.APIInput{Token: tok, Method: method, Path: path, NowNS: now.UnixNano(), Usage: workload.APIUsage{RequestsInWindow: used}}
	}
	good := token(nil)
	tampered := func() string {
		parts := strings.Split(good, ".")
		parts[1] = base64.RawURLEncoding.EncodeToString(mustJSON(map[string]any{
			"sub": "ann", "aud": audience, "exp": wednesday.Unix() + 3600, "tier": "pro", "scope": "items:read admin", "acct": "acct-1"}))
		return strings.Join(parts, ".")
	}()
	scope := func(more string) func(map[string]any) {
		return func(c map[string]any) { c["scope"] = c["scope"].(string) + more }
	}
	deleter := func(c map[string]any) { scope(" items:delete")(c); c["exp"] = saturday.Unix() + 60 }
	set := func(k string, v any) func(map[string]any) { return func(c map[string]any) { c[k] = v } }
	drop := func(k string) func(map[string]any) { return func(c map[string]any) { delete(c, k) } }
	tests := []handCase[workload.APIInput]{
		{"read an item", req(good, "GET", "/v1/items/42", wednesday, 0), true},
		{"last request in budget", req(good, "GET", "/v1/items/42", wednesday, 9), true},
		{"over budget", req(good, "GET", "/v1/items/42", wednesday, 10), false},
		{"far over budget", req(good, "GET", "/v1/items/42", wednesday, 1000), false},
		{"no token", req("", "GET", "/v1/items/42", wednesday, 0), false},
		{"not a JWT", req("opaque-token", "GET", "/v1/items/42", wednesday, 0), false},
		{"signed with another secret", req(signHS256(jwt, map[string]any{"sub": "ann", "aud": audience, "exp": wednesday.Unix() + 60, "tier": "free", "scope": "items:read"}, "other"), "GET", "/v1/items/42", wednesday, 0), false},
		{"payload raised after signing", req(tampered, "GET", "/v1/items/special", wednesday, 0), false},
		{"alg none", req(signHS256(`{"alg":"none"}`, map[string]any{"sub": "ann", "aud": audience, "tier": "free", "scope": "items:read"}, secret), "GET", "/v1/items/42", wednesday, 0), false},
		{"expired", req(good, "GET", "/v1/items/42", wednesday.Add(2*time.Hour), 0), false},
		{"expires exactly now", req(good, "GET", "/v1/items/42", wednesday.Add(time.Hour), 0), false},
		{"not yet valid", req(token(set("nbf", wednesday.Unix()+60)), "GET", "/v1/items/42", wednesday, 0), false},
		{"valid since a minute", req(token(set("nbf", wednesday.Unix()-60)), "GET", "/v1/items/42", wednesday, 0), true},
		{"wrong audience", req(token(set("aud", "elsewhere")), "GET", "/v1/items/42", wednesday, 0), false},
		{"no audience", req(token(drop("aud")), "GET", "/v1/items/42", wednesday, 0), false},
		{"audience list naming us", req(token(set("aud", []string{"elsewhere", audience})), "GET", "/v1/items/42", wednesday, 0), true},
		{"revoked subject", req(token(set("sub", "gone")), "GET", "/v1/items/42", wednesday, 0), false},
		{"wildcard is one segment", req(good, "GET", "/v1/items/42/parts", wednesday, 0), false},
		{"wildcard is not a prefix", req(good, "GET", "/v1/accounts/acct-1/x/orders", wednesday, 0), false},
		{"literal route is exact", req(token(set("tier", "pro")), "POST", "/v1/items/", wednesday, 0), false},
		{"method must match", req(good, "PUT", "/v1/items/42", wednesday, 0), false},
		{"unknown method", req(good, "PATCH", "/v1/items/42", wednesday, 0), false},
		{"another version", req(good, "GET", "/v2/items/42", wednesday, 0), false},
		{"a second matching route permits", req(good, "GET", "/v1/items/special", wednesday, 0), true},
		{"free tier may not create", req(good, "POST", "/v1/items", wednesday, 0), false},
		{"pro tier may create", req(token(set("tier", "pro")), "POST", "/v1/items", wednesday, 50), true},
		{"unknown tier may not create", req(token(set("tier", "gold")), "POST", "/v1/items", wednesday, 0), false},
		{"unknown tier has no budget", req(token(set("tier", "gold")), "GET", "/v1/items/42", wednesday, 0), false},
		{"no tier claim", req(token(drop("tier")), "GET", "/v1/items/42", wednesday, 0), false},
		{"tier claim not a string", req(token(set("tier", 1)), "GET", "/v1/items/42", wednesday, 0), false},
		{"missing scope", req(token(set("scope", "items:write")), "GET", "/v1/items/42", wednesday, 0), false},
		{"scope is a whole word", req(token(set("scope", "items:reader items")), "GET", "/v1/items/42", wednesday, 0), false},
		{"no scope claim", req(token(drop("scope")), "GET", "/v1/items/42", wednesday, 0), false},
		{"one of two scopes", req(good, "DELETE", "/v1/items/42", wednesday, 0), false},
		{"own account", req(good, "GET", "/v1/accounts/acct-1/orders", wednesday, 0), true},
		{"other account", req(good, "GET", "/v1/accounts/acct-2/orders", wednesday, 0), false},
		{"account is the whole segment", req(good, "GET", "/v1/accounts/acct-10/orders", wednesday, 0), false},
		{"no account claim", req(token(drop("acct")), "GET", "/v1/accounts/acct-1/orders", wednesday, 0), false},
		{"any account scope", req(token(scope(" accounts:any")), "GET", "/v1/accounts/acct-2/orders", wednesday, 0), true},
		{"delete in business hours", req(token(scope(" items:delete")), "DELETE", "/v1/items/42", wednesday, 0), true},
		{"delete on a Saturday", req(token(deleter), "DELETE", "/v1/items/42", saturday, 0), false},
		{"delete at closing time", req(token(func(c map[string]any) { scope(" items:delete")(c); c["exp"] = evening.Unix() + 60 }), "DELETE", "/v1/items/42", evening, 0), false},
		{"delete just before opening", req(token(scope(" items:delete")), "DELETE", "/v1/items/42", early, 0), false},
		{"read on a Saturday", req(token(deleter), "GET", "/v1/items/42", saturday, 0), true},
	}
	w := &workload.Workload{Name: "api", Model: d}
	if err := addBuiltin(w); err != nil {
		t.Fatal(err)
	}
	checkHandCases(t, w, tests, func(in workload.APIInput) []byte { return apiRequest(d, in) },
		func(in workload.APIInput) bool { allow, _ := d.Decide(in); return allow })
}
