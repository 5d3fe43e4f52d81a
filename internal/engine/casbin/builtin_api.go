package casbin

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/workload"
)

// The api workload in Casbin: one policy line per route, matched by method and by Casbin's
// globMatch on the path (a * is one path segment, as the routes table means it), with the
// route's scopes, minimum tier, business hours and account rule beside it; revoked subjects
// and the order of the tiers are role links, and each tier's budget a term of the matcher.
//
// Casbin's matcher language (govaluate) has no base64, HMAC or JSON parsing, no string
// splitting and no calendar, so Go does that work when it writes a request, as it does for
// Cedar: what apiHanded says.
const apiHanded = "Casbin is handed the token's verdict (structure, HS256 signature, audience, expiry and not-before checked in Go), " +
	"its subject, tier and account claims, its scope string split into a list, the path segments that name accounts, and the request's UTC weekday and hour; " +
	"Rego verifies the token, splits the strings and reads the clock itself"

// apiData is the api workload's data document (data.api), as the workload writes it.
type apiData struct {
	JWTSecret string `json:"jwt_secret"`
	Audience  string `json:"audience"`
	Tiers     map[string]struct {
		Rank              int `json:"rank"`
		RequestsPerWindow int `json:"requests_per_window"`
	} `json:"tiers"`
	Endpoints []struct {
		Method         string   `json:"method"`
		Path           string   `json:"path"`
		Scopes         []string `json:"scopes"`
		MinTier        string   `json:"min_tier"`
		BusinessHours  bool     `json:"business_hours"`
		AccountSegment int      `json:"account_segment"`
	} `json:"endpoints"`
	BusinessHours struct {
		Days      []string `json:"days"`
		StartHour int      `json:"start_hour"`
		EndHour   int      `json:"end_hour"`
	} `json:"business_hours"`
	Revoked map[string]string `json:"revoked"`
}

func readAPIData(w *workload.Workload) (*apiData, error) {
	var d apiData
	if err := fromModel(w, &d); err != nil {
		return nil, fmt.Errorf("read the api data: %w", err)
	}
	return &d, nil
}

// segments are the path positions some route names the account at, in order: each is a
// request value of its own (seg3), as Cedar's context.segments.s3 is.
func (d *apiData) segments() []int {
	var out []int
	for _, ep := range d.Endpoints {
		if i := ep.AccountSegment; i != 0 && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out
}

// maxScopes is how many scopes the most demanding route requires: the policy's scope columns,
// of which a route requiring fewer leaves the rest none.
func (d *apiData) maxScopes() int {
	n := 1
	for _, ep := range d.Endpoints {
		n = max(n, len(ep.Scopes))
	}
	return n
}

// none stands for a route's setting it does not have (no second scope, no minimum tier) in its
// policy line.
const none = "-"

var apiFamily = builtinFamily{handed: apiHanded, requests: apiRequests, files: apiFiles}

// apiFiles writes the routes as policy lines, and the matcher that checks one against a request.
func apiFiles(w *workload.Workload) (Files, error) {
	d, err := readAPIData(w)
	if err != nil {
		return Files{}, err
	}
	segs, scopes := d.segments(), d.maxScopes()
	var p policyWriter
	for _, sub := range sortedKeys(d.Revoked) {
		p.line("g", sub, "revoked")
	}
	// A tier is at least every tier of a rank no higher than its own: g2(tier, min) asks that,
	// and the role manager says a tier is itself.
	tiers := sortedKeys(d.Tiers)
	for _, a := range tiers {
		for _, b := range tiers {
			if a != b && d.Tiers[a].Rank >= d.Tiers[b].Rank {
				p.line("g2", a, b)
			}
		}
	}
	for _, ep := range d.Endpoints {
		if strings.ContainsAny(ep.Path, "?[]{}\\") || strings.Contains(ep.Path, "**") {
			return Files{}, fmt.Errorf("route %s %s uses glob syntax other than a * segment, which globMatch would read otherwise", ep.Method, ep.Path)
		}
		values := []string{ep.Method, ep.Path}
		for i := range scopes {
			s := none
			if i < len(ep.Scopes) {
				s = ep.Scopes[i]
			}
			values = append(values, s)
		}
		tier, hours, account := none, none, none
		if ep.MinTier != "" {
			if _, ok := d.Tiers[ep.MinTier]; !ok {
				return Files{}, fmt.Errorf("route %s %s needs unknown tier %s", ep.Method, ep.Path, ep.MinTier)
			}
			tier = ep.MinTier
		}
		if ep.BusinessHours {
			hours = "business"
		}
		if ep.AccountSegment != 0 {
			account = fmt.Sprintf("seg%d", ep.AccountSegment)
		}
		values = append(values, tier, hours, account)
		if slices.Contains(values[2:2+len(ep.Scopes)], none) {
			return Files{}, fmt.Errorf("route %s %s requires a scope called %q, which the Casbin version writes for none", ep.Method, ep.Path, none)
		}
		p.line("p", values...)
	}

	var m strings.Builder
	m.WriteString("# api in Casbin, written by authzbench from the workload's routes: one policy line per route.\n")
	m.WriteString("# Go verifies the token (valid), splits its scope claim into a list and the path into the\n")
	m.WriteString("# account segments, and reads the weekday and hour of the request in UTC.\n")
	m.WriteString("[request_definition]\nr = valid, sub, method, path, scopes, tier, acct")
	for _, i := range segs {
		fmt.Fprintf(&m, ", seg%d", i)
	}
	m.WriteString(", weekday, hour, used\n\n[policy_definition]\np = method, path")
	for i := range scopes {
		fmt.Fprintf(&m, ", scope%d", i+1)
	}
	m.WriteString(", min_tier, hours, account\n\n")
	m.WriteString("# g: revoked subjects; g2: a tier and the tiers it is at least.\n[role_definition]\ng = _, _\ng2 = _, _\n\n")
	m.WriteString("[policy_effect]\ne = some(where (p.eft == allow))\n\n")
	m.WriteString("# A valid token of a subject not revoked, within its tier's budget, on a route whose method\n")
	m.WriteString("# and path match, whose scopes it holds, at the route's tier, hours and account.\n")
	m.WriteString("[matchers]\nm = r.valid && !g(r.sub, \"revoked\") && \\\n    (")
	for i, t := range tiers {
		if i > 0 {
			m.WriteString(" || ")
		}
		fmt.Fprintf(&m, "r.tier == %s && r.used < %d", matcherString(t), d.Tiers[t].RequestsPerWindow)
	}
	m.WriteString(") && \\\n    r.method == p.method && globMatch(r.path, p.path) && \\\n    ")
	for i := range scopes {
		fmt.Fprintf(&m, "(p.scope%d == %q || p.scope%d in r.scopes) && ", i+1, none, i+1)
	}
	fmt.Fprintf(&m, "(p.min_tier == %q || g2(r.tier, p.min_tier)) && \\\n    ", none)
	days := make([]string, len(d.BusinessHours.Days))
	for i, day := range d.BusinessHours.Days {
		days[i] = matcherString(day)
	}
	fmt.Fprintf(&m, "(p.hours == %q || r.weekday in (%s) && r.hour >= %d && r.hour < %d) && \\\n    ",
		none, strings.Join(days, ", "), d.BusinessHours.StartHour, d.BusinessHours.EndHour)
	fmt.Fprintf(&m, "(p.account == %q || \"accounts:any\" in r.scopes", none)
	for _, i := range segs {
		fmt.Fprintf(&m, " || p.account == \"seg%d\" && r.seg%d == r.acct", i, i)
	}
	m.WriteString(")\n")
	return Files{ModelName: "api.conf", Model: m.String(), PolicyName: "api.csv", Policy: p.String()}, nil
}

// matcherString writes s as a string of Casbin's matcher language; the model's configuration
// reader ends a line at a # and the language has no escapes, so a value that needs either is
// refused by the matcher's check when the model is loaded.
func matcherString(s string) string { return `"` + s + `"` }

// apiRequests writes each input as Casbin's request: what Go verified and split (see
// apiHanded), then the path, method and usage as the input gives them.
func apiRequests(w *workload.Workload) ([][]byte, error) {
	d, err := readAPIData(w)
	if err != nil {
		return nil, err
	}
	segs := d.segments()
	return eachInput(func(in workload.Input) ([]byte, error) {
		var q struct {
			Token  string `json:"token"`
			Method string `json:"method"`
			Path   string `json:"path"`
			NowNS  int64  `json:"now_ns"`
			Usage  struct {
				RequestsInWindow int `json:"requests_in_window"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(in.JSON, &q); err != nil {
			return nil, err
		}
		valid, sub, tier, acct, scopes := false, "", "", "", []any{}
		if c, ok := verifyHS256(q.Token, d.JWTSecret, d.Audience, q.NowNS); ok {
			valid = true
			sub, _ = c["sub"].(string)
			tier, _ = c["tier"].(string)
			acct, _ = c["acct"].(string)
			if s, ok := c["scope"].(string); ok {
				for _, sc := range strings.Split(s, " ") {
					scopes = append(scopes, sc)
				}
			}
		}
		now := time.Unix(0, q.NowNS).UTC()
		values := []any{valid, sub, q.Method, q.Path, scopes, tier, acct}
		pathSegs := strings.Split(q.Path, "/")
		for _, i := range segs {
			seg := ""
			if i < len(pathSegs) {
				seg = pathSegs[i]
			}
			values = append(values, seg)
		}
		values = append(values, now.Weekday().String(), now.Hour(), q.Usage.RequestsInWindow)
		return requestJSON(values...)
	})(w)
}

// verifyHS256 checks a compact JWS as a resource server does, and as the api workload's
// specification says: three parts, an HS256 header, the HMAC-SHA256 signature under secret,
// claims that are a JSON object whose aud names audience (a string, or a list holding it), and
// now before exp and not before nbf, both in seconds. It returns the claims of a valid token.
func verifyHS256(token, secret, audience string, nowNS int64) (map[string]any, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, false
	}
	rawHeader, err := base64.RawURLEncoding.DecodeString(parts[0])
	var header struct {
		Alg string `json:"alg"`
	}
	if err != nil || json.Unmarshal(rawHeader, &header) != nil || header.Alg != "HS256" {
		return nil, false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return nil, false
	}
	rawClaims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, false
	}
	var claims map[string]any
	dec := json.NewDecoder(bytes.NewReader(rawClaims))
	dec.UseNumber()
	if dec.Decode(&claims) != nil {
		return nil, false
	}
	switch aud := claims["aud"].(type) {
	case string:
		if aud != audience {
			return nil, false
		}
	case []any:
		if !slices.Contains(aud, any(audience)) {
			return nil, false
		}
	default:
		return nil, false
	}
	for _, c := range []struct {
		name   string
		before bool // now must be before it (exp), else not before it (nbf)
	}{{"exp", true}, {"nbf", false}} {
		v, present := claims[c.name]
		if !present {
			continue
		}
		n, ok := v.(json.Number)
		if !ok {
			return nil, false
		}
		if nowBefore(nowNS, n) != c.before {
			return nil, false
		}
	}
	return claims, true
}

// nowBefore says whether nowNS is strictly before the instant given in seconds, compared in
// nanoseconds where the seconds are whole.
func nowBefore(nowNS int64, seconds json.Number) bool {
	if s, err := seconds.Int64(); err == nil {
		return nowNS < s*int64(time.Second)
	}
	f, _ := seconds.Float64()
	return float64(nowNS)/1e9 < f
}
