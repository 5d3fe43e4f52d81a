package workload

import (
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
	if w.Name != "api" || w.Query != "data.authzbench.api.allow" || w.Description == "" {
		t.Errorf("workload identity: name %q, query %q, description %q", w.Name, w.Query, w.Description)
	}
	reasons := checkAgainstOPA(t, w)
	if len(reasons) < 5 {
		t.Errorf("denies come from %d reasons %v; want at least 5", len(reasons), reasons)
	}
}

func TestAPIIsDeterministic(t *testing.T) {
	a, err := buildAPI(DefaultSeed, 300)
	if err != nil {
		t.Fatal(err)
	}
	b, err := buildAPI(DefaultSeed, 300)
	if err != nil {
		t.Fatal(err)
	}
	assertSameWorkload(t, a, b)

	c, err := buildAPI(DefaultSeed+1, 300)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Inputs[0].JSON) == string(a.Inputs[0].JSON) {
		t.Errorf("another seed gave the same first input; is the seed used?")
	}
}

// TestAPITamperedTokenIsDenied takes allowed inputs, raises the token's privileges in its
// payload while keeping the signature, and checks that both the model and OPA then deny.
func TestAPITamperedTokenIsDenied(t *testing.T) {
	w, err := buildAPI(DefaultSeed, 200)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		API apiData `json:"api"`
	}
	if err := json.Unmarshal(w.Data, &d); err != nil {
		t.Fatal(err)
	}
	pq := prepareOPA(t, w)
	tampered := 0
	for i, in := range w.Inputs {
		if in.Expect != ExpectAllow {
			continue
		}
		var req apiInput
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

		allow, reason := apiDecide(&d.API, req)
		if allow || reason != "deny: bad signature" {
			t.Errorf("input %d with a tampered payload: model says %v, %q; want deny: bad signature", i, allow, reason)
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

func TestAPIDecide(t *testing.T) {
	const secret = "test-secret"
	d := &apiData{
		JWTSecret: secret,
		Audience:  apiAudience,
		Tiers: map[string]apiTier{
			"free": {Rank: 0, RequestsPerWindow: 10},
			"pro":  {Rank: 1, RequestsPerWindow: 100},
		},
		Endpoints: []apiEndpoint{
			{Method: "GET", Path: "/v1/items/*", Scopes: []string{"items:read"}},
			{Method: "POST", Path: "/v1/items", Scopes: []string{"items:write"}, MinTier: "pro"},
			{Method: "GET", Path: "/v1/accounts/*/orders", Scopes: []string{"orders:read"}, AccountSegment: 3},
			{Method: "DELETE", Path: "/v1/items/*", Scopes: []string{"items:write", "items:delete"}, BusinessHours: true},
		},
		BusinessHours: apiHours{Days: []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}, StartHour: 8, EndHour: 18},
		Revoked:       map[string]string{"gone": "2025-01-01"},
	}
	// Wednesday 12 November 2025, 10:30 UTC: within business hours.
	wednesday := time.Date(2025, time.November, 12, 10, 30, 0, 0, time.UTC)
	saturday := time.Date(2025, time.November, 15, 10, 30, 0, 0, time.UTC)
	evening := time.Date(2025, time.November, 12, 18, 0, 0, 0, time.UTC)
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
	req := func(tok, method, path string, now time.Time, used int) apiInput {
		return apiInput{Token: tok, Method: method, Path: path, NowNS: now.UnixNano(), Usage: apiUsage{RequestsInWindow: used}}
	}
	good := token(nil)
	tests := []handCase[apiInput]{
		{"read an item", req(good, "GET", "/v1/items/42", wednesday, 0), true, "allow: GET /v1/items/*"},
		{"last request in budget", req(good, "GET", "/v1/items/42", wednesday, 9), true, "allow: GET /v1/items/*"},
		{"over budget", req(good, "GET", "/v1/items/42", wednesday, 10), false, "deny: rate limit exceeded"},
		{"no token", req("", "GET", "/v1/items/42", wednesday, 0), false, "deny: missing token"},
		{"not a JWT", req("opaque-token", "GET", "/v1/items/42", wednesday, 0), false, "deny: malformed token"},
		{"signed with another secret", req(signHS256(apiClaims{Sub: "ann", Aud: apiAudience, Exp: wednesday.Unix() + 60, Tier: "free", Scope: "items:read"}, "other"), "GET", "/v1/items/42", wednesday, 0), false, "deny: bad signature"},
		{"expired", req(good, "GET", "/v1/items/42", wednesday.Add(2*time.Hour), 0), false, "deny: token expired"},
		{"expires exactly now", req(good, "GET", "/v1/items/42", wednesday.Add(time.Hour), 0), false, "deny: token expired"},
		{"wrong audience", req(token(func(c *apiClaims) { c.Aud = "elsewhere" }), "GET", "/v1/items/42", wednesday, 0), false, "deny: wrong audience"},
		{"audience list naming us", req(token(func(c *apiClaims) { c.Aud = []string{"elsewhere", apiAudience} }), "GET", "/v1/items/42", wednesday, 0), true, "allow: GET /v1/items/*"},
		{"revoked subject", req(token(func(c *apiClaims) { c.Sub = "gone" }), "GET", "/v1/items/42", wednesday, 0), false, "deny: subject revoked"},
		{"wildcard is one segment", req(good, "GET", "/v1/items/42/parts", wednesday, 0), false, "deny: no route"},
		{"method must match", req(good, "PUT", "/v1/items/42", wednesday, 0), false, "deny: no route"},
		{"free tier may not create", req(good, "POST", "/v1/items", wednesday, 0), false, "deny: tier too low"},
		{"pro tier may create", req(token(func(c *apiClaims) { c.Tier = "pro" }), "POST", "/v1/items", wednesday, 50), true, "allow: POST /v1/items"},
		{"missing scope", req(token(func(c *apiClaims) { c.Scope = "items:write" }), "GET", "/v1/items/42", wednesday, 0), false, "deny: missing scope"},
		{"own account", req(good, "GET", "/v1/accounts/acct-1/orders", wednesday, 0), true, "allow: GET /v1/accounts/*/orders"},
		{"other account", req(good, "GET", "/v1/accounts/acct-2/orders", wednesday, 0), false, "deny: other account"},
		{"any account scope", req(token(func(c *apiClaims) { c.Scope += " accounts:any" }), "GET", "/v1/accounts/acct-2/orders", wednesday, 0), true, "allow: GET /v1/accounts/*/orders"},
		{"delete in business hours", req(token(func(c *apiClaims) { c.Scope += " items:delete" }), "DELETE", "/v1/items/42", wednesday, 0), true, "allow: DELETE /v1/items/*"},
		{"delete on a Saturday", req(token(func(c *apiClaims) { c.Scope += " items:delete"; c.Exp = saturday.Unix() + 60 }), "DELETE", "/v1/items/42", saturday, 0), false, "deny: outside business hours"},
		{"delete at closing time", req(token(func(c *apiClaims) { c.Scope += " items:delete"; c.Exp = evening.Unix() + 60 }), "DELETE", "/v1/items/42", evening, 0), false, "deny: outside business hours"},
	}
	checkHandCases(t, &Workload{
		Name:     "api",
		Query:    "data.authzbench.api.allow",
		Policies: []File{{Name: "api.rego", Content: apiPolicy}},
		Data:     mustJSON(map[string]any{"api": d}),
	}, tests, func(in apiInput) (bool, string) { return apiDecide(d, in) })
}
