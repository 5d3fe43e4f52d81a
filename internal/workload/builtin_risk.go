package workload

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
)

func init() {
	register(Spec{
		Name: "risk",
		Description: "loan risk assessment: hard stops, 3-bureau credit aggregation, DTI/LTV, employment, history, " +
			"country and industry tables, a weighted score and tiers (97 rules, 400+ lines)",
		Build: buildRisk,
	})
}

// RiskData is what the risk workload's reference model decides over; its JSON form is the
// family's data document.
type RiskData struct {
	Products                      map[string]RiskProduct  `json:"products"`
	Countries                     map[string]RiskCountry  `json:"countries"`
	Industries                    map[string]RiskIndustry `json:"industries"`
	Bureaus                       []string                `json:"bureaus"`
	Sanctions                     []string                `json:"sanctions"`
	Weights                       map[string]int          `json:"weights"`
	Tiers                         map[string]RiskTier     `json:"tiers"`
	MaxAgeAtMaturity              int                     `json:"max_age_at_maturity"`
	BankruptcyLookbackYears       int                     `json:"bankruptcy_lookback_years"`
	UnverifiedEmploymentMaxAmount int                     `json:"unverified_employment_max_amount"`
	IncomeToleranceBPS            int                     `json:"income_tolerance_bps"`
	MaxOpenDebts                  int                     `json:"max_open_debts"`
	MinResidualIncome             int                     `json:"min_residual_income"`
	BaseRateBPS                   int                     `json:"base_rate_bps"`
}

// RiskProduct is a loan product and its limits.
type RiskProduct struct {
	MinAmount          int  `json:"min_amount"`
	MaxAmount          int  `json:"max_amount"`
	MinTermMonths      int  `json:"min_term_months"`
	MaxTermMonths      int  `json:"max_term_months"`
	MinScore           int  `json:"min_score"`
	RequiresCollateral bool `json:"requires_collateral"`
	MaxIndustryRisk    int  `json:"max_industry_risk"`
}

// RiskCountry is a country's risk, and whether it is blocked.
type RiskCountry struct {
	Risk    int  `json:"risk"`
	Blocked bool `json:"blocked"`
}

// RiskIndustry is an industry's risk.
type RiskIndustry struct {
	Risk int `json:"risk"`
}

// RiskTier is an approving tier: its minimum score and the loan's limits within it.
type RiskTier struct {
	MinScore       int `json:"min_score"`
	MaxAmountPct   int `json:"max_amount_pct"`
	MaxDTIBPS      int `json:"max_dti_bps"`
	MaxLTVBPS      int `json:"max_ltv_bps"`
	RatePremiumBPS int `json:"rate_premium_bps"`
}

// RiskInput is one loan application.
type RiskInput struct {
	Applicant RiskApplicant `json:"applicant"`
	Loan      RiskLoan      `json:"loan"`
}

// RiskApplicant is who applies: income, employment, bureau scores, history and debts.
type RiskApplicant struct {
	ID         string          `json:"id"`
	Age        int             `json:"age"`
	Country    string          `json:"country"`
	Industry   string          `json:"industry"`
	Income     RiskIncome      `json:"income"`
	Employment RiskEmployment  `json:"employment"`
	Bureaus    map[string]*int `json:"bureaus"` // a missing bureau is null
	History    RiskHistory     `json:"history"`
	Debts      []RiskDebt      `json:"debts"`
}

// RiskIncome is the applicant's monthly income, stated and verified.
type RiskIncome struct {
	StatedMonthly   int  `json:"stated_monthly"`
	VerifiedMonthly int  `json:"verified_monthly"`
	Verified        bool `json:"verified"`
}

// RiskEmployment is the applicant's employment.
type RiskEmployment struct {
	Type     string `json:"type"`
	Years    int    `json:"years"`
	Verified bool   `json:"verified"`
}

// RiskHistory is the applicant's credit history.
type RiskHistory struct {
	Late12m            int  `json:"late_12m"`
	Late24m            int  `json:"late_24m"`
	Defaults           int  `json:"defaults"`
	BankruptcyYearsAgo *int `json:"bankruptcy_years_ago"`
}

// RiskDebt is one of the applicant's open debts.
type RiskDebt struct {
	Kind    string `json:"kind"`
	Monthly int    `json:"monthly"`
}

// RiskLoan is the loan applied for.
type RiskLoan struct {
	Product         string `json:"product"`
	Amount          int    `json:"amount"`
	TermMonths      int    `json:"term_months"`
	CollateralValue int    `json:"collateral_value"`
	MonthlyPayment  int    `json:"monthly_payment"`
}

func riskTables() *RiskData {
	d := &RiskData{
		Products: map[string]RiskProduct{
			"mortgage": {MinAmount: 50_000, MaxAmount: 1_500_000, MinTermMonths: 60, MaxTermMonths: 360, MinScore: 640, RequiresCollateral: true, MaxIndustryRisk: 5},
			"auto":     {MinAmount: 5_000, MaxAmount: 120_000, MinTermMonths: 12, MaxTermMonths: 84, MinScore: 600, RequiresCollateral: true, MaxIndustryRisk: 5},
			"personal": {MinAmount: 1_000, MaxAmount: 60_000, MinTermMonths: 6, MaxTermMonths: 72, MinScore: 660, MaxIndustryRisk: 5},
			"business": {MinAmount: 10_000, MaxAmount: 500_000, MinTermMonths: 12, MaxTermMonths: 120, MinScore: 680, MaxIndustryRisk: 3},
		},
		Countries:  map[string]RiskCountry{},
		Industries: map[string]RiskIndustry{},
		Bureaus:    []string{"equifax", "experian", "transunion"},
		Weights:    map[string]int{"credit": 30, "dti": 20, "ltv": 10, "employment": 10, "history": 15, "country": 5, "industry": 10},
		Tiers: map[string]RiskTier{
			"prime":      {MinScore: 8000, MaxAmountPct: 100, MaxDTIBPS: 4300, MaxLTVBPS: 9000, RatePremiumBPS: 150},
			"near_prime": {MinScore: 6500, MaxAmountPct: 75, MaxDTIBPS: 3600, MaxLTVBPS: 8000, RatePremiumBPS: 325},
			"subprime":   {MinScore: 5000, MaxAmountPct: 50, MaxDTIBPS: 3000, MaxLTVBPS: 7000, RatePremiumBPS: 600},
		},
		MaxAgeAtMaturity:              85,
		BankruptcyLookbackYears:       7,
		UnverifiedEmploymentMaxAmount: 20_000,
		IncomeToleranceBPS:            1000,
		MaxOpenDebts:                  6,
		MinResidualIncome:             800,
		BaseRateBPS:                   425,
	}
	countries := []struct {
		codes   []string
		risk    int
		blocked bool
	}{
		{[]string{"US", "CA", "DE", "NL", "CH", "SE", "NO", "DK", "FI", "AU", "NZ", "JP"}, 1, false},
		{[]string{"GB", "FR", "AT", "BE", "IE", "SG", "KR"}, 2, false},
		{[]string{"ES", "IT", "PT", "PL", "CZ", "CL"}, 3, false},
		{[]string{"BR", "MX", "IN", "ZA", "TR"}, 4, false},
		{[]string{"KP", "IR", "SY"}, 5, true},
	}
	for _, group := range countries {
		for _, c := range group.codes {
			d.Countries[c] = RiskCountry{Risk: group.risk, Blocked: group.blocked}
		}
	}
	industries := map[int][]string{
		1: {"government", "healthcare", "education", "utilities"},
		2: {"technology", "finance", "manufacturing", "telecom"},
		3: {"retail", "logistics", "real_estate", "agriculture"},
		4: {"construction", "hospitality", "mining", "entertainment"},
		5: {"gambling", "crypto", "aviation_startups", "nightlife"},
	}
	for risk, names := range industries {
		for _, n := range names {
			d.Industries[n] = RiskIndustry{Risk: risk}
		}
	}
	for i := range 12 {
		d.Sanctions = append(d.Sanctions, fmt.Sprintf("app-%05d", 97*i+13))
	}
	return d
}

// riskDecide is the reference model of OPA's risk.rego, written in Go from the same
// specification with the same integer arithmetic. The reason names the first check that failed,
// in the order the specification lists them.
func riskDecide(d *RiskData, in RiskInput) (allow bool, reason string) {
	a, l := in.Applicant, in.Loan
	product, productOK := d.Products[l.Product]
	country, countryOK := d.Countries[a.Country]
	industry, industryOK := d.Industries[a.Industry]
	scores := riskBureauScores(d, a)
	monthlyDebt := l.MonthlyPayment
	for _, debt := range a.Debts {
		monthlyDebt += debt.Monthly
	}
	income := a.Income.VerifiedMonthly
	collateral := productOK && product.RequiresCollateral
	hasCollateral := l.CollateralValue > 0
	dtiOver := func(bps int) bool { return monthlyDebt*10000 > bps*income }
	ltvOver := func(bps int) bool { return l.Amount*10000 > bps*l.CollateralValue }

	checks := []struct {
		failed bool
		reason string
	}{
		{slices.Contains(d.Sanctions, a.ID), "sanctioned"},
		{a.Age < 18, "underage"},
		{a.Age*12+l.TermMonths > d.MaxAgeAtMaturity*12, "over maximum age at maturity"},
		{countryOK && country.Blocked, "blocked country"},
		{!countryOK, "unknown country"},
		{!industryOK, "unknown industry"},
		{!productOK, "unknown product"},
		{productOK && (l.Amount < product.MinAmount || l.Amount > product.MaxAmount), "amount out of range"},
		{productOK && (l.TermMonths < product.MinTermMonths || l.TermMonths > product.MaxTermMonths), "term out of range"},
		{collateral && !hasCollateral, "collateral required"},
		{a.History.BankruptcyYearsAgo != nil && *a.History.BankruptcyYearsAgo < d.BankruptcyLookbackYears, "recent bankruptcy"},
		{a.History.Defaults > 0, "default on record"},
		{a.Employment.Type == "unemployed" || (!a.Employment.Verified && l.Amount > d.UnverifiedEmploymentMaxAmount), "employment not acceptable"},
		// The policy has no employment points for a type it does not know, so its score, and
		// with it the tier, is undefined and the loan is not approved. The generator draws
		// only known types; this keeps the model faithful for hand-written inputs.
		{!slices.Contains(riskEmploymentTypes, a.Employment.Type), "unknown employment type"},
		{!a.Income.Verified, "income not verified"},
		{a.Income.Verified && a.Income.VerifiedMonthly*10000 < a.Income.StatedMonthly*(10000-d.IncomeToleranceBPS), "income mismatch"},
		{len(a.Debts) > d.MaxOpenDebts, "too many open debts"},
		{income-monthlyDebt < d.MinResidualIncome, "residual income too low"},
		{productOK && industryOK && industry.Risk > product.MaxIndustryRisk, "industry not eligible"},
		{len(scores) < 2, "thin credit file"},
	}
	for _, c := range checks {
		if c.failed {
			return false, "deny: " + c.reason
		}
	}
	creditScore := scores[0] // two scores: the lower
	if len(scores) == 3 {
		creditScore = scores[1] // three: the median
	}
	if creditScore < product.MinScore {
		return false, "deny: score below product minimum"
	}

	points := map[string]int{
		"credit":     riskStep(creditScore, []int{780, 740, 700, 660, 620}, []int{100, 85, 70, 50, 30}, 0),
		"country":    100 - 20*(country.Risk-1),
		"industry":   100 - 20*(industry.Risk-1),
		"employment": riskEmploymentPoints(a.Employment),
		"history":    max(0, 100-(15*a.History.Late12m+5*(a.History.Late24m-a.History.Late12m))),
	}
	switch {
	case !dtiOver(2000):
		points["dti"] = 100
	case !dtiOver(3000):
		points["dti"] = 80
	case !dtiOver(3600):
		points["dti"] = 60
	case !dtiOver(4300):
		points["dti"] = 40
	default:
		points["dti"] = 0
	}
	switch {
	case !collateral:
		points["ltv"] = 60
	case !ltvOver(6000):
		points["ltv"] = 100
	case !ltvOver(8000):
		points["ltv"] = 80
	case !ltvOver(9000):
		points["ltv"] = 50
	default:
		points["ltv"] = 20
	}
	score := 0
	for name, p := range points {
		score += d.Weights[name] * p
	}
	var tierName string
	switch {
	case score >= d.Tiers["prime"].MinScore:
		tierName = "prime"
	case score >= d.Tiers["near_prime"].MinScore:
		tierName = "near_prime"
	case score >= d.Tiers["subprime"].MinScore:
		tierName = "subprime"
	default:
		return false, "deny: score too low"
	}
	tier := d.Tiers[tierName]
	switch {
	case l.Amount*100 > product.MaxAmount*tier.MaxAmountPct:
		return false, "deny: amount over tier limit"
	case dtiOver(tier.MaxDTIBPS):
		return false, "deny: dti over tier limit"
	case collateral && ltvOver(tier.MaxLTVBPS):
		return false, "deny: ltv over tier limit"
	}
	return true, "allow: " + tierName
}

// Decide is the reference model's decision of in, and the rule that made it.
func (d *RiskData) Decide(in RiskInput) (allow bool, reason string) { return riskDecide(d, in) }

// BureauScores are the applicant's scores from the known bureaus, ascending, as the reference
// model reads them: an engine that cannot sort or count a list is handed them.
func (d *RiskData) BureauScores(a RiskApplicant) []int { return riskBureauScores(d, a) }

// riskBureauScores returns the applicant's scores from the known bureaus, ascending.
func riskBureauScores(d *RiskData, a RiskApplicant) []int {
	var scores []int
	for _, b := range d.Bureaus {
		if s := a.Bureaus[b]; s != nil {
			scores = append(scores, *s)
		}
	}
	sort.Ints(scores)
	return scores
}

// riskStep returns points[i] for the first threshold the value reaches, or below otherwise.
func riskStep(value int, thresholds, points []int, below int) int {
	for i, t := range thresholds {
		if value >= t {
			return points[i]
		}
	}
	return below
}

// riskEmploymentTypes are the employment types the policy scores.
var riskEmploymentTypes = []string{"salaried", "self_employed", "contract", "retired", "unemployed"}

func riskEmploymentPoints(e RiskEmployment) int {
	switch e.Type {
	case "salaried":
		return riskStep(e.Years, []int{5, 2}, []int{100, 80}, 60)
	case "self_employed":
		return riskStep(e.Years, []int{3}, []int{70}, 40)
	case "contract":
		return 50
	case "retired":
		return 70
	}
	return 0
}

// riskWorkload is the risk workload over the given tables, with no inputs yet.
func riskWorkload(d *RiskData) *Workload {
	return &Workload{
		Name:        "risk",
		Description: builtins["risk"].Description,
		Model:       d,
	}
}

func buildRisk(seed int64, n int) (*Workload, error) {
	r := rand.New(rand.NewPCG(uint64(seed), 0x7269736b))
	d := riskTables()
	w := riskWorkload(d)
	for i := range n {
		in := riskApplication(r, d, i)
		allow, reason := riskDecide(d, in)
		w.Inputs = append(w.Inputs, Input{JSON: mustJSON(in), Expect: expectOf(allow), Reason: reason, Model: in})
	}
	return w, nil
}

// riskApplication draws one application. Most are plausible applicants, so the decision is
// usually made by the score and the tier limits; a few per cent trip each hard stop.
func riskApplication(r *rand.Rand, d *RiskData, i int) RiskInput {
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	chance := func(p float64) bool { return r.Float64() < p }
	between := func(lo, hi int) int { return lo + r.IntN(hi-lo+1) }

	countries := sortedKeysOf(d.Countries)
	industries := sortedKeysOf(d.Industries)
	products := []string{"mortgage", "mortgage", "auto", "auto", "personal", "personal", "business"}

	a := RiskApplicant{
		ID:       fmt.Sprintf("app-%05d", i),
		Age:      between(21, 66),
		Country:  pick([]string{"US", "US", "DE", "GB", "FR", "NL", "ES", "IT", "CA", "SE", "PL", "BR", "MX", "IN", "JP"}),
		Industry: pick(industries),
		Bureaus:  map[string]*int{},
	}
	switch {
	case chance(0.02):
		a.Age = between(16, 17)
	case chance(0.02):
		a.Country = pick([]string{"KP", "IR", "SY"})
	case chance(0.01):
		a.Country = "XX"
	case chance(0.01):
		a.Country = pick(countries)
	}
	if chance(0.01) {
		a.Industry = "astrology"
	}
	a.Income.StatedMonthly = between(32, 160) * 100
	a.Income.Verified = !chance(0.03)
	a.Income.VerifiedMonthly = a.Income.StatedMonthly
	if chance(0.12) {
		a.Income.VerifiedMonthly = a.Income.StatedMonthly * between(80, 100) / 100
	}
	a.Employment = RiskEmployment{Type: pick([]string{"salaried", "salaried", "salaried", "self_employed", "contract", "retired"}),
		Years: between(0, 25), Verified: !chance(0.04)}
	if chance(0.02) {
		a.Employment.Type = "unemployed"
	}
	base := between(635, 830)
	for _, b := range d.Bureaus {
		if chance(0.06) {
			continue // this bureau has no file on the applicant
		}
		s := base + between(-25, 25)
		a.Bureaus[b] = &s
	}
	a.History.Late12m = riskSkewed(r, 0.75, 4)
	a.History.Late24m = a.History.Late12m + riskSkewed(r, 0.7, 4)
	if chance(0.02) {
		a.History.Defaults = 1
	}
	if chance(0.05) {
		y := between(1, 15)
		a.History.BankruptcyYearsAgo = &y
	}
	debts := riskSkewed(r, 0.3, 4)
	if chance(0.03) {
		debts = d.MaxOpenDebts + 1
	}
	for range debts {
		a.Debts = append(a.Debts, RiskDebt{Kind: pick([]string{"card", "auto", "student", "personal"}), Monthly: between(1, 8) * 50})
	}

	name := products[r.IntN(len(products))]
	product := d.Products[name]
	l := RiskLoan{Product: name, TermMonths: between(product.MinTermMonths, product.MaxTermMonths)}
	l.Amount = between(product.MinAmount/1000, product.MaxAmount*6/10/1000) * 1000
	if chance(0.03) {
		l.Amount = product.MaxAmount + 1000*between(1, 50)
	}
	if chance(0.02) {
		l.TermMonths = product.MaxTermMonths + 12
	}
	if chance(0.01) {
		l.Product = "timeshare"
	}
	if product.RequiresCollateral && !chance(0.02) {
		l.CollateralValue = l.Amount * between(100, 220) / 100
	}
	// A simple annuity approximation in whole currency units: principal over the term plus
	// interest at about 6 % a year on half the principal.
	l.MonthlyPayment = l.Amount/l.TermMonths + l.Amount*6/100/12/2
	if chance(0.01) {
		a.ID = d.Sanctions[r.IntN(len(d.Sanctions))]
	}
	return RiskInput{Applicant: a, Loan: l}
}

// riskSkewed draws a small count: 0 with probability p0, otherwise 1..most uniformly.
func riskSkewed(r *rand.Rand, p0 float64, most int) int {
	if r.Float64() < p0 {
		return 0
	}
	return 1 + r.IntN(most)
}

func sortedKeysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
