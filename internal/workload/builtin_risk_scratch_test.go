package workload

import (
	"math/rand/v2"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

func TestRiskScratchRuleCount(t *testing.T) {
	m, _ := ast.ParseModule("risk.rego", string(riskPolicy))
	t.Logf("rules: %d", len(m.Rules))
}

func TestRiskScratchManySeeds(t *testing.T) {
	for seed := int64(100); seed < 140; seed++ {
		w, _ := buildRisk(seed, 1000)
		r := checkAgainstOPA(t, w)
		if len(r) < 6 {
			t.Errorf("seed %d: %d reasons", seed, len(r))
		}
	}
}

// Perturb generated applications toward exact thresholds, outside the generator's distribution.
func TestRiskScratchBoundaries(t *testing.T) {
	d := riskTables()
	r := rand.New(rand.NewPCG(7, 7))
	w := &Workload{Name: "risk", Query: "data.authzbench.risk.allow",
		Policies: []File{{Name: "risk.rego", Content: riskPolicy}}, Data: mustJSON(map[string]any{"risk": d})}
	for i := range 20000 {
		in := riskApplication(r, d, i)
		switch r.IntN(8) {
		case 0: // exact DTI threshold
			bps := []int{2000, 3000, 3600, 4300}[r.IntN(4)]
			other := in.Loan.MonthlyPayment
			for _, x := range in.Applicant.Debts {
				other += x.Monthly
			}
			in.Applicant.Income.VerifiedMonthly = 10000 * other / bps
			in.Applicant.Income.StatedMonthly = in.Applicant.Income.VerifiedMonthly
			if (10000*other)%bps == 0 {
				// exact
			}
		case 1: // exact LTV
			bps := []int{6000, 7000, 8000, 9000}[r.IntN(4)]
			in.Loan.CollateralValue = in.Loan.Amount * 10000 / bps
		case 2:
			in.Applicant.Age = 18 + r.IntN(3)
		case 3:
			in.Loan.Amount = d.Products[in.Loan.Product].MaxAmount * []int{50, 75, 100}[r.IntN(3)] / 100
		case 4:
			y := 6 + r.IntN(3)
			in.Applicant.History.BankruptcyYearsAgo = &y
		case 5:
			in.Applicant.Income.VerifiedMonthly = in.Applicant.Income.StatedMonthly * 9 / 10
		}
		allow, reason := riskDecide(d, in)
		w.Inputs = append(w.Inputs, Input{JSON: mustJSON(in), Expect: expectOf(allow), Reason: reason})
	}
	pq := prepareOPA(t, w)
	wrong := 0
	for i, in := range w.Inputs {
		a, def, err := opaDecide(pq, in.JSON)
		if err != nil || !def || expectOf(a) != in.Expect {
			wrong++
			if wrong < 5 {
				t.Errorf("%d: opa %v def %v err %v; model %s (%s)\n%s", i, a, def, err, in.Expect, in.Reason, in.JSON)
			}
		}
	}
	t.Logf("wrong %d of %d", wrong, len(w.Inputs))
}
