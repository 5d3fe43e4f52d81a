package workload

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestAPIMatchesReferenceModel(t *testing.T) {
	w, err := buildAPI(DefaultSeed, 500)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "api" || w.Description == "" {
		t.Errorf("workload identity: name %q, description %q", w.Name, w.Description)
	}
	reasons := checkInputs(t, w)
	if len(reasons) < 5 {
		t.Errorf("denies come from %d reasons %v; want at least 5", len(reasons), reasons)
	}
}

// TestAPITamperedTokenIsDenied takes allowed inputs, raises the token's privileges in its
// payload while keeping the signature, and checks that the model then denies (internal/engine/opa
// asks OPA the same).
func TestAPITamperedTokenIsDenied(t *testing.T) {
	w, err := buildAPI(DefaultSeed, 200)
	if err != nil {
		t.Fatal(err)
	}
	d := w.Model.(*APIData)
	tampered := 0
	for i, in := range w.Inputs {
		if in.Expect != ExpectAllow {
			continue
		}
		var req APIInput
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

		allow, reason := apiDecide(d, req)
		if allow || reason != "deny: bad signature" {
			t.Errorf("input %d with a tampered payload: model says %v, %q; want deny: bad signature", i, allow, reason)
		}
		tampered++
	}
	if tampered < 20 {
		t.Errorf("only %d allowed inputs to tamper with", tampered)
	}
}

// signRawHS256 signs any payload with any header, for tokens apiClaims cannot express.
func signRawHS256(header string, payload map[string]any, secret string) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(header))
	p := base64.RawURLEncoding.EncodeToString(mustJSON(payload))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(h + "." + p))
	return h + "." + p + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// TestAPIDecide runs hand-written cases, one or more per rule, through the reference model
// (internal/engine/cedar runs them through Cedar).
func TestAPIDecide(t *testing.T) {
	const secret = "test-secret"
	d := &APIData{
		JWTSecret: secret,
		Audience:  apiAudience,
		Tiers: map[string]APITier{
			"free": {Rank: 0, RequestsPerWindow: 10},
			"pro":  {Rank: 1, RequestsPerWindow: 100},
		},
		Endpoints: []APIEndpoint{
			{Method: "GET", Path: "/v1/items/special", Scopes: []string{"admin"}},
			{Method: "GET", Path: "/v1/items/*", Scopes: []string{"items:read"}},
			{Method: "POST", Path: "/v1/items", Scopes: []string{"items:write"}, MinTier: "pro"},
			{Method: "GET", Path: "/v1/accounts/*/orders", Scopes: []string{"orders:read"}, AccountSegment: 3},
			{Method: "DELETE", Path: "/v1/items/*", Scopes: []string{"items:write", "items:delete"}, BusinessHours: true},
		},
		BusinessHours: APIHours{Days: []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}, StartHour: 8, EndHour: 18},
		Revoked:       map[string]string{"gone": "2025-01-01"},
	}
	// Wednesday 12 November 2025, 10:30 UTC: within business hours.
	wednesday := time.Date(2025, time.November, 12, 10, 30, 0, 0, time.UTC)
	saturday := time.Date(2025, time.November, 15, 10, 30, 0, 0, time.UTC)
	evening := time.Date(2025, time.November, 12, 18, 0, 0, 0, time.UTC)
	early := time.Date(2025, time.November, 12, 7, 59, 59, 999999999, time.UTC)
	token := func(edit func(*apiClaims)) string {
		c := apiClaims{
			Sub: "ann", Aud: apiAudience, Iat: wednesday.Unix() - 60, Exp: wednesday.Unix() + 3600,
			Tier: "free", Scope: "items:read items:write orders:read", Acct: "acct-1",
		}
		if edit != nil {
			edit(&c)
		}
		return signHS256(c, secret)
	}
	raw := func(edit func(map[string]any)) string {
		p := map[string]any{"sub": "ann", "aud": apiAudience, "exp": wednesday.Unix() + 3600, "tier": "free",
			"scope": "items:read items:write orders:read", "acct": "acct-1"}
		edit(p)
		return signRawHS256(`{"alg":"HS256","typ":"JWT"}`, p, secret)
	}
	req := func(tok, method, path string, now time.Time, used int) APIInput {
		return APIInput{Token: tok, Method: method, Path: path, NowNS: now.UnixNano(), Usage: APIUsage{RequestsInWindow: used}}
	}
	good := token(nil)
	tampered := func() string {
		parts := strings.Split(good, ".")
		parts[1] = base64.RawURLEncoding.EncodeToString(mustJSON(apiClaims{
			Sub: "ann", Aud: apiAudience, Exp: wednesday.Unix() + 3600, Tier: "pro", Scope: "items:read admin", Acct: "acct-1"}))
		return strings.Join(parts, ".")
	}()
	deleter := func(c *apiClaims) { c.Scope += " items:delete"; c.Exp = saturday.Unix() + 60 }
	tests := []handCase[APIInput]{
		{"read an item", req(good, "GET", "/v1/items/42", wednesday, 0), true, "allow: GET /v1/items/*"},
		{"last request in budget", req(good, "GET", "/v1/items/42", wednesday, 9), true, "allow: GET /v1/items/*"},
		{"over budget", req(good, "GET", "/v1/items/42", wednesday, 10), false, "deny: rate limit exceeded"},
		{"far over budget", req(good, "GET", "/v1/items/42", wednesday, 1000), false, "deny: rate limit exceeded"},
		{"no token", req("", "GET", "/v1/items/42", wednesday, 0), false, "deny: missing token"},
		{"not a JWT", req("opaque-token", "GET", "/v1/items/42", wednesday, 0), false, "deny: malformed token"},
		{"signed with another secret", req(signHS256(apiClaims{Sub: "ann", Aud: apiAudience, Exp: wednesday.Unix() + 60, Tier: "free", Scope: "items:read"}, "other"), "GET", "/v1/items/42", wednesday, 0), false, "deny: bad signature"},
		{"payload raised after signing", req(tampered, "GET", "/v1/items/special", wednesday, 0), false, "deny: bad signature"},
		{"alg none", req(signRawHS256(`{"alg":"none"}`, map[string]any{"sub": "ann", "aud": apiAudience, "tier": "free", "scope": "items:read"}, secret), "GET", "/v1/items/42", wednesday, 0), false, "deny: bad signature"},
		{"expired", req(good, "GET", "/v1/items/42", wednesday.Add(2*time.Hour), 0), false, "deny: token expired"},
		{"expires exactly now", req(good, "GET", "/v1/items/42", wednesday.Add(time.Hour), 0), false, "deny: token expired"},
		{"not yet valid", req(raw(func(p map[string]any) { p["nbf"] = wednesday.Unix() + 60 }), "GET", "/v1/items/42", wednesday, 0), false, "deny: token not yet valid"},
		{"valid since a minute", req(raw(func(p map[string]any) { p["nbf"] = wednesday.Unix() - 60 }), "GET", "/v1/items/42", wednesday, 0), true, "allow: GET /v1/items/*"},
		{"wrong audience", req(token(func(c *apiClaims) { c.Aud = "elsewhere" }), "GET", "/v1/items/42", wednesday, 0), false, "deny: wrong audience"},
		{"no audience", req(raw(func(p map[string]any) { delete(p, "aud") }), "GET", "/v1/items/42", wednesday, 0), false, "deny: wrong audience"},
		{"audience list naming us", req(token(func(c *apiClaims) { c.Aud = []string{"elsewhere", apiAudience} }), "GET", "/v1/items/42", wednesday, 0), true, "allow: GET /v1/items/*"},
		{"revoked subject", req(token(func(c *apiClaims) { c.Sub = "gone" }), "GET", "/v1/items/42", wednesday, 0), false, "deny: subject revoked"},
		{"wildcard is one segment", req(good, "GET", "/v1/items/42/parts", wednesday, 0), false, "deny: no route"},
		{"wildcard is not a prefix", req(good, "GET", "/v1/accounts/acct-1/x/orders", wednesday, 0), false, "deny: no route"},
		{"literal route is exact", req(token(func(c *apiClaims) { c.Tier = "pro" }), "POST", "/v1/items/", wednesday, 0), false, "deny: no route"},
		{"method must match", req(good, "PUT", "/v1/items/42", wednesday, 0), false, "deny: no route"},
		{"unknown method", req(good, "PATCH", "/v1/items/42", wednesday, 0), false, "deny: no route"},
		{"another version", req(good, "GET", "/v2/items/42", wednesday, 0), false, "deny: no route"},
		{"a second matching route permits", req(good, "GET", "/v1/items/special", wednesday, 0), true, "allow: GET /v1/items/*"},
		{"free tier may not create", req(good, "POST", "/v1/items", wednesday, 0), false, "deny: tier too low"},
		{"pro tier may create", req(token(func(c *apiClaims) { c.Tier = "pro" }), "POST", "/v1/items", wednesday, 50), true, "allow: POST /v1/items"},
		{"unknown tier may not create", req(token(func(c *apiClaims) { c.Tier = "gold" }), "POST", "/v1/items", wednesday, 0), false, "deny: tier too low"},
		{"unknown tier has no budget", req(token(func(c *apiClaims) { c.Tier = "gold" }), "GET", "/v1/items/42", wednesday, 0), false, "deny: unknown tier"},
		{"no tier claim", req(raw(func(p map[string]any) { delete(p, "tier") }), "GET", "/v1/items/42", wednesday, 0), false, "deny: unknown tier"},
		{"tier claim not a string", req(raw(func(p map[string]any) { p["tier"] = 1 }), "GET", "/v1/items/42", wednesday, 0), false, "deny: unknown tier"},
		{"missing scope", req(token(func(c *apiClaims) { c.Scope = "items:write" }), "GET", "/v1/items/42", wednesday, 0), false, "deny: missing scope"},
		{"scope is a whole word", req(token(func(c *apiClaims) { c.Scope = "items:reader items" }), "GET", "/v1/items/42", wednesday, 0), false, "deny: missing scope"},
		{"no scope claim", req(raw(func(p map[string]any) { delete(p, "scope") }), "GET", "/v1/items/42", wednesday, 0), false, "deny: missing scope"},
		{"one of two scopes", req(good, "DELETE", "/v1/items/42", wednesday, 0), false, "deny: missing scope"},
		{"own account", req(good, "GET", "/v1/accounts/acct-1/orders", wednesday, 0), true, "allow: GET /v1/accounts/*/orders"},
		{"other account", req(good, "GET", "/v1/accounts/acct-2/orders", wednesday, 0), false, "deny: other account"},
		{"account is the whole segment", req(good, "GET", "/v1/accounts/acct-10/orders", wednesday, 0), false, "deny: other account"},
		{"no account claim", req(raw(func(p map[string]any) { delete(p, "acct") }), "GET", "/v1/accounts/acct-1/orders", wednesday, 0), false, "deny: other account"},
		{"any account scope", req(token(func(c *apiClaims) { c.Scope += " accounts:any" }), "GET", "/v1/accounts/acct-2/orders", wednesday, 0), true, "allow: GET /v1/accounts/*/orders"},
		{"delete in business hours", req(token(func(c *apiClaims) { c.Scope += " items:delete" }), "DELETE", "/v1/items/42", wednesday, 0), true, "allow: DELETE /v1/items/*"},
		{"delete on a Saturday", req(token(deleter), "DELETE", "/v1/items/42", saturday, 0), false, "deny: outside business hours"},
		{"delete at closing time", req(token(func(c *apiClaims) { c.Scope += " items:delete"; c.Exp = evening.Unix() + 60 }), "DELETE", "/v1/items/42", evening, 0), false, "deny: outside business hours"},
		{"delete just before opening", req(token(func(c *apiClaims) { c.Scope += " items:delete" }), "DELETE", "/v1/items/42", early, 0), false, "deny: outside business hours"},
		{"read on a Saturday", req(token(deleter), "GET", "/v1/items/42", saturday, 0), true, "allow: GET /v1/items/*"},
	}
	w := apiWorkload(d)
	checkHandCases(t, w, tests, func(in APIInput) (bool, string) { return apiDecide(d, in) })
}
