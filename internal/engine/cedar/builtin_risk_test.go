package cedar

import (
	"slices"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// The risk workload's Cedar version decides every generated input as the reference model
// does, on four draws of its applications, and says what it is handed.
func TestRiskAgrees(t *testing.T) {
	for _, tc := range []struct {
		seed int64
		n    int
	}{{workload.DefaultSeed, workload.DefaultInputs}, {1, 700}, {2, 700}, {3, 700}} {
		w, err := workload.BuiltinWith("risk", tc.seed, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if !Engine.Written(w) || Engine.(engine.Handed).Handed(w) == "" {
			t.Fatalf("seed %d: the risk workload has no Cedar version, or it does not say what it is handed", tc.seed)
		}
		checkAgainstModel(t, w)
	}
}

// riskPrimeApplicant is a prime applicant for a mortgage: score 9400, DTI 2437 bps, LTV
// 5000 bps. Hand-written cases edit a fresh copy.
func riskPrimeApplicant() workload.RiskInput {
	score := func(s int) *int { return &s }
	return workload.RiskInput{
		Applicant: workload.RiskApplicant{
			ID: "app-good", Age: 40, Country: "DE", Industry: "technology",
			Income:     workload.RiskIncome{StatedMonthly: 8000, VerifiedMonthly: 8000, Verified: true},
			Employment: workload.RiskEmployment{Type: "salaried", Years: 8, Verified: true},
			Bureaus:    map[string]*int{"equifax": score(790), "experian": score(800), "transunion": score(785)},
			Debts:      []workload.RiskDebt{{Kind: "card", Monthly: 200}},
		},
		Loan: workload.RiskLoan{Product: "mortgage", Amount: 300_000, TermMonths: 300, CollateralValue: 600_000, MonthlyPayment: 1750},
	}
}

// The risk workload's hand-written cases, one or more per rule of the reference model (the
// workload's own TestRiskDecide checks the model and OPA on them), decide in Cedar as the model
// decides them, Go handing Cedar what it cannot compute.
func TestRiskHandCases(t *testing.T) {
	w := builtinOrFail(t, "risk")
	d := w.Model.(*workload.RiskData)
	score := func(s int) *int { return &s }
	good := riskPrimeApplicant
	edit := func(f func(*workload.RiskInput)) workload.RiskInput { in := good(); f(&in); return in }
	tests := []handCase[workload.RiskInput]{
		{"strong applicant", good(), true},
		{"sanctioned", edit(func(in *workload.RiskInput) { in.Applicant.ID = d.Sanctions[0] }), false},
		{"seventeen", edit(func(in *workload.RiskInput) { in.Applicant.Age = 17 }), false},
		{"too old at maturity", edit(func(in *workload.RiskInput) { in.Applicant.Age = 62 }), false},
		{"blocked country", edit(func(in *workload.RiskInput) { in.Applicant.Country = "KP" }), false},
		{"unknown product", edit(func(in *workload.RiskInput) { in.Loan.Product = "timeshare" }), false},
		{"over product maximum", edit(func(in *workload.RiskInput) { in.Loan.Amount = 1_600_000; in.Loan.CollateralValue = 3_000_000 }), false},
		{"no collateral", edit(func(in *workload.RiskInput) { in.Loan.CollateralValue = 0 }), false},
		{"bankrupt 3 years ago", edit(func(in *workload.RiskInput) { in.Applicant.History.BankruptcyYearsAgo = score(3) }), false},
		{"bankrupt 7 years ago is past", edit(func(in *workload.RiskInput) { in.Applicant.History.BankruptcyYearsAgo = score(7) }), true},
		{"unknown employment type", edit(func(in *workload.RiskInput) { in.Applicant.Employment.Type = "freelance" }), false},
		{"income 11 % below stated", edit(func(in *workload.RiskInput) { in.Applicant.Income.VerifiedMonthly = 7120 }), false},
		{"income exactly 10 % below stated", edit(func(in *workload.RiskInput) { in.Applicant.Income.VerifiedMonthly = 7200 }), true},
		{"one bureau", edit(func(in *workload.RiskInput) { in.Applicant.Bureaus = map[string]*int{"equifax": score(800)} }), false},
		{"two bureaus take the lower", edit(func(in *workload.RiskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": score(630), "experian": score(800)}
		}), false},
		{"business in a risky industry", edit(func(in *workload.RiskInput) {
			in.Applicant.Industry = "construction"
			in.Loan = workload.RiskLoan{Product: "business", Amount: 100_000, TermMonths: 60, MonthlyPayment: 1900}
		}), false},
		{"late payments lower the tier", edit(func(in *workload.RiskInput) {
			in.Applicant.History.Late12m, in.Applicant.History.Late24m = 7, 8
		}), true},
		{"near-prime amount limit", edit(func(in *workload.RiskInput) {
			in.Applicant.History.Late12m, in.Applicant.History.Late24m = 7, 8
			in.Loan.Amount, in.Loan.CollateralValue, in.Loan.MonthlyPayment = 1_200_000, 2_000_000, 7000
			in.Applicant.Income.StatedMonthly, in.Applicant.Income.VerifiedMonthly = 30_000, 30_000
		}), false},
		{"debt-to-income over the tier limit", edit(func(in *workload.RiskInput) { in.Loan.MonthlyPayment = 3400 }), false},
		{"nothing left to live on", edit(func(in *workload.RiskInput) {
			in.Applicant.Income = workload.RiskIncome{StatedMonthly: 2500, VerifiedMonthly: 2500, Verified: true}
			in.Loan.MonthlyPayment = 1550
		}), false},
	}
	checkHandCases(t, w, tests, func(in workload.RiskInput) []byte { return riskRequest(d, in) },
		func(in workload.RiskInput) bool { allow, _ := d.Decide(in); return allow })
}

// Applications that sit exactly on a limit, and one step past it, decide in Cedar as in the
// reference model (the workload's own TestRiskBoundaries checks the model and OPA on them). Score, ratio and amount limits are met with
// equality, where a rounded ratio would be most likely to flip a decision.
func TestRiskBoundaries(t *testing.T) {
	w := builtinOrFail(t, "risk")
	d := w.Model.(*workload.RiskData)
	n := func(s int) *int { return &s }
	good := riskPrimeApplicant
	edit := func(base func() workload.RiskInput, f func(*workload.RiskInput)) func() workload.RiskInput {
		return func() workload.RiskInput { in := base(); f(&in); return in }
	}
	// primeEdge scores exactly 8000 (prime's minimum) with a DTI of exactly 4300 bps (prime's
	// limit): credit 3000, DTI 800, LTV 1000, employment 800, history 900, country 500,
	// industry 1000.
	primeEdge := edit(good, func(in *workload.RiskInput) {
		in.Applicant.Industry = "healthcare"
		in.Applicant.Employment.Years = 3
		in.Applicant.History.Late12m, in.Applicant.History.Late24m = 2, 4
		in.Loan.MonthlyPayment = 3240 // 3440 of 8000 a month
	})
	// nearPrimeEdge scores exactly 6500 with a DTI of exactly 3600 bps and an LTV of exactly
	// 8000 bps, near-prime's limits: credit 1500, DTI 1200, LTV 800, employment 600, history
	// 1500, country 500, industry 400.
	nearPrimeEdge := edit(good, func(in *workload.RiskInput) {
		in.Applicant.Industry = "construction"
		in.Applicant.Employment.Years = 1
		in.Applicant.Bureaus = map[string]*int{"equifax": n(660), "experian": n(670), "transunion": n(700)}
		in.Loan.Amount, in.Loan.CollateralValue, in.Loan.MonthlyPayment = 320_000, 400_000, 2680
	})
	// subprimeEdge scores exactly 5000 with a DTI of exactly 3000 bps and an LTV of exactly
	// 7000 bps, subprime's limits: credit 1500, DTI 1600, LTV 800, employment 400, history 300,
	// country 200, industry 200.
	subprimeEdge := edit(good, func(in *workload.RiskInput) {
		in.Applicant.Country, in.Applicant.Industry = "BR", "gambling"
		in.Applicant.Employment = workload.RiskEmployment{Type: "self_employed", Years: 1, Verified: true}
		in.Applicant.Bureaus = map[string]*int{"equifax": n(660), "experian": n(670), "transunion": n(700)}
		in.Applicant.History.Late12m, in.Applicant.History.Late24m = 4, 8
		in.Loan.Amount, in.Loan.CollateralValue, in.Loan.MonthlyPayment = 280_000, 400_000, 2200
	})
	// nearPrimeAmount is near-prime (score 7900: no history points) and borrows exactly 75 % of
	// the mortgage maximum, near-prime's amount limit.
	nearPrimeAmount := edit(good, func(in *workload.RiskInput) {
		in.Applicant.History.Late12m, in.Applicant.History.Late24m = 7, 8
		in.Applicant.Income.StatedMonthly, in.Applicant.Income.VerifiedMonthly = 30_000, 30_000
		in.Loan.Amount, in.Loan.CollateralValue, in.Loan.MonthlyPayment = 1_125_000, 2_000_000, 7000
	})
	// personal is a prime applicant for an unsecured personal loan of 20000, the most an
	// applicant with unverified employment may borrow.
	personal := edit(good, func(in *workload.RiskInput) {
		in.Loan = workload.RiskLoan{Product: "personal", Amount: 20_000, TermMonths: 36, MonthlyPayment: 600}
	})
	// residualEdge keeps exactly 800 a month (the minimum) at a DTI of 4286 bps.
	residualEdge := edit(personal, func(in *workload.RiskInput) {
		in.Applicant.Income = workload.RiskIncome{StatedMonthly: 1400, VerifiedMonthly: 1400, Verified: true}
		in.Applicant.Debts = nil
	})

	cases := []struct {
		name  string
		in    func() workload.RiskInput
		allow bool
	}{
		{"score 8000 and DTI 4300 bps are prime", primeEdge, true},
		{"score 7925 is near-prime, where DTI 4300 bps is too much", edit(primeEdge, func(in *workload.RiskInput) { in.Applicant.History.Late24m = 5 }),
			false},
		{"DTI one unit over 4300 bps", edit(primeEdge, func(in *workload.RiskInput) { in.Loan.MonthlyPayment = 3241 }), false},
		{"score 6500, DTI 3600 and LTV 8000 bps are near-prime", nearPrimeEdge, true},
		{"score 6425 is subprime, where DTI 3600 bps is too much", edit(nearPrimeEdge, func(in *workload.RiskInput) { in.Applicant.History.Late24m = 1 }),
			false},
		{"LTV one unit over 8000 bps costs points and the tier", edit(nearPrimeEdge, func(in *workload.RiskInput) { in.Loan.CollateralValue = 399_999 }),
			false},
		{"score 5000, DTI 3000 and LTV 7000 bps are subprime", subprimeEdge, true},
		{"score 4925 is declined", edit(subprimeEdge, func(in *workload.RiskInput) { in.Applicant.History.Late24m = 9 }), false},
		{"subprime LTV one unit over 7000 bps", edit(subprimeEdge, func(in *workload.RiskInput) { in.Loan.CollateralValue = 399_999 }),
			false},
		{"DTI one unit over 3000 bps costs points and the tier", edit(subprimeEdge, func(in *workload.RiskInput) { in.Loan.MonthlyPayment = 2201 }),
			false},
		{"LTV 9000 bps is prime", edit(good, func(in *workload.RiskInput) { in.Loan.Amount, in.Loan.CollateralValue = 270_000, 300_000 }), true},
		{"LTV one unit over 9000 bps", edit(good, func(in *workload.RiskInput) { in.Loan.Amount, in.Loan.CollateralValue = 270_000, 299_999 }),
			false},
		{"exactly 75 % of the maximum is near-prime", nearPrimeAmount, true},
		{"one more than 75 % of the maximum", edit(nearPrimeAmount, func(in *workload.RiskInput) { in.Loan.Amount = 1_125_001 }), false},
		{"residual income exactly 800", residualEdge, true},
		{"residual income 799", edit(residualEdge, func(in *workload.RiskInput) { in.Loan.MonthlyPayment = 601 }), false},
		{"unverified employment borrows 20000", edit(personal, func(in *workload.RiskInput) { in.Applicant.Employment.Verified = false }), true},
		{"unverified employment borrows 20001", edit(personal, func(in *workload.RiskInput) {
			in.Applicant.Employment.Verified = false
			in.Loan.Amount = 20_001
		}), false},
		{"unemployed", edit(good, func(in *workload.RiskInput) { in.Applicant.Employment.Type = "unemployed" }), false},
		{"unknown employment type", edit(good, func(in *workload.RiskInput) { in.Applicant.Employment.Type = "freelance" }), false},
		{"18 years old", edit(good, func(in *workload.RiskInput) { in.Applicant.Age = 18 }), true},
		{"17 years old", edit(good, func(in *workload.RiskInput) { in.Applicant.Age = 17 }), false},
		{"85 at maturity", edit(good, func(in *workload.RiskInput) { in.Applicant.Age = 60 }), true},
		{"85 and a month at maturity", edit(good, func(in *workload.RiskInput) { in.Applicant.Age, in.Loan.TermMonths = 60, 301 }),
			false},
		{"income exactly 10 % below stated", edit(good, func(in *workload.RiskInput) { in.Applicant.Income.VerifiedMonthly = 7200 }), true},
		{"income a unit more than 10 % below stated", edit(good, func(in *workload.RiskInput) { in.Applicant.Income.VerifiedMonthly = 7199 }),
			false},
		{"income not verified", edit(good, func(in *workload.RiskInput) { in.Applicant.Income.Verified = false }), false},
		{"six open debts", edit(good, func(in *workload.RiskInput) {
			in.Applicant.Debts = slices.Repeat([]workload.RiskDebt{{Kind: "card", Monthly: 50}}, 6)
		}), true},
		{"seven open debts, some alike", edit(good, func(in *workload.RiskInput) {
			in.Applicant.Debts = slices.Repeat([]workload.RiskDebt{{Kind: "card", Monthly: 50}}, 7)
		}),
			false},
		{"bankrupt 7 years ago", edit(good, func(in *workload.RiskInput) { in.Applicant.History.BankruptcyYearsAgo = n(7) }), true},
		{"bankrupt 6 years ago", edit(good, func(in *workload.RiskInput) { in.Applicant.History.BankruptcyYearsAgo = n(6) }), false},
		{"a default", edit(good, func(in *workload.RiskInput) { in.Applicant.History.Defaults = 1 }), false},
		{"two bureaus at the product minimum", edit(good, func(in *workload.RiskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": n(640), "experian": n(800), "transunion": nil}
		}), true},
		{"two bureaus, the lower below the product minimum", edit(good, func(in *workload.RiskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": n(639), "transunion": n(800)}
		}), false},
		{"three bureaus take the median", edit(good, func(in *workload.RiskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": n(600), "experian": n(700), "transunion": n(800)}
		}), true},
		{"a bureau the lender does not use", edit(good, func(in *workload.RiskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": n(800), "creditsafe": n(800)}
		}), false},
		{"business at the industry limit", edit(good, func(in *workload.RiskInput) {
			in.Applicant.Industry = "retail"
			in.Loan = workload.RiskLoan{Product: "business", Amount: 100_000, TermMonths: 60, MonthlyPayment: 1900}
		}), true},
		{"business past the industry limit", edit(good, func(in *workload.RiskInput) {
			in.Applicant.Industry = "construction"
			in.Loan = workload.RiskLoan{Product: "business", Amount: 100_000, TermMonths: 60, MonthlyPayment: 1900}
		}), false},
		{"mortgage at its maximum term", edit(good, func(in *workload.RiskInput) { in.Applicant.Age, in.Loan.TermMonths = 30, 360 }), true},
		{"mortgage past its maximum term", edit(good, func(in *workload.RiskInput) { in.Applicant.Age, in.Loan.TermMonths = 30, 361 }),
			false},
		{"mortgage below its minimum amount", edit(good, func(in *workload.RiskInput) { in.Loan.Amount = 49_999 }), false},
		{"no collateral", edit(good, func(in *workload.RiskInput) { in.Loan.CollateralValue = 0 }), false},
		{"sanctioned", edit(good, func(in *workload.RiskInput) { in.Applicant.ID = d.Sanctions[len(d.Sanctions)-1] }), false},
		{"blocked country", edit(good, func(in *workload.RiskInput) { in.Applicant.Country = "IR" }), false},
		{"unknown country", edit(good, func(in *workload.RiskInput) { in.Applicant.Country = "XX" }), false},
		{"unknown industry", edit(good, func(in *workload.RiskInput) { in.Applicant.Industry = "astrology" }), false},
		{"unknown product", edit(good, func(in *workload.RiskInput) { in.Loan.Product = "timeshare" }), false},
	}
	var hand []handCase[workload.RiskInput]
	for _, c := range cases {
		hand = append(hand, handCase[workload.RiskInput]{c.name, c.in(), c.allow})
	}
	checkHandCases(t, w, hand, func(in workload.RiskInput) []byte { return riskRequest(d, in) },
		func(in workload.RiskInput) bool { allow, _ := d.Decide(in); return allow })
}

// The generated tier permits carry the tables'
// numbers: a change to a tier or a weight must reach the Cedar version.
func TestRiskTiersFollowTheTables(t *testing.T) {
	d := builtinOrFail(t, "risk").Model.(*workload.RiskData)
	d.Weights["credit"] = 31
	d.Tiers["prime"] = workload.RiskTier{MinScore: 8123, MaxAmountPct: 99, MaxDTIBPS: 4321, MaxLTVBPS: 8765}
	p := riskTiers(d)
	for _, want := range []string{"31 * (if context.credit_score >= 780", ") >= 8123 &&", ") < 8123 &&",
		"resource.max_amount * 99", "<= 4321 * context.applicant.income.verified_monthly", "<= 8765 * context.loan.collateral_value"} {
		if !strings.Contains(p, want) {
			t.Errorf("generated tiers policy lacks %q:\n%s", want, p)
		}
	}
}
