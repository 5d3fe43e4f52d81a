package workload

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

func init() {
	register(Spec{
		Name:        "api",
		Description: "API gateway: HS256 JWT verification, route glob matching, scopes, tiers, business hours, rate budgets",
		Build:       buildAPI,
	})
}

// APIData is what the api workload's reference model decides over; its JSON form is the
// family's data document.
type APIData struct {
	JWTSecret string             `json:"jwt_secret"`
	Audience  string             `json:"audience"`
	Tiers     map[string]APITier `json:"tiers"`
	Endpoints []APIEndpoint      `json:"endpoints"`
	// BusinessHours is when routes marked business_hours are open, in UTC.
	BusinessHours APIHours `json:"business_hours"`
	// Revoked maps a revoked subject to the day it was revoked.
	Revoked map[string]string `json:"revoked"`
}

// APITier is a client tier: its rank, and its budget of requests per window.
type APITier struct {
	Rank              int `json:"rank"`
	RequestsPerWindow int `json:"requests_per_window"`
}

// APIEndpoint is a route: its method and path pattern, and what a caller of it needs.
type APIEndpoint struct {
	Method string `json:"method"`
	// Path is a pattern where a "*" segment matches any one segment.
	Path          string   `json:"path"`
	Scopes        []string `json:"scopes"`
	MinTier       string   `json:"min_tier,omitempty"`
	BusinessHours bool     `json:"business_hours,omitempty"`
	// AccountSegment, when not zero, is the index (in the path split on "/", so the leading
	// empty segment is 0) of the segment that names the account the request acts on.
	AccountSegment int `json:"account_segment,omitempty"`
}

// APIHours is the business hours some routes keep, in UTC.
type APIHours struct {
	Days      []string `json:"days"`
	StartHour int      `json:"start_hour"`
	EndHour   int      `json:"end_hour"`
}

// APIInput is one request of the api workload.
type APIInput struct {
	Token  string   `json:"token,omitempty"`
	Method string   `json:"method"`
	Path   string   `json:"path"`
	NowNS  int64    `json:"now_ns"`
	Usage  APIUsage `json:"usage"`
}

// APIUsage is what the caller has spent of its budget.
type APIUsage struct {
	// RequestsInWindow is how many requests the caller already made in the current window.
	RequestsInWindow int `json:"requests_in_window"`
}

// apiClaims are the claims of a token as the generator writes them. The model does not use
// this type: it reads whatever the token carries, as a resource server would.
type apiClaims struct {
	Sub   string `json:"sub"`
	Aud   any    `json:"aud"` // a string or a list of strings
	Iat   int64  `json:"iat"`
	Exp   int64  `json:"exp"`
	Tier  string `json:"tier"`
	Scope string `json:"scope"`
	Acct  string `json:"acct"`
}

// apiDecide is the reference model of OPA's api.rego, written in Go from the same
// specification rather than translated from any engine's version. It verifies the token itself, so a
// generator mistake cannot make model and policy agree on a wrong answer. The reason names the
// first check that decided.
func apiDecide(d *APIData, in APIInput) (allow bool, reason string) {
	if in.Token == "" {
		return false, "deny: missing token"
	}
	c, reason := verifyHS256(in.Token, d.JWTSecret, d.Audience, in.NowNS)
	if reason != "" {
		return false, reason
	}
	if sub, ok := c["sub"].(string); ok {
		if _, revoked := d.Revoked[sub]; revoked {
			return false, "deny: subject revoked"
		}
	}
	tierName, _ := c["tier"].(string)
	tier, knownTier := d.Tiers[tierName]
	scopes := map[string]bool{}
	if s, ok := c["scope"].(string); ok {
		for _, sc := range strings.Split(s, " ") {
			scopes[sc] = true
		}
	}
	acct, _ := c["acct"].(string)

	matched := false
	denial := ""
	permittedBy := ""
	for _, ep := range d.Endpoints {
		if ep.Method != in.Method || !apiPathMatches(ep.Path, in.Path) {
			continue
		}
		matched = true
		why := ""
		switch {
		case !hasAll(scopes, ep.Scopes):
			why = "deny: missing scope"
		case ep.MinTier != "" && (!knownTier || tier.Rank < d.Tiers[ep.MinTier].Rank):
			why = "deny: tier too low"
		case ep.BusinessHours && !d.BusinessHours.open(in.NowNS):
			why = "deny: outside business hours"
		case ep.AccountSegment != 0 && strings.Split(in.Path, "/")[ep.AccountSegment] != acct && !scopes["accounts:any"]:
			why = "deny: other account"
		}
		if why == "" {
			permittedBy = ep.Method + " " + ep.Path
			break
		}
		if denial == "" {
			denial = why
		}
	}
	switch {
	case !matched:
		return false, "deny: no route"
	case permittedBy == "":
		return false, denial
	case !knownTier:
		return false, "deny: unknown tier"
	case in.Usage.RequestsInWindow >= tier.RequestsPerWindow:
		return false, "deny: rate limit exceeded"
	}
	return true, "allow: " + permittedBy
}

// Decide is the reference model's decision of in, and the rule that made it.
func (d *APIData) Decide(in APIInput) (allow bool, reason string) { return apiDecide(d, in) }

// Verify checks the token of a request as the reference model does (verifyHS256, with the
// workload's secret and audience at the instant nowNS): its claims, or why it is refused. An
// engine that cannot verify a token itself is handed this verdict.
func (d *APIData) Verify(token string, nowNS int64) (claims map[string]any, reason string) {
	return verifyHS256(token, d.JWTSecret, d.Audience, nowNS)
}

// verifyHS256 checks a compact JWS the way a resource server would: structure, algorithm,
// HMAC-SHA256 signature, then audience, expiry and not-before against now. It returns the
// claims, or the reason the token is refused. Only HS256 is accepted.
func verifyHS256(token, secret, audience string, nowNS int64) (claims map[string]any, reason string) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, "deny: malformed token"
	}
	var header struct {
		Alg string `json:"alg"`
	}
	rawHeader, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || json.Unmarshal(rawHeader, &header) != nil {
		return nil, "deny: malformed token"
	}
	if header.Alg != "HS256" {
		return nil, "deny: bad signature"
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, "deny: malformed token"
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return nil, "deny: bad signature"
	}
	rawPayload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, "deny: malformed token"
	}
	dec := json.NewDecoder(bytes.NewReader(rawPayload))
	dec.UseNumber()
	if err := dec.Decode(&claims); err != nil {
		return nil, "deny: malformed token"
	}
	if !audienceIncludes(claims["aud"], audience) {
		return nil, "deny: wrong audience"
	}
	// exp and nbf are in seconds; compare in nanoseconds so no rounding is involved.
	if exp, present := claims["exp"]; present {
		s, ok := exp.(json.Number)
		if !ok {
			return nil, "deny: malformed token"
		}
		if !beforeSeconds(nowNS, s) {
			return nil, "deny: token expired"
		}
	}
	if nbf, present := claims["nbf"]; present {
		s, ok := nbf.(json.Number)
		if !ok {
			return nil, "deny: malformed token"
		}
		if beforeSeconds(nowNS, s) {
			return nil, "deny: token not yet valid"
		}
	}
	return claims, ""
}

// beforeSeconds reports whether nowNS is strictly before the instant given in seconds.
// (OPA compares in float64 seconds, which can round within a microsecond of the instant; the
// generator keeps every exp at least a minute away from now, so the two never disagree.)
func beforeSeconds(nowNS int64, seconds json.Number) bool {
	if s, err := seconds.Int64(); err == nil {
		return nowNS < s*int64(time.Second)
	}
	f, _ := seconds.Float64()
	return float64(nowNS)/1e9 < f
}

// audienceIncludes reports whether a token's aud claim (a string or a list) names audience.
// A token without aud is refused, since the resource server requires one.
func audienceIncludes(aud any, audience string) bool {
	switch a := aud.(type) {
	case string:
		return a == audience
	case []any:
		for _, e := range a {
			if s, ok := e.(string); ok && s == audience {
				return true
			}
		}
	}
	return false
}

// apiPathMatches matches a path against a route pattern segment by segment; a "*" pattern
// segment matches any one segment, including an empty one.
func apiPathMatches(pattern, path string) bool {
	ps, segs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(segs) {
		return false
	}
	for i := range ps {
		if ps[i] != "*" && ps[i] != segs[i] {
			return false
		}
	}
	return true
}

func hasAll(have map[string]bool, want []string) bool {
	for _, w := range want {
		if !have[w] {
			return false
		}
	}
	return true
}

// open reports whether the instant nowNS falls within business hours, in UTC.
func (h APIHours) open(nowNS int64) bool {
	t := time.Unix(0, nowNS).UTC()
	return slices.Contains(h.Days, t.Weekday().String()) && t.Hour() >= h.StartHour && t.Hour() < h.EndHour
}

// signHS256 encodes claims as a compact JWS signed with HMAC-SHA256 under secret.
func signHS256(claims apiClaims, secret string) string {
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	payload := base64.RawURLEncoding.EncodeToString(mustJSON(claims))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(header + "." + payload))
	return header + "." + payload + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// apiClient is a caller of the API: the subject of its tokens and what they grant.
type apiClient struct {
	sub, acct, tier string
	scopes          []string
}

const (
	apiClients  = 80
	apiAudience = "authzbench-api"
)

// apiEpoch is the Monday at 00:00 UTC the generated clock starts from; inputs fall in the two
// weeks after it.
var apiEpoch = time.Date(2025, time.November, 10, 0, 0, 0, 0, time.UTC)

// apiNow draws the instant of a request. Like real API traffic, most requests come during the
// working day; the rest are spread over the whole two weeks, nights and weekends included.
// Instants carry nanoseconds so nothing falls on a round second.
func apiNow(r *rand.Rand) time.Time {
	if r.IntN(100) < 60 {
		day := 7*r.IntN(2) + r.IntN(5) // Monday to Friday of either week
		return apiEpoch.Add(time.Duration(day)*24*time.Hour + 8*time.Hour +
			time.Duration(r.Int64N(int64(10*time.Hour))))
	}
	return apiEpoch.Add(time.Duration(r.Int64N(int64(14 * 24 * time.Hour))))
}

// apiWorkload is the api workload over the given data, with no inputs yet.
func apiWorkload(d *APIData) *Workload {
	return &Workload{
		Name:        "api",
		Description: builtins["api"].Description,
		Model:       d,
	}
}

func buildAPI(seed int64, n int) (*Workload, error) {
	r := rand.New(rand.NewPCG(uint64(seed), 0x617069)) // "api"
	d := &APIData{
		JWTSecret: fmt.Sprintf("authzbench-hs256-%016x%016x", r.Uint64(), r.Uint64()),
		Audience:  apiAudience,
		Tiers: map[string]APITier{
			"free":       {Rank: 0, RequestsPerWindow: 100},
			"pro":        {Rank: 1, RequestsPerWindow: 1000},
			"enterprise": {Rank: 2, RequestsPerWindow: 10000},
		},
		Endpoints: []APIEndpoint{
			{Method: "GET", Path: "/v1/catalog/items", Scopes: []string{"catalog:read"}},
			{Method: "GET", Path: "/v1/catalog/items/*", Scopes: []string{"catalog:read"}},
			{Method: "POST", Path: "/v1/catalog/items", Scopes: []string{"catalog:write"}, MinTier: "pro"},
			{Method: "GET", Path: "/v1/accounts/*/orders", Scopes: []string{"orders:read"}, AccountSegment: 3},
			{Method: "POST", Path: "/v1/accounts/*/orders", Scopes: []string{"orders:write"}, AccountSegment: 3},
			{Method: "DELETE", Path: "/v1/accounts/*/orders/*", Scopes: []string{"orders:write", "orders:delete"}, AccountSegment: 3, BusinessHours: true},
			{Method: "GET", Path: "/v1/accounts/*/invoices/*", Scopes: []string{"billing:read"}, MinTier: "pro", AccountSegment: 3},
			{Method: "GET", Path: "/v1/reports/*", Scopes: []string{"reports:read"}, MinTier: "pro"},
			{Method: "POST", Path: "/v1/reports/*/export", Scopes: []string{"reports:read", "reports:export"}, MinTier: "enterprise", BusinessHours: true},
			{Method: "PUT", Path: "/v1/admin/settings/*", Scopes: []string{"admin"}, BusinessHours: true},
		},
		BusinessHours: APIHours{
			Days:      []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"},
			StartHour: 8,
			EndHour:   18,
		},
		Revoked: map[string]string{},
	}

	// scopeOdds is how likely a client's tokens are to carry each scope.
	scopeOdds := []struct {
		scope   string
		percent int
	}{
		{"catalog:read", 97}, {"catalog:write", 80}, {"orders:read", 95}, {"orders:write", 85},
		{"orders:delete", 75}, {"billing:read", 85}, {"reports:read", 90}, {"reports:export", 75},
		{"admin", 35}, {"accounts:any", 10},
	}
	tiers := []string{"free", "pro", "pro", "enterprise"}
	clients := make([]apiClient, apiClients)
	for i := range clients {
		c := apiClient{
			sub:  fmt.Sprintf("client-%03d", i),
			acct: fmt.Sprintf("acct-%03d", i),
			tier: tiers[r.IntN(len(tiers))],
		}
		for _, s := range scopeOdds {
			if r.IntN(100) < s.percent {
				c.scopes = append(c.scopes, s.scope)
			}
		}
		if r.IntN(25) == 0 {
			d.Revoked[c.sub] = apiEpoch.AddDate(0, 0, -r.IntN(90)).Format(time.DateOnly)
		}
		clients[i] = c
	}

	w := apiWorkload(d)
	for range n {
		c := clients[r.IntN(len(clients))]
		in := APIInput{NowNS: apiNow(r).UnixNano()}
		nowS := in.NowNS / int64(time.Second)

		claims := apiClaims{
			Sub:   c.sub,
			Aud:   apiAudience,
			Iat:   nowS - r.Int64N(3000),
			Tier:  c.tier,
			Scope: strings.Join(c.scopes, " "),
			Acct:  c.acct,
		}
		claims.Exp = claims.Iat + 3600
		secret, withToken := d.JWTSecret, true
		// Most tokens are good; the rest each carry one fault a gateway must catch.
		switch p := r.IntN(100); {
		case p < 3:
			withToken = false
		case p < 7:
			secret = "not-the-gateway-secret"
		case p < 11:
			claims.Aud = []string{"authzbench-admin", "billing"}[r.IntN(2)]
		case p < 16:
			claims.Exp = nowS - 60 - r.Int64N(86400)
			claims.Iat = claims.Exp - 3600
		case p < 26:
			// A token for several audiences, ours among them: valid.
			claims.Aud = []string{"billing", apiAudience}
		}
		if withToken {
			in.Token = signHS256(claims, secret)
		}

		ep := d.Endpoints[r.IntN(len(d.Endpoints))]
		in.Method = ep.Method
		in.Path = apiFillPath(r, ep, c.acct)
		switch p := r.IntN(100); {
		case p < 3:
			in.Method = "PATCH"
		case p < 6:
			in.Path = "/v2" + strings.TrimPrefix(in.Path, "/v1")
		}

		budget := d.Tiers[c.tier].RequestsPerWindow
		in.Usage.RequestsInWindow = r.IntN(budget)
		if r.IntN(100) < 8 {
			in.Usage.RequestsInWindow = budget + r.IntN(budget)
		}

		allow, reason := apiDecide(d, in)
		w.Inputs = append(w.Inputs, Input{JSON: mustJSON(in), Expect: expectOf(allow), Reason: reason, Model: in})
	}
	return w, nil
}

// apiFillPath turns a route pattern into a concrete path: the account segment names the
// caller's own account most of the time, other wildcards get plausible ids.
func apiFillPath(r *rand.Rand, ep APIEndpoint, acct string) string {
	segs := strings.Split(ep.Path, "/")
	for i, s := range segs {
		switch {
		case s != "*":
		case i == ep.AccountSegment:
			segs[i] = acct
			if r.IntN(100) < 20 {
				segs[i] = fmt.Sprintf("acct-%03d", r.IntN(apiClients))
			}
		default:
			segs[i] = fmt.Sprintf("%s-%05d", strings.TrimSuffix(segs[i-1], "s"), r.IntN(100000))
		}
	}
	return strings.Join(segs, "/")
}
