package cedar

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/workload"
)

//go:embed policies/api.cedar
var apiPolicy []byte

//go:embed policies/api.cedarschema
var apiSchema []byte

// apiDifferences is what the Cedar version is handed: Cedar has no base64, HMAC or JSON
// parsing, no string splitting and no calendar, so Go does that work when it writes a request.
const apiDifferences = "Cedar is handed the token's verdict (structure, HS256 signature, audience, expiry and not-before checked in Go), its claims with the scope string split into a set, the path segments that name accounts, and the request's UTC weekday and hour; Rego verifies the token, splits the strings and reads the clock itself"

// apiMaxSegment is the last path segment position the schema's context.segments declares.
const apiMaxSegment = 8

// apiVersion writes the api data as Cedar: tiers and revoked subjects become entities, and each
// route becomes one permit matching the method and path, checking scopes, tier, business hours
// and account as the Rego does for that route.
func apiVersion(d *workload.APIData) builtin {
	es := []entity{{UID: uid{"Api", d.Audience}, Attrs: map[string]any{}, Parents: []uid{}}}
	for name, t := range d.Tiers {
		es = append(es, entity{
			UID:     uid{"Tier", name},
			Attrs:   map[string]any{"rank": t.Rank, "requests_per_window": t.RequestsPerWindow},
			Parents: []uid{},
		})
	}
	for sub, day := range d.Revoked {
		es = append(es, entity{UID: uid{"Client", sub}, Attrs: map[string]any{"revoked_on": day}, Parents: []uid{}})
	}
	sortEntities(es)

	var p strings.Builder
	p.WriteString("// Generated from the api routes table: one permit per route. A \"*\" segment of a route is a\n")
	p.WriteString("// `like` wildcard; since `like`'s * also matches \"/\", the path must have no more slashes than\n")
	p.WriteString("// the route, so that each * spans exactly one segment.\n")
	for _, ep := range d.Endpoints {
		var conds []string
		conds = append(conds, "context.method == "+quote(ep.Method))
		if strings.ContainsAny(ep.Path, "?[]{}\\") || strings.Contains(ep.Path, "**") {
			panic("cedar: api route " + ep.Path + " uses glob syntax the Cedar version does not translate")
		}
		if strings.Contains(ep.Path, "*") {
			slashes := strings.Count(ep.Path, "/")
			conds = append(conds, fmt.Sprintf("context.path like %s && !(context.path like %s)",
				quote(ep.Path), quote(strings.Repeat("*/", slashes+1)+"*")))
		} else {
			conds = append(conds, "context.path == "+quote(ep.Path))
		}
		conds = append(conds, "context has claims")
		var scopes []string
		for _, s := range ep.Scopes {
			scopes = append(scopes, quote(s))
		}
		conds = append(conds, "context.claims.scopes.containsAll(["+strings.Join(scopes, ", ")+"])")
		if ep.MinTier != "" {
			if _, ok := d.Tiers[ep.MinTier]; !ok {
				panic("cedar: api route " + ep.Path + " needs unknown tier " + ep.MinTier)
			}
			conds = append(conds, fmt.Sprintf("context.claims has tier && context.claims.tier has rank && context.claims.tier.rank >= Tier::%s.rank",
				quote(ep.MinTier)))
		}
		if ep.BusinessHours {
			var days []string
			for _, day := range d.BusinessHours.Days {
				days = append(days, quote(day))
			}
			conds = append(conds, fmt.Sprintf("[%s].contains(context.weekday) && context.hour >= %d && context.hour < %d",
				strings.Join(days, ", "), d.BusinessHours.StartHour, d.BusinessHours.EndHour))
		}
		if ep.AccountSegment != 0 {
			if ep.AccountSegment > apiMaxSegment {
				panic(fmt.Sprintf("cedar: api route %s names segment %d; the Cedar schema declares up to %d", ep.Path, ep.AccountSegment, apiMaxSegment))
			}
			seg := fmt.Sprintf("s%d", ep.AccountSegment)
			conds = append(conds, fmt.Sprintf(`(context.claims.scopes.contains("accounts:any") || (context.claims has acct && context.segments has %s && context.segments.%s == context.claims.acct))`,
				seg, seg))
		}
		fmt.Fprintf(&p, "\n@id(%s)\npermit (principal, action == Action::\"call\", resource)\nwhen {\n  %s\n};\n",
			quote("route "+ep.Method+" "+ep.Path), strings.Join(conds, " &&\n  "))
	}
	return builtin{
		files: &Files{
			Policies: []workload.File{
				{Name: "api.cedar", Content: apiPolicy},
				{Name: "api-routes.cedar", Content: []byte(p.String())},
			},
			Schema:   &workload.File{Name: "api.cedarschema", Content: apiSchema},
			Entities: mustJSON(es),
		},
		differences: apiDifferences,
		request:     requestOf(func(in workload.APIInput) []byte { return apiRequest(d, in) }),
	}
}

// apiRequest is the Cedar request for one api input. Go does what Cedar cannot: it verifies
// the token as the reference model does (APIData.Verify), splits the scope claim and the path,
// and reads the weekday and hour of the instant. The principal is the verified token's
// subject, or Client::"" when there is none.
func apiRequest(d *workload.APIData, in workload.APIInput) []byte {
	now := time.Unix(0, in.NowNS).UTC()
	segments := map[string]any{}
	pathSegs := strings.Split(in.Path, "/")
	for _, ep := range d.Endpoints {
		if i := ep.AccountSegment; i != 0 && i < len(pathSegs) {
			segments[fmt.Sprintf("s%d", i)] = pathSegs[i]
		}
	}
	ctx := map[string]any{
		"token_valid":        false,
		"method":             in.Method,
		"path":               in.Path,
		"segments":           segments,
		"weekday":            now.Weekday().String(),
		"hour":               now.Hour(),
		"requests_in_window": in.Usage.RequestsInWindow,
	}
	sub := ""
	if in.Token != "" {
		if c, reason := d.Verify(in.Token, in.NowNS); reason == "" {
			ctx["token_valid"] = true
			scopes := []string{}
			if s, ok := c["scope"].(string); ok {
				scopes = strings.Split(s, " ")
				slices.Sort(scopes)
				scopes = slices.Compact(scopes)
			}
			claims := map[string]any{"scopes": scopes}
			if tier, ok := c["tier"].(string); ok {
				claims["tier"] = ref("Tier", tier)
			}
			if acct, ok := c["acct"].(string); ok {
				claims["acct"] = acct
			}
			ctx["claims"] = claims
			sub, _ = c["sub"].(string)
		}
	}
	return mustJSON(request{
		Principal: uid{"Client", sub},
		Action:    action("call"),
		Resource:  uid{"Api", d.Audience},
		Context:   ctx,
	})
}
