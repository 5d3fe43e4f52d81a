package workload

import (
	"slices"
	"testing"
)

func TestRiskMatchesReferenceModel(t *testing.T) {
	w, err := buildRisk(DefaultSeed, 1000)
	if err != nil {
		t.Fatal(err)
	}
	reasons := checkInputs(t, w)
	if len(reasons) < 6 {
		t.Errorf("declines come from %d distinct rules, want at least 6: %v", len(reasons), reasons)
	}
}

// Other seeds reach other corners of the policy; the inputs stay decided there too (OPA is
// checked on them in internal/engine/opa).
func TestRiskMatchesReferenceModelOtherSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("a few thousand evaluations")
	}
	for _, seed := range []int64{1, 2, 3} {
		w, err := buildRisk(seed, 700)
		if err != nil {
			t.Fatal(err)
		}
		checkInputs(t, w)
	}
}

// riskPrimeApplicant is a prime applicant for a mortgage: score 9400, DTI 2437 bps, LTV
// 5000 bps. Hand-written cases edit a fresh copy.
func riskPrimeApplicant() RiskInput {
	score := func(s int) *int { return &s }
	return RiskInput{
		Applicant: RiskApplicant{
			ID: "app-good", Age: 40, Country: "DE", Industry: "technology",
			Income:     RiskIncome{StatedMonthly: 8000, VerifiedMonthly: 8000, Verified: true},
			Employment: RiskEmployment{Type: "salaried", Years: 8, Verified: true},
			Bureaus:    map[string]*int{"equifax": score(790), "experian": score(800), "transunion": score(785)},
			Debts:      []RiskDebt{{Kind: "card", Monthly: 200}},
		},
		Loan: RiskLoan{Product: "mortgage", Amount: 300_000, TermMonths: 300, CollateralValue: 600_000, MonthlyPayment: 1750},
	}
}

// TestRiskDecide runs hand-written cases, one or more per rule, through the reference model
// (internal/engine/cedar runs them through Cedar).
func TestRiskDecide(t *testing.T) {
	d := riskTables()
	score := func(s int) *int { return &s }
	good := riskPrimeApplicant
	edit := func(f func(*RiskInput)) RiskInput { in := good(); f(&in); return in }
	tests := []handCase[RiskInput]{
		{"strong applicant", good(), true, "allow: prime"},
		{"sanctioned", edit(func(in *RiskInput) { in.Applicant.ID = d.Sanctions[0] }), false, "deny: sanctioned"},
		{"seventeen", edit(func(in *RiskInput) { in.Applicant.Age = 17 }), false, "deny: underage"},
		{"too old at maturity", edit(func(in *RiskInput) { in.Applicant.Age = 62 }), false, "deny: over maximum age at maturity"},
		{"blocked country", edit(func(in *RiskInput) { in.Applicant.Country = "KP" }), false, "deny: blocked country"},
		{"unknown product", edit(func(in *RiskInput) { in.Loan.Product = "timeshare" }), false, "deny: unknown product"},
		{"over product maximum", edit(func(in *RiskInput) { in.Loan.Amount = 1_600_000; in.Loan.CollateralValue = 3_000_000 }), false, "deny: amount out of range"},
		{"no collateral", edit(func(in *RiskInput) { in.Loan.CollateralValue = 0 }), false, "deny: collateral required"},
		{"bankrupt 3 years ago", edit(func(in *RiskInput) { in.Applicant.History.BankruptcyYearsAgo = score(3) }), false, "deny: recent bankruptcy"},
		{"bankrupt 7 years ago is past", edit(func(in *RiskInput) { in.Applicant.History.BankruptcyYearsAgo = score(7) }), true, "allow: prime"},
		{"unknown employment type", edit(func(in *RiskInput) { in.Applicant.Employment.Type = "freelance" }), false, "deny: unknown employment type"},
		{"income 11 % below stated", edit(func(in *RiskInput) { in.Applicant.Income.VerifiedMonthly = 7120 }), false, "deny: income mismatch"},
		{"income exactly 10 % below stated", edit(func(in *RiskInput) { in.Applicant.Income.VerifiedMonthly = 7200 }), true, "allow: prime"},
		{"one bureau", edit(func(in *RiskInput) { in.Applicant.Bureaus = map[string]*int{"equifax": score(800)} }), false, "deny: thin credit file"},
		{"two bureaus take the lower", edit(func(in *RiskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": score(630), "experian": score(800)}
		}), false, "deny: score below product minimum"},
		{"business in a risky industry", edit(func(in *RiskInput) {
			in.Applicant.Industry = "construction"
			in.Loan = RiskLoan{Product: "business", Amount: 100_000, TermMonths: 60, MonthlyPayment: 1900}
		}), false, "deny: industry not eligible"},
		{"late payments lower the tier", edit(func(in *RiskInput) {
			in.Applicant.History.Late12m, in.Applicant.History.Late24m = 7, 8
		}), true, "allow: near_prime"},
		{"near-prime amount limit", edit(func(in *RiskInput) {
			in.Applicant.History.Late12m, in.Applicant.History.Late24m = 7, 8
			in.Loan.Amount, in.Loan.CollateralValue, in.Loan.MonthlyPayment = 1_200_000, 2_000_000, 7000
			in.Applicant.Income.StatedMonthly, in.Applicant.Income.VerifiedMonthly = 30_000, 30_000
		}), false, "deny: amount over tier limit"},
		{"debt-to-income over the tier limit", edit(func(in *RiskInput) { in.Loan.MonthlyPayment = 3400 }), false, "deny: dti over tier limit"},
		{"nothing left to live on", edit(func(in *RiskInput) {
			in.Applicant.Income = RiskIncome{StatedMonthly: 2500, VerifiedMonthly: 2500, Verified: true}
			in.Loan.MonthlyPayment = 1550
		}), false, "deny: residual income too low"},
	}
	w := riskWorkload(d)
	checkHandCases(t, w, tests, func(in RiskInput) (bool, string) { return riskDecide(d, in) })
}

// TestRiskBoundaries decides applications that sit exactly on a limit, and one step past it,
// with the reference model (internal/engine/cedar decides them with Cedar). Score, ratio and amount limits are met with
// equality, where a rounded ratio would be most likely to flip a decision.
func TestRiskBoundaries(t *testing.T) {
	d := riskTables()
	n := func(s int) *int { return &s }
	good := riskPrimeApplicant
	edit := func(base func() RiskInput, f func(*RiskInput)) func() RiskInput {
		return func() RiskInput { in := base(); f(&in); return in }
	}
	// primeEdge scores exactly 8000 (prime's minimum) with a DTI of exactly 4300 bps (prime's
	// limit): credit 3000, DTI 800, LTV 1000, employment 800, history 900, country 500,
	// industry 1000.
	primeEdge := edit(good, func(in *RiskInput) {
		in.Applicant.Industry = "healthcare"
		in.Applicant.Employment.Years = 3
		in.Applicant.History.Late12m, in.Applicant.History.Late24m = 2, 4
		in.Loan.MonthlyPayment = 3240 // 3440 of 8000 a month
	})
	// nearPrimeEdge scores exactly 6500 with a DTI of exactly 3600 bps and an LTV of exactly
	// 8000 bps, near-prime's limits: credit 1500, DTI 1200, LTV 800, employment 600, history
	// 1500, country 500, industry 400.
	nearPrimeEdge := edit(good, func(in *RiskInput) {
		in.Applicant.Industry = "construction"
		in.Applicant.Employment.Years = 1
		in.Applicant.Bureaus = map[string]*int{"equifax": n(660), "experian": n(670), "transunion": n(700)}
		in.Loan.Amount, in.Loan.CollateralValue, in.Loan.MonthlyPayment = 320_000, 400_000, 2680
	})
	// subprimeEdge scores exactly 5000 with a DTI of exactly 3000 bps and an LTV of exactly
	// 7000 bps, subprime's limits: credit 1500, DTI 1600, LTV 800, employment 400, history 300,
	// country 200, industry 200.
	subprimeEdge := edit(good, func(in *RiskInput) {
		in.Applicant.Country, in.Applicant.Industry = "BR", "gambling"
		in.Applicant.Employment = RiskEmployment{Type: "self_employed", Years: 1, Verified: true}
		in.Applicant.Bureaus = map[string]*int{"equifax": n(660), "experian": n(670), "transunion": n(700)}
		in.Applicant.History.Late12m, in.Applicant.History.Late24m = 4, 8
		in.Loan.Amount, in.Loan.CollateralValue, in.Loan.MonthlyPayment = 280_000, 400_000, 2200
	})
	// nearPrimeAmount is near-prime (score 7900: no history points) and borrows exactly 75 % of
	// the mortgage maximum, near-prime's amount limit.
	nearPrimeAmount := edit(good, func(in *RiskInput) {
		in.Applicant.History.Late12m, in.Applicant.History.Late24m = 7, 8
		in.Applicant.Income.StatedMonthly, in.Applicant.Income.VerifiedMonthly = 30_000, 30_000
		in.Loan.Amount, in.Loan.CollateralValue, in.Loan.MonthlyPayment = 1_125_000, 2_000_000, 7000
	})
	// personal is a prime applicant for an unsecured personal loan of 20000, the most an
	// applicant with unverified employment may borrow.
	personal := edit(good, func(in *RiskInput) {
		in.Loan = RiskLoan{Product: "personal", Amount: 20_000, TermMonths: 36, MonthlyPayment: 600}
	})
	// residualEdge keeps exactly 800 a month (the minimum) at a DTI of 4286 bps.
	residualEdge := edit(personal, func(in *RiskInput) {
		in.Applicant.Income = RiskIncome{StatedMonthly: 1400, VerifiedMonthly: 1400, Verified: true}
		in.Applicant.Debts = nil
	})

	cases := []struct {
		name   string
		in     func() RiskInput
		allow  bool
		reason string
	}{
		{"score 8000 and DTI 4300 bps are prime", primeEdge, true, "allow: prime"},
		{"score 7925 is near-prime, where DTI 4300 bps is too much", edit(primeEdge, func(in *RiskInput) { in.Applicant.History.Late24m = 5 }),
			false, "deny: dti over tier limit"},
		{"DTI one unit over 4300 bps", edit(primeEdge, func(in *RiskInput) { in.Loan.MonthlyPayment = 3241 }), false, "deny: dti over tier limit"},
		{"score 6500, DTI 3600 and LTV 8000 bps are near-prime", nearPrimeEdge, true, "allow: near_prime"},
		{"score 6425 is subprime, where DTI 3600 bps is too much", edit(nearPrimeEdge, func(in *RiskInput) { in.Applicant.History.Late24m = 1 }),
			false, "deny: dti over tier limit"},
		{"LTV one unit over 8000 bps costs points and the tier", edit(nearPrimeEdge, func(in *RiskInput) { in.Loan.CollateralValue = 399_999 }),
			false, "deny: dti over tier limit"},
		{"score 5000, DTI 3000 and LTV 7000 bps are subprime", subprimeEdge, true, "allow: subprime"},
		{"score 4925 is declined", edit(subprimeEdge, func(in *RiskInput) { in.Applicant.History.Late24m = 9 }), false, "deny: score too low"},
		{"subprime LTV one unit over 7000 bps", edit(subprimeEdge, func(in *RiskInput) { in.Loan.CollateralValue = 399_999 }),
			false, "deny: ltv over tier limit"},
		{"DTI one unit over 3000 bps costs points and the tier", edit(subprimeEdge, func(in *RiskInput) { in.Loan.MonthlyPayment = 2201 }),
			false, "deny: score too low"},
		{"LTV 9000 bps is prime", edit(good, func(in *RiskInput) { in.Loan.Amount, in.Loan.CollateralValue = 270_000, 300_000 }), true, "allow: prime"},
		{"LTV one unit over 9000 bps", edit(good, func(in *RiskInput) { in.Loan.Amount, in.Loan.CollateralValue = 270_000, 299_999 }),
			false, "deny: ltv over tier limit"},
		{"exactly 75 % of the maximum is near-prime", nearPrimeAmount, true, "allow: near_prime"},
		{"one more than 75 % of the maximum", edit(nearPrimeAmount, func(in *RiskInput) { in.Loan.Amount = 1_125_001 }), false, "deny: amount over tier limit"},
		{"residual income exactly 800", residualEdge, true, "allow: prime"},
		{"residual income 799", edit(residualEdge, func(in *RiskInput) { in.Loan.MonthlyPayment = 601 }), false, "deny: residual income too low"},
		{"unverified employment borrows 20000", edit(personal, func(in *RiskInput) { in.Applicant.Employment.Verified = false }), true, "allow: prime"},
		{"unverified employment borrows 20001", edit(personal, func(in *RiskInput) {
			in.Applicant.Employment.Verified = false
			in.Loan.Amount = 20_001
		}), false, "deny: employment not acceptable"},
		{"unemployed", edit(good, func(in *RiskInput) { in.Applicant.Employment.Type = "unemployed" }), false, "deny: employment not acceptable"},
		{"unknown employment type", edit(good, func(in *RiskInput) { in.Applicant.Employment.Type = "freelance" }), false, "deny: unknown employment type"},
		{"18 years old", edit(good, func(in *RiskInput) { in.Applicant.Age = 18 }), true, "allow: prime"},
		{"17 years old", edit(good, func(in *RiskInput) { in.Applicant.Age = 17 }), false, "deny: underage"},
		{"85 at maturity", edit(good, func(in *RiskInput) { in.Applicant.Age = 60 }), true, "allow: prime"},
		{"85 and a month at maturity", edit(good, func(in *RiskInput) { in.Applicant.Age, in.Loan.TermMonths = 60, 301 }),
			false, "deny: over maximum age at maturity"},
		{"income exactly 10 % below stated", edit(good, func(in *RiskInput) { in.Applicant.Income.VerifiedMonthly = 7200 }), true, "allow: prime"},
		{"income a unit more than 10 % below stated", edit(good, func(in *RiskInput) { in.Applicant.Income.VerifiedMonthly = 7199 }),
			false, "deny: income mismatch"},
		{"income not verified", edit(good, func(in *RiskInput) { in.Applicant.Income.Verified = false }), false, "deny: income not verified"},
		{"six open debts", edit(good, func(in *RiskInput) { in.Applicant.Debts = slices.Repeat([]RiskDebt{{"card", 50}}, 6) }), true, "allow: prime"},
		{"seven open debts, some alike", edit(good, func(in *RiskInput) { in.Applicant.Debts = slices.Repeat([]RiskDebt{{"card", 50}}, 7) }),
			false, "deny: too many open debts"},
		{"bankrupt 7 years ago", edit(good, func(in *RiskInput) { in.Applicant.History.BankruptcyYearsAgo = n(7) }), true, "allow: prime"},
		{"bankrupt 6 years ago", edit(good, func(in *RiskInput) { in.Applicant.History.BankruptcyYearsAgo = n(6) }), false, "deny: recent bankruptcy"},
		{"a default", edit(good, func(in *RiskInput) { in.Applicant.History.Defaults = 1 }), false, "deny: default on record"},
		{"two bureaus at the product minimum", edit(good, func(in *RiskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": n(640), "experian": n(800), "transunion": nil}
		}), true, "allow: near_prime"},
		{"two bureaus, the lower below the product minimum", edit(good, func(in *RiskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": n(639), "transunion": n(800)}
		}), false, "deny: score below product minimum"},
		{"three bureaus take the median", edit(good, func(in *RiskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": n(600), "experian": n(700), "transunion": n(800)}
		}), true, "allow: prime"},
		{"a bureau the lender does not use", edit(good, func(in *RiskInput) {
			in.Applicant.Bureaus = map[string]*int{"equifax": n(800), "creditsafe": n(800)}
		}), false, "deny: thin credit file"},
		{"business at the industry limit", edit(good, func(in *RiskInput) {
			in.Applicant.Industry = "retail"
			in.Loan = RiskLoan{Product: "business", Amount: 100_000, TermMonths: 60, MonthlyPayment: 1900}
		}), true, "allow: prime"},
		{"business past the industry limit", edit(good, func(in *RiskInput) {
			in.Applicant.Industry = "construction"
			in.Loan = RiskLoan{Product: "business", Amount: 100_000, TermMonths: 60, MonthlyPayment: 1900}
		}), false, "deny: industry not eligible"},
		{"mortgage at its maximum term", edit(good, func(in *RiskInput) { in.Applicant.Age, in.Loan.TermMonths = 30, 360 }), true, "allow: prime"},
		{"mortgage past its maximum term", edit(good, func(in *RiskInput) { in.Applicant.Age, in.Loan.TermMonths = 30, 361 }),
			false, "deny: term out of range"},
		{"mortgage below its minimum amount", edit(good, func(in *RiskInput) { in.Loan.Amount = 49_999 }), false, "deny: amount out of range"},
		{"no collateral", edit(good, func(in *RiskInput) { in.Loan.CollateralValue = 0 }), false, "deny: collateral required"},
		{"sanctioned", edit(good, func(in *RiskInput) { in.Applicant.ID = d.Sanctions[len(d.Sanctions)-1] }), false, "deny: sanctioned"},
		{"blocked country", edit(good, func(in *RiskInput) { in.Applicant.Country = "IR" }), false, "deny: blocked country"},
		{"unknown country", edit(good, func(in *RiskInput) { in.Applicant.Country = "XX" }), false, "deny: unknown country"},
		{"unknown industry", edit(good, func(in *RiskInput) { in.Applicant.Industry = "astrology" }), false, "deny: unknown industry"},
		{"unknown product", edit(good, func(in *RiskInput) { in.Loan.Product = "timeshare" }), false, "deny: unknown product"},
	}
	var hand []handCase[RiskInput]
	for _, c := range cases {
		hand = append(hand, handCase[RiskInput]{c.name, c.in(), c.allow, c.reason})
	}
	w := riskWorkload(d)
	checkHandCases(t, w, hand, func(in RiskInput) (bool, string) { return riskDecide(d, in) })
}
