package opa

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/authzbench/authzbench/internal/workload"
)

// The -opt workloads are rbac, api and risk with their Rego rewritten from its profile
// (authzbench profile): early rejection, lookup tables, objects for membership, cached
// calculations. Each sends exactly the original's inputs, which carry the original reference
// model's expected decisions, so a rewrite that changes any decision fails like a wrong
// engine; its data is the original's, plus the tables the rewrite reads, derived from it
// when the workload is built. Rego only: Cedar has no such variants.

//go:embed policies/rbac_opt.rego
var rbacOptPolicy []byte

//go:embed policies/api_opt.rego
var apiOptPolicy []byte

//go:embed policies/risk_opt.rego
var riskOptPolicy []byte

// optVariant is a rewritten workload: the original it rewrites, its query and policy, and the
// tables it reads, derived from the original's data.
type optVariant struct {
	of, query string
	policy    []byte
	tables    func(data []byte) (map[string]any, error)
}

var optVariants = map[string]optVariant{
	"rbac-opt": {"rbac", "data.authzbench.rbac_opt.allow", rbacOptPolicy, rbacOptTables},
	"api-opt":  {"api", "data.authzbench.api_opt.allow", apiOptPolicy, apiOptTables},
	"risk-opt": {"risk", "data.authzbench.risk_opt.allow", riskOptPolicy, riskOptTables},
}

func init() {
	for name, v := range optVariants {
		workload.Register(workload.Spec{
			Name:        name,
			Description: optDescription(v.of),
			Build: func(seed int64, n int) (*workload.Workload, error) {
				w, err := workload.Reference(v.of, seed, n)
				if err != nil {
					return nil, err
				}
				if err := addBuiltin(w); err != nil {
					return nil, err
				}
				return optimized(name, w)
			},
		})
	}
}

func optDescription(of string) string {
	return of + " rewritten from its profile (early rejection, lookup tables, cached values): the same inputs and decisions, Rego only"
}

// optimized is the original workload w, with OPA's version, with the rewritten policy called
// name swapped in, and the tables it reads added to w's data under data.<original>_opt.
func optimized(name string, w *workload.Workload) (*workload.Workload, error) {
	v, ok := optVariants[name]
	if !ok {
		return nil, fmt.Errorf("no rewritten workload %q", name)
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(w.Data, &data); err != nil {
		return nil, fmt.Errorf("read %s's data: %w", v.of, err)
	}
	t, err := v.tables(data[v.of])
	if err != nil {
		return nil, fmt.Errorf("derive %s's tables from %s's data: %w", name, v.of, err)
	}
	data[v.of+"_opt"] = mustJSON(t)
	return &workload.Workload{
		Name:        name,
		Description: optDescription(v.of),
		Query:       v.query,
		Policies:    []workload.File{{Name: v.of + "_opt.rego", Content: v.policy}},
		Data:        mustJSON(data),
		Inputs:      w.Inputs,
	}, nil
}

// rbacOptTables gives each user what their roles grant, as can[type][action], and whether
// they are an admin; the resources are the original's.
func rbacOptTables(raw []byte) (map[string]any, error) {
	var d workload.RBACData
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	users := map[string]any{}
	for name, u := range d.Users {
		can := map[string]map[string]bool{}
		for _, role := range u.Roles {
			for typ, actions := range d.Roles[role] {
				if can[typ] == nil {
					can[typ] = map[string]bool{}
				}
				for _, a := range actions {
					can[typ][a] = true
				}
			}
		}
		users[name] = map[string]any{"suspended": u.Suspended, "admin": slices.Contains(u.Roles, "admin"), "can": can}
	}
	return map[string]any{"users": users, "resources": d.Resources}, nil
}

// apiOptTables indexes the endpoints by method, each with the rank its minimum tier needs
// (0, the lowest, for none).
func apiOptTables(raw []byte) (map[string]any, error) {
	var d workload.APIData
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	byMethod := map[string][]map[string]any{}
	for _, ep := range d.Endpoints {
		rank := 0
		if ep.MinTier != "" {
			t, ok := d.Tiers[ep.MinTier]
			if !ok {
				return nil, fmt.Errorf("endpoint %s %s: unknown tier %q", ep.Method, ep.Path, ep.MinTier)
			}
			rank = t.Rank
		}
		e := map[string]any{"path": ep.Path, "scopes": ep.Scopes, "min_rank": rank}
		if ep.BusinessHours {
			e["business_hours"] = true
		}
		if ep.AccountSegment != 0 {
			e["account_segment"] = ep.AccountSegment
		}
		byMethod[ep.Method] = append(byMethod[ep.Method], e)
	}
	return map[string]any{"endpoints_by_method": byMethod}, nil
}

// riskOptTables are the points of each country and industry (100 for risk level 1, 20 fewer
// per level), the points of the employment types whose points do not depend on the years,
// and the sanctions as an object.
func riskOptTables(raw []byte) (map[string]any, error) {
	var d workload.RiskData
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	points := func(level int) int { return 100 - 20*(level-1) }
	countries, industries, sanctioned := map[string]int{}, map[string]int{}, map[string]bool{}
	for c, v := range d.Countries {
		countries[c] = points(v.Risk)
	}
	for i, v := range d.Industries {
		industries[i] = points(v.Risk)
	}
	for _, id := range d.Sanctions {
		sanctioned[id] = true
	}
	return map[string]any{
		"country_points":    countries,
		"industry_points":   industries,
		"employment_points": map[string]int{"contract": 50, "retired": 70, "unemployed": 0},
		"sanctioned":        sanctioned,
	}, nil
}
