package workload

import (
	"bytes"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

func TestRiskMatchesReferenceModel(t *testing.T) {
	w, err := buildRisk(DefaultSeed, 1000)
	if err != nil {
		t.Fatal(err)
	}
	reasons := checkAgainstOPA(t, w)
	if len(reasons) < 6 {
		t.Errorf("declines come from %d distinct rules, want at least 6: %v", len(reasons), reasons)
	}
}

// Other seeds reach other corners of the policy; OPA and the model must agree there too.
func TestRiskMatchesReferenceModelOtherSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("a few thousand evaluations")
	}
	for _, seed := range []int64{1, 2, 3} {
		w, err := buildRisk(seed, 700)
		if err != nil {
			t.Fatal(err)
		}
		checkAgainstOPA(t, w)
	}
}

func TestRiskPolicySize(t *testing.T) {
	m, err := ast.ParseModule("risk.rego", string(riskPolicy))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Rules); n < 60 {
		t.Errorf("risk.rego has %d rules, want at least 60", n)
	}
	if n := bytes.Count(riskPolicy, []byte("\n")); n < 400 {
		t.Errorf("risk.rego has %d lines, want at least 400", n)
	}
}

// riskPrimeApplicant is a prime applicant for a mortgage: score 9400, DTI 2437 bps, LTV
// 5000 bps. Hand-written cases edit a fresh copy.
func riskPrimeApplicant() riskInput {
	score := func(s int) *int { return &s }
	return riskInput{
		Applicant: riskApplicant{
			ID: "app-good", Age: 40, Country: "DE", Industry: "technology",
			Income:     riskIncome{StatedMonthly: 8000, VerifiedMonthly: 8000, Verified: true},
			Employment: riskEmployment{Type: "salaried", Years: 8, Verified: true},
			Bureaus:    map[string]*int{"equifax": score(790), "experian": score(800), "transunion": score(785)},
			Debts:      []riskDebt{{Kind: "card", Monthly: 200}},
		},
		Loan: riskLoan{Product: "mortgage", Amount: 300_000, TermMonths: 300, CollateralValue: 600_000, MonthlyPayment: 1750},
	}
}

// TestRiskDecide runs hand-written cases, one or more per rule, through the reference model,
// OPA and Cedar.
func TestRiskDecide(t *testing.T) {
	d := riskTables()
	score := func(s int) *int { return &s }
	good := riskPrimeApplicant
	edit := func(f func(*riskInput)) riskInput { in := good(); f(&in); return in }
	tests := []handCase[riskInput]{
		{"strong applicant", good(), true, "allow: prime"},
		{"sanctioned", edit(func(in *riskInput) { in.Applicant.ID = d.Sanctions[0] }), false, "deny: sanctioned"},
		{"seventeen", edit(func(in *riskInput) { in.Applicant.Age = 17 }), false, "deny: underage"},
		{"too old at maturity", edit(func(in *riskInput) { in.Applicant.Age = 62 }), false, "deny: over maximum age at maturity"},
		{"blocked country", edit(func(in *riskInput) { in.Applicant.Country = "KP" }), false, "deny: blocked country"},
		{"unknown product", edit(func(in *riskInput) { in.Loan.Product = "timeshare" }), false, "deny: unknown product"},
		{"over product maximum", edit(func(in *riskInput) { in.Loan.Amount = 1_600_000; in.Loan.CollateralValue = 3_000_000 }), false, "deny: amount out of range"},
		{"no collateral", edit(func(in *riskInput) { in.Loan.CollateralValue = 0 }), false, "deny: collateral required"},
		{"bankrupt 3 years ago", edit(func(in *riskInput) { in.Applicant.History.BankruptcyYearsAgo = score(3) }), false, "deny: recent bankruptcy"},
		{"bankrupt 7 years ago is past", edit(func(in *riskInput) { in.Applicant.History.BankruptcyYearsAgo = score(7) }), true, "allow: prime"},
		{"unknown employment type", edit(func(in *riskInput) { in.Applicant.Employment.Type = "freelance" }), false, "deny: unknown employment type"},
		{"income 11 % below stated", edit(func(in *riskInput) { in.Applicant.Income.VerifiedMonthly = 7120 }), false, "deny: income mismatch"},
		{"income exactly 10 % below stated", edit(func(in *riskInput) { in.Applicant.Income.VerifiedMonthly = 7200 }), true, "allow: prime"},
		{"one bureau", edit(func(in *riskInput) { in.Applicant.Bureaus = map[string]*int{"equifax": score(800)} }), false, "deny: thin credit file"},
		{"two bureaus take the lower", edit(func(in *riskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": score(630), "experian": score(800)}
		}), false, "deny: score below product minimum"},
		{"business in a risky industry", edit(func(in *riskInput) {
			in.Applicant.Industry = "construction"
			in.Loan = riskLoan{Product: "business", Amount: 100_000, TermMonths: 60, MonthlyPayment: 1900}
		}), false, "deny: industry not eligible"},
		{"late payments lower the tier", edit(func(in *riskInput) {
			in.Applicant.History.Late12m, in.Applicant.History.Late24m = 7, 8
		}), true, "allow: near_prime"},
		{"near-prime amount limit", edit(func(in *riskInput) {
			in.Applicant.History.Late12m, in.Applicant.History.Late24m = 7, 8
			in.Loan.Amount, in.Loan.CollateralValue, in.Loan.MonthlyPayment = 1_200_000, 2_000_000, 7000
			in.Applicant.Income.StatedMonthly, in.Applicant.Income.VerifiedMonthly = 30_000, 30_000
		}), false, "deny: amount over tier limit"},
		{"debt-to-income over the tier limit", edit(func(in *riskInput) { in.Loan.MonthlyPayment = 3400 }), false, "deny: dti over tier limit"},
		{"nothing left to live on", edit(func(in *riskInput) {
			in.Applicant.Income = riskIncome{StatedMonthly: 2500, VerifiedMonthly: 2500, Verified: true}
			in.Loan.MonthlyPayment = 1550
		}), false, "deny: residual income too low"},
	}
	w := riskWorkload(d)
	checkHandCases(t, w, tests, func(in riskInput) (bool, string) { return riskDecide(d, in) })
	checkHandCases(t, optimizedOf(t, "risk-opt", w), tests, func(in riskInput) (bool, string) { return riskDecide(d, in) })
	checkCedarHandCases(t, w, tests, func(in riskInput) []byte { return riskCedarRequest(d, in) })
}
