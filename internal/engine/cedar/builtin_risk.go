package cedar

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

//go:embed policies/risk.cedar
var riskPolicy []byte

//go:embed policies/risk.cedarschema
var riskSchema []byte

// riskDifferences is what the Cedar version is handed: Cedar has no sum, count or sort
// over a list, so Go works out those few figures when it writes a request.
const riskDifferences = "Cedar is handed the applicant's total monthly debt, number of open debts, number of bureau scores and aggregated credit score (median of three, lower of two), computed in Go because Cedar cannot sum, count or sort a list; Rego computes them itself"

// riskLender is the id of the Lender entity that carries the policy parameters.
const riskLender = "risk"

// riskSanctions is the id of the SanctionsList sanctioned applicants are members of.
const riskSanctions = "sanctions"

// riskVersion writes the risk data as Cedar: the lender's parameters, products, countries and
// industries become entities, sanctioned applicants members of the sanctions list, and the
// weights and tiers tables one permit per approving tier (risk-tiers.cedar).
func riskVersion(d *workload.RiskData) builtin {
	es := []entity{
		{
			UID: uid{"Lender", riskLender},
			Attrs: map[string]any{
				"max_age_at_maturity":              d.MaxAgeAtMaturity,
				"bankruptcy_lookback_years":        d.BankruptcyLookbackYears,
				"unverified_employment_max_amount": d.UnverifiedEmploymentMaxAmount,
				"income_tolerance_bps":             d.IncomeToleranceBPS,
				"max_open_debts":                   d.MaxOpenDebts,
				"min_residual_income":              d.MinResidualIncome,
			},
			Parents: []uid{},
		},
		{UID: uid{"SanctionsList", riskSanctions}, Attrs: map[string]any{}, Parents: []uid{}},
	}
	for name, p := range d.Products {
		es = append(es, entity{
			UID: uid{"Product", name},
			Attrs: map[string]any{
				"min_amount":          p.MinAmount,
				"max_amount":          p.MaxAmount,
				"min_term_months":     p.MinTermMonths,
				"max_term_months":     p.MaxTermMonths,
				"min_score":           p.MinScore,
				"requires_collateral": p.RequiresCollateral,
				"max_industry_risk":   p.MaxIndustryRisk,
			},
			Parents: []uid{},
		})
	}
	for code, c := range d.Countries {
		es = append(es, entity{UID: uid{"Country", code}, Attrs: map[string]any{"risk": c.Risk, "blocked": c.Blocked}, Parents: []uid{}})
	}
	for name, ind := range d.Industries {
		es = append(es, entity{UID: uid{"Industry", name}, Attrs: map[string]any{"risk": ind.Risk}, Parents: []uid{}})
	}
	for _, id := range d.Sanctions {
		es = append(es, entity{UID: uid{"Applicant", id}, Attrs: map[string]any{},
			Parents: []uid{{"SanctionsList", riskSanctions}}})
	}
	sortEntities(es)
	return builtin{
		files: &Files{
			Policies: []workload.File{
				{Name: "risk.cedar", Content: riskPolicy},
				{Name: "risk-tiers.cedar", Content: []byte(riskTiers(d))},
			},
			Schema:   &workload.File{Name: "risk.cedarschema", Content: riskSchema},
			Entities: mustJSON(es),
		},
		differences: riskDifferences,
		request:     requestOf(func(in workload.RiskInput) []byte { return riskRequest(d, in) }),
	}
}

// riskTiers writes one permit per approving tier: the weighted score (the same points
// tables as risk.rego, weighted by the weights table) falls in the tier's band, and the loan
// keeps the tier's amount, debt-to-income and loan-to-value limits. The bands do not overlap, so
// at most one permit applies, and only for the tier Rego would choose.
func riskTiers(d *workload.RiskData) string {
	const (
		credit   = "context.credit_score"
		debt     = "context.monthly_debt"
		income   = "context.applicant.income.verified_monthly"
		amount   = "context.loan.amount"
		value    = "context.loan.collateral_value"
		empType  = "context.applicant.employment.type"
		empYears = "context.applicant.employment.years"
		late12   = "context.applicant.history.late_12m"
		late24   = "context.applicant.history.late_24m"
	)
	dtiWithin := func(bps int) string { return fmt.Sprintf("%s * 10000 <= %d * %s", debt, bps, income) }
	ltvWithin := func(bps int) string { return fmt.Sprintf("%s * 10000 <= %d * %s", amount, bps, value) }
	atLeast := func(expr string) func(int) string {
		return func(t int) string { return fmt.Sprintf("%s >= %d", expr, t) }
	}
	penalty := fmt.Sprintf("(15 * %s + 5 * (%s - %s))", late12, late24, late12)
	points := []struct{ name, expr string }{
		{"credit", steps(atLeast(credit), []int{780, 740, 700, 660, 620}, []int{100, 85, 70, 50, 30}, 0)},
		{"dti", steps(dtiWithin, []int{2000, 3000, 3600, 4300}, []int{100, 80, 60, 40}, 0)},
		{"ltv", "if !resource.requires_collateral then 60 else if " + value + " <= 0 then 20 else " +
			steps(ltvWithin, []int{6000, 8000, 9000}, []int{100, 80, 50}, 20)},
		{"employment", fmt.Sprintf(`if %[1]s == "salaried" then (%[2]s) else if %[1]s == "self_employed" then (%[3]s) else if %[1]s == "contract" then 50 else if %[1]s == "retired" then 70 else 0`,
			empType, steps(atLeast(empYears), []int{5, 2}, []int{100, 80}, 60), steps(atLeast(empYears), []int{3}, []int{70}, 40))},
		{"history", fmt.Sprintf("if %[1]s <= 100 then 100 - %[1]s else 0", penalty)},
		{"country", "100 - 20 * (context.applicant.country.risk - 1)"},
		{"industry", "100 - 20 * (context.applicant.industry.risk - 1)"},
	}
	var terms []string
	for _, p := range points {
		w, ok := d.Weights[p.name]
		if !ok {
			panic("cedar: risk weights have no weight for " + p.name)
		}
		terms = append(terms, fmt.Sprintf("%d * (%s)", w, p.expr))
	}
	if len(d.Weights) != len(points) {
		panic(fmt.Sprintf("cedar: risk weights name %v; the Cedar version scores %d components", slices.Sorted(maps.Keys(d.Weights)), len(points)))
	}
	score := "(\n    " + strings.Join(terms, " +\n    ") + "\n  )"

	names := slices.Collect(maps.Keys(d.Tiers))
	sort.Slice(names, func(i, j int) bool { return d.Tiers[names[i]].MinScore > d.Tiers[names[j]].MinScore })

	var b strings.Builder
	b.WriteString("// Generated from the risk weights and tiers tables: one permit per approving tier. The score\n")
	b.WriteString("// is the sum of the weighted component points, as in risk.rego; a tier's band runs from its\n")
	b.WriteString("// minimum score up to the next tier's.\n")
	for i, name := range names {
		t := d.Tiers[name]
		band := fmt.Sprintf("%s >= %d", score, t.MinScore)
		if i > 0 {
			band += fmt.Sprintf(" &&\n  %s < %d", score, d.Tiers[names[i-1]].MinScore)
		}
		fmt.Fprintf(&b, `
@id(%s)
permit (principal, action == Action::"apply", resource)
when {
  // Every component of the score is defined: a known product, country and industry, and a
  // credit score from at least two bureaus.
  resource has max_amount &&
  context has credit_score &&
  context.applicant.country has risk &&
  context.applicant.industry has risk &&
  // The score falls in the %s band ...
  %s &&
  // ... and the loan keeps the tier's limits.
  %s * 100 <= resource.max_amount * %d &&
  %s &&
  (!resource.requires_collateral || %s <= 0 || %s)
};
`, quote("tier "+name), name, band, amount, t.MaxAmountPct, dtiWithin(t.MaxDTIBPS), value, ltvWithin(t.MaxLTVBPS))
	}
	return b.String()
}

// steps writes a chain of Cedar ifs, the Cedar form of the reference model's points tables:
// points[i] for the first threshold t whose condition cond(t) holds, below otherwise.
func steps(cond func(int) string, thresholds, points []int, below int) string {
	var b strings.Builder
	for i, t := range thresholds {
		fmt.Fprintf(&b, "if %s then %d else ", cond(t), points[i])
	}
	fmt.Fprintf(&b, "%d", below)
	return b.String()
}

// riskRequest is the Cedar request for one risk application. The application goes into
// the context as Rego sees it, the country and industry as entity references; Go adds what
// Cedar cannot compute: the monthly debt total, the number of debts, and the bureau scores'
// count and aggregate, as the reference model reads them (RiskData.BureauScores).
func riskRequest(d *workload.RiskData, in workload.RiskInput) []byte {
	a, l := in.Applicant, in.Loan
	history := map[string]any{
		"late_12m": a.History.Late12m,
		"late_24m": a.History.Late24m,
		"defaults": a.History.Defaults,
	}
	if y := a.History.BankruptcyYearsAgo; y != nil {
		history["bankruptcy_years_ago"] = *y
	}
	monthlyDebt := l.MonthlyPayment
	for _, debt := range a.Debts {
		monthlyDebt += debt.Monthly
	}
	scores := d.BureauScores(a)
	ctx := map[string]any{
		"applicant": map[string]any{
			"age":        a.Age,
			"country":    ref("Country", a.Country),
			"industry":   ref("Industry", a.Industry),
			"income":     a.Income,
			"employment": a.Employment,
			"history":    history,
		},
		"loan": map[string]any{
			"amount":           l.Amount,
			"term_months":      l.TermMonths,
			"collateral_value": l.CollateralValue,
			"monthly_payment":  l.MonthlyPayment,
		},
		"monthly_debt": monthlyDebt,
		"open_debts":   len(a.Debts),
		"bureau_count": len(scores),
	}
	switch len(scores) {
	case 2:
		ctx["credit_score"] = scores[0] // the lower
	case 3:
		ctx["credit_score"] = scores[1] // the median
	}
	return mustJSON(request{
		Principal: uid{"Applicant", a.ID},
		Action:    action("apply"),
		Resource:  uid{"Product", l.Product},
		Context:   ctx,
	})
}
