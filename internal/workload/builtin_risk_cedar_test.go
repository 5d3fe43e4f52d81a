package workload

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

func TestRiskCedarAgrees(t *testing.T) {
	for _, tc := range []struct {
		seed int64
		n    int
	}{{DefaultSeed, DefaultInputs}, {1, 700}, {2, 700}, {3, 700}} {
		w, err := buildRisk(tc.seed, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if w.Cedar == nil || w.Cedar.Differences == "" {
			t.Fatalf("seed %d: the risk workload has no Cedar version, or it does not say what it is handed", tc.seed)
		}
		checkAgainstCedar(t, w)
	}
}

// riskCedarNoForbid are the Rego deny rules that are no forbid in Cedar: the score and the
// tier's limits decide there by which tier permit, if any, applies.
var riskCedarNoForbid = []string{"score too low", "amount over tier limit", "dti over tier limit", "ltv over tier limit"}

// TestRiskCedarDeniesForTheSameReason checks that Cedar decides each generated input through the
// same rules as Rego, not merely with the same answer: the forbids that apply are exactly the
// Rego deny rules of the same name that hold (Cedar's "unknown employment type" aside, which
// Rego expresses as an undefined score), and an approved loan is permitted by the tier the
// reference model names.
func TestRiskCedarDeniesForTheSameReason(t *testing.T) {
	w, err := buildRisk(DefaultSeed, DefaultInputs)
	if err != nil {
		t.Fatal(err)
	}
	e := prepareCedar(t, w)
	denies := *w
	denies.Query = "data.authzbench.risk.deny"
	pq := prepareOPA(t, &denies)
	seen := map[string]int{}
	for i, in := range w.Inputs {
		req, err := e.ParseRequest(in.Cedar)
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		_, diag := e.Decide(&req)
		var ids, forbids, permits []string
		for _, r := range diag.Reasons {
			id := string(r.PolicyID)
			ids = append(ids, id)
			if strings.HasPrefix(id, "tier ") {
				permits = append(permits, id)
			} else if id != "unknown employment type" {
				forbids = append(forbids, id)
			}
		}
		sort.Strings(forbids)
		regoDenies := riskOPADenies(t, pq, in.JSON)
		regoDenies = slices.DeleteFunc(regoDenies, func(r string) bool { return slices.Contains(riskCedarNoForbid, r) })
		if !slices.Equal(forbids, regoDenies) {
			t.Errorf("input %d: Cedar's forbids %v, Rego's hard stops %v\nCedar request: %s", i, forbids, regoDenies, in.Cedar)
		}
		seen[in.Reason]++
		var ok bool
		reason, isDeny := strings.CutPrefix(in.Reason, "deny: ")
		switch {
		case isDeny && slices.Contains(riskCedarNoForbid, reason):
			ok = len(forbids) == 0 && len(permits) == 0
		case isDeny:
			ok = len(permits) == 0 && slices.Contains(ids, reason)
		default:
			tier, _ := strings.CutPrefix(in.Reason, "allow: ")
			ok = slices.Equal(permits, []string{"tier " + tier}) && len(forbids) == 0
		}
		if !ok {
			t.Errorf("input %d: the model says %q but Cedar's deciding policies are %v\nCedar request: %s", i, in.Reason, ids, in.Cedar)
		}
	}
	t.Logf("reasons: %v", seen)
	for _, r := range []string{"allow: prime", "allow: near_prime", "allow: subprime", "deny: score too low",
		"deny: amount over tier limit", "deny: dti over tier limit"} {
		if seen[r] == 0 {
			t.Errorf("no generated input is decided with %q", r)
		}
	}
}

// riskOPADenies returns the sorted names of the Rego deny rules that hold for an input.
func riskOPADenies(t *testing.T, pq rego.PreparedEvalQuery, input []byte) []string {
	t.Helper()
	v, err := ast.ValueFromReader(bytes.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := pq.Eval(context.Background(), rego.EvalParsedInput(v))
	if err != nil || len(rs) != 1 || len(rs[0].Expressions) != 1 {
		t.Fatalf("evaluate deny: %v, %v", rs, err)
	}
	set, ok := rs[0].Expressions[0].Value.([]any)
	if !ok {
		t.Fatalf("deny is %T, not a set", rs[0].Expressions[0].Value)
	}
	names := []string{}
	for _, r := range set {
		names = append(names, r.(string))
	}
	sort.Strings(names)
	return names
}

// TestRiskCedarBoundaries decides applications that sit exactly on a limit, and one step past
// it, with the reference model, OPA and Cedar. Score, ratio and amount limits are met with
// equality, where a rounded ratio would be most likely to flip a decision.
func TestRiskCedarBoundaries(t *testing.T) {
	d := riskTables()
	n := func(s int) *int { return &s }
	good := riskPrimeApplicant
	edit := func(base func() riskInput, f func(*riskInput)) func() riskInput {
		return func() riskInput { in := base(); f(&in); return in }
	}
	// primeEdge scores exactly 8000 (prime's minimum) with a DTI of exactly 4300 bps (prime's
	// limit): credit 3000, DTI 800, LTV 1000, employment 800, history 900, country 500,
	// industry 1000.
	primeEdge := edit(good, func(in *riskInput) {
		in.Applicant.Industry = "healthcare"
		in.Applicant.Employment.Years = 3
		in.Applicant.History.Late12m, in.Applicant.History.Late24m = 2, 4
		in.Loan.MonthlyPayment = 3240 // 3440 of 8000 a month
	})
	// nearPrimeEdge scores exactly 6500 with a DTI of exactly 3600 bps and an LTV of exactly
	// 8000 bps, near-prime's limits: credit 1500, DTI 1200, LTV 800, employment 600, history
	// 1500, country 500, industry 400.
	nearPrimeEdge := edit(good, func(in *riskInput) {
		in.Applicant.Industry = "construction"
		in.Applicant.Employment.Years = 1
		in.Applicant.Bureaus = map[string]*int{"equifax": n(660), "experian": n(670), "transunion": n(700)}
		in.Loan.Amount, in.Loan.CollateralValue, in.Loan.MonthlyPayment = 320_000, 400_000, 2680
	})
	// subprimeEdge scores exactly 5000 with a DTI of exactly 3000 bps and an LTV of exactly
	// 7000 bps, subprime's limits: credit 1500, DTI 1600, LTV 800, employment 400, history 300,
	// country 200, industry 200.
	subprimeEdge := edit(good, func(in *riskInput) {
		in.Applicant.Country, in.Applicant.Industry = "BR", "gambling"
		in.Applicant.Employment = riskEmployment{Type: "self_employed", Years: 1, Verified: true}
		in.Applicant.Bureaus = map[string]*int{"equifax": n(660), "experian": n(670), "transunion": n(700)}
		in.Applicant.History.Late12m, in.Applicant.History.Late24m = 4, 8
		in.Loan.Amount, in.Loan.CollateralValue, in.Loan.MonthlyPayment = 280_000, 400_000, 2200
	})
	// nearPrimeAmount is near-prime (score 7900: no history points) and borrows exactly 75 % of
	// the mortgage maximum, near-prime's amount limit.
	nearPrimeAmount := edit(good, func(in *riskInput) {
		in.Applicant.History.Late12m, in.Applicant.History.Late24m = 7, 8
		in.Applicant.Income.StatedMonthly, in.Applicant.Income.VerifiedMonthly = 30_000, 30_000
		in.Loan.Amount, in.Loan.CollateralValue, in.Loan.MonthlyPayment = 1_125_000, 2_000_000, 7000
	})
	// personal is a prime applicant for an unsecured personal loan of 20000, the most an
	// applicant with unverified employment may borrow.
	personal := edit(good, func(in *riskInput) {
		in.Loan = riskLoan{Product: "personal", Amount: 20_000, TermMonths: 36, MonthlyPayment: 600}
	})
	// residualEdge keeps exactly 800 a month (the minimum) at a DTI of 4286 bps.
	residualEdge := edit(personal, func(in *riskInput) {
		in.Applicant.Income = riskIncome{StatedMonthly: 1400, VerifiedMonthly: 1400, Verified: true}
		in.Applicant.Debts = nil
	})

	cases := []struct {
		name   string
		in     func() riskInput
		allow  bool
		reason string
	}{
		{"score 8000 and DTI 4300 bps are prime", primeEdge, true, "allow: prime"},
		{"score 7925 is near-prime, where DTI 4300 bps is too much", edit(primeEdge, func(in *riskInput) { in.Applicant.History.Late24m = 5 }),
			false, "deny: dti over tier limit"},
		{"DTI one unit over 4300 bps", edit(primeEdge, func(in *riskInput) { in.Loan.MonthlyPayment = 3241 }), false, "deny: dti over tier limit"},
		{"score 6500, DTI 3600 and LTV 8000 bps are near-prime", nearPrimeEdge, true, "allow: near_prime"},
		{"score 6425 is subprime, where DTI 3600 bps is too much", edit(nearPrimeEdge, func(in *riskInput) { in.Applicant.History.Late24m = 1 }),
			false, "deny: dti over tier limit"},
		{"LTV one unit over 8000 bps costs points and the tier", edit(nearPrimeEdge, func(in *riskInput) { in.Loan.CollateralValue = 399_999 }),
			false, "deny: dti over tier limit"},
		{"score 5000, DTI 3000 and LTV 7000 bps are subprime", subprimeEdge, true, "allow: subprime"},
		{"score 4925 is declined", edit(subprimeEdge, func(in *riskInput) { in.Applicant.History.Late24m = 9 }), false, "deny: score too low"},
		{"subprime LTV one unit over 7000 bps", edit(subprimeEdge, func(in *riskInput) { in.Loan.CollateralValue = 399_999 }),
			false, "deny: ltv over tier limit"},
		{"DTI one unit over 3000 bps costs points and the tier", edit(subprimeEdge, func(in *riskInput) { in.Loan.MonthlyPayment = 2201 }),
			false, "deny: score too low"},
		{"LTV 9000 bps is prime", edit(good, func(in *riskInput) { in.Loan.Amount, in.Loan.CollateralValue = 270_000, 300_000 }), true, "allow: prime"},
		{"LTV one unit over 9000 bps", edit(good, func(in *riskInput) { in.Loan.Amount, in.Loan.CollateralValue = 270_000, 299_999 }),
			false, "deny: ltv over tier limit"},
		{"exactly 75 % of the maximum is near-prime", nearPrimeAmount, true, "allow: near_prime"},
		{"one more than 75 % of the maximum", edit(nearPrimeAmount, func(in *riskInput) { in.Loan.Amount = 1_125_001 }), false, "deny: amount over tier limit"},
		{"residual income exactly 800", residualEdge, true, "allow: prime"},
		{"residual income 799", edit(residualEdge, func(in *riskInput) { in.Loan.MonthlyPayment = 601 }), false, "deny: residual income too low"},
		{"unverified employment borrows 20000", edit(personal, func(in *riskInput) { in.Applicant.Employment.Verified = false }), true, "allow: prime"},
		{"unverified employment borrows 20001", edit(personal, func(in *riskInput) {
			in.Applicant.Employment.Verified = false
			in.Loan.Amount = 20_001
		}), false, "deny: employment not acceptable"},
		{"unemployed", edit(good, func(in *riskInput) { in.Applicant.Employment.Type = "unemployed" }), false, "deny: employment not acceptable"},
		{"unknown employment type", edit(good, func(in *riskInput) { in.Applicant.Employment.Type = "freelance" }), false, "deny: unknown employment type"},
		{"18 years old", edit(good, func(in *riskInput) { in.Applicant.Age = 18 }), true, "allow: prime"},
		{"17 years old", edit(good, func(in *riskInput) { in.Applicant.Age = 17 }), false, "deny: underage"},
		{"85 at maturity", edit(good, func(in *riskInput) { in.Applicant.Age = 60 }), true, "allow: prime"},
		{"85 and a month at maturity", edit(good, func(in *riskInput) { in.Applicant.Age, in.Loan.TermMonths = 60, 301 }),
			false, "deny: over maximum age at maturity"},
		{"income exactly 10 % below stated", edit(good, func(in *riskInput) { in.Applicant.Income.VerifiedMonthly = 7200 }), true, "allow: prime"},
		{"income a unit more than 10 % below stated", edit(good, func(in *riskInput) { in.Applicant.Income.VerifiedMonthly = 7199 }),
			false, "deny: income mismatch"},
		{"income not verified", edit(good, func(in *riskInput) { in.Applicant.Income.Verified = false }), false, "deny: income not verified"},
		{"six open debts", edit(good, func(in *riskInput) { in.Applicant.Debts = slices.Repeat([]riskDebt{{"card", 50}}, 6) }), true, "allow: prime"},
		{"seven open debts, some alike", edit(good, func(in *riskInput) { in.Applicant.Debts = slices.Repeat([]riskDebt{{"card", 50}}, 7) }),
			false, "deny: too many open debts"},
		{"bankrupt 7 years ago", edit(good, func(in *riskInput) { in.Applicant.History.BankruptcyYearsAgo = n(7) }), true, "allow: prime"},
		{"bankrupt 6 years ago", edit(good, func(in *riskInput) { in.Applicant.History.BankruptcyYearsAgo = n(6) }), false, "deny: recent bankruptcy"},
		{"a default", edit(good, func(in *riskInput) { in.Applicant.History.Defaults = 1 }), false, "deny: default on record"},
		{"two bureaus at the product minimum", edit(good, func(in *riskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": n(640), "experian": n(800), "transunion": nil}
		}), true, "allow: near_prime"},
		{"two bureaus, the lower below the product minimum", edit(good, func(in *riskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": n(639), "transunion": n(800)}
		}), false, "deny: score below product minimum"},
		{"three bureaus take the median", edit(good, func(in *riskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": n(600), "experian": n(700), "transunion": n(800)}
		}), true, "allow: prime"},
		{"a bureau the lender does not use", edit(good, func(in *riskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": n(800), "creditsafe": n(800)}
		}), false, "deny: thin credit file"},
		{"business at the industry limit", edit(good, func(in *riskInput) {
			in.Applicant.Industry = "retail"
			in.Loan = riskLoan{Product: "business", Amount: 100_000, TermMonths: 60, MonthlyPayment: 1900}
		}), true, "allow: prime"},
		{"business past the industry limit", edit(good, func(in *riskInput) {
			in.Applicant.Industry = "construction"
			in.Loan = riskLoan{Product: "business", Amount: 100_000, TermMonths: 60, MonthlyPayment: 1900}
		}), false, "deny: industry not eligible"},
		{"mortgage at its maximum term", edit(good, func(in *riskInput) { in.Applicant.Age, in.Loan.TermMonths = 30, 360 }), true, "allow: prime"},
		{"mortgage past its maximum term", edit(good, func(in *riskInput) { in.Applicant.Age, in.Loan.TermMonths = 30, 361 }),
			false, "deny: term out of range"},
		{"mortgage below its minimum amount", edit(good, func(in *riskInput) { in.Loan.Amount = 49_999 }), false, "deny: amount out of range"},
		{"no collateral", edit(good, func(in *riskInput) { in.Loan.CollateralValue = 0 }), false, "deny: collateral required"},
		{"sanctioned", edit(good, func(in *riskInput) { in.Applicant.ID = d.Sanctions[len(d.Sanctions)-1] }), false, "deny: sanctioned"},
		{"blocked country", edit(good, func(in *riskInput) { in.Applicant.Country = "IR" }), false, "deny: blocked country"},
		{"unknown country", edit(good, func(in *riskInput) { in.Applicant.Country = "XX" }), false, "deny: unknown country"},
		{"unknown industry", edit(good, func(in *riskInput) { in.Applicant.Industry = "astrology" }), false, "deny: unknown industry"},
		{"unknown product", edit(good, func(in *riskInput) { in.Loan.Product = "timeshare" }), false, "deny: unknown product"},
	}
	var hand []handCase[riskInput]
	for _, c := range cases {
		hand = append(hand, handCase[riskInput]{c.name, c.in(), c.allow, c.reason})
	}
	w := riskWorkload(d)
	checkHandCases(t, w, hand, func(in riskInput) (bool, string) { return riskDecide(d, in) })
	checkCedarHandCases(t, w, hand, func(in riskInput) []byte { return riskCedarRequest(d, in) })
}

// TestRiskCedarTiersFollowTheTables checks that the generated tier permits carry the tables'
// numbers: a change to a tier or a weight must reach the Cedar version.
func TestRiskCedarTiersFollowTheTables(t *testing.T) {
	d := riskTables()
	d.Weights["credit"] = 31
	d.Tiers["prime"] = riskTier{MinScore: 8123, MaxAmountPct: 99, MaxDTIBPS: 4321, MaxLTVBPS: 8765}
	p := riskCedarTiers(d)
	for _, want := range []string{"31 * (if context.credit_score >= 780", ") >= 8123 &&", ") < 8123 &&",
		"resource.max_amount * 99", "<= 4321 * context.applicant.income.verified_monthly", "<= 8765 * context.loan.collateral_value"} {
		if !strings.Contains(p, want) {
			t.Errorf("generated tiers policy lacks %q:\n%s", want, p)
		}
	}
}
