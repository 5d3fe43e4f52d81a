# risk-opt: the risk policy rewritten from its profile (authzbench profile --workload risk), the
# same decisions on the same applications. What changed, and why:
#
# - Early rejection and rule ordering: the original builds the whole set of deny reasons
#   before deciding. Here one rule, denied, holds when any hard stop applies, and OPA stops at
#   the first body that holds; the bodies come cheapest and most frequent first (the reasons'
#   counts over the workload's inputs), those that need the score and its tier last.
# - Lookup tables instead of if chains: the original states every band of a score as its own
#   rule, each evaluated; here each band is an else chain that stops at the first band that
#   holds, and the points of a country, an industry and the fixed employment types are tables,
#   written with the data.
# - Cached calculations: the scaled debt and loan amounts are computed once per decision,
#   not once per band; the score is one sum, not a comprehension over an object built for it.
# - Objects for membership: sanctions are an object keyed by applicant id, not an array.
#
# All arithmetic is on integers, as in the original.
package authzbench.risk_opt

default allow := false

allow if {
	not denied
	approving_tiers[tier]
}

approving_tiers := {"prime": true, "near_prime": true, "subprime": true}

applicant := input.applicant

loan := input.loan

employment := applicant.employment

history := applicant.history

product := data.risk.products[loan.product]

collateral_product if product.requires_collateral

positive_collateral if loan.collateral_value > 0

# ---------------------------------------------------------------------------------------------
# Hard stops, cheapest and most frequent first; the score's last.

denied if employment.type == "unemployed"

denied if {
	not employment.verified
	loan.amount > data.risk.unverified_employment_max_amount
}

denied if {
	applicant.income.verified
	applicant.income.verified_monthly * 10000 < applicant.income.stated_monthly * (10000 - data.risk.income_tolerance_bps)
}

denied if not applicant.income.verified

denied if data.risk_opt.sanctioned[applicant.id]

denied if loan.amount < product.min_amount

denied if loan.amount > product.max_amount

denied if applicant.age < 18

denied if not data.risk.countries[applicant.country]

denied if data.risk.countries[applicant.country].blocked

denied if applicant.age * 12 + loan.term_months > data.risk.max_age_at_maturity * 12

denied if {
	years := history.bankruptcy_years_ago
	years != null
	years < data.risk.bankruptcy_lookback_years
}

denied if loan.term_months < product.min_term_months

denied if loan.term_months > product.max_term_months

denied if not data.risk.industries[applicant.industry]

denied if history.defaults > 0

denied if {
	collateral_product
	not positive_collateral
}

denied if not data.risk.products[loan.product]

denied if count(applicant.debts) > data.risk.max_open_debts

denied if data.risk.industries[applicant.industry].risk > product.max_industry_risk

denied if income - monthly_debt < data.risk.min_residual_income

denied if count(bureau_scores) < 2

denied if {
	count(bureau_scores) >= 2
	credit_score < product.min_score
}

denied if dti_scaled > tier_limits.max_dti_bps * income

denied if tier == "decline"

denied if {
	collateral_product
	positive_collateral
	ltv_scaled > tier_limits.max_ltv_bps * loan.collateral_value
}

denied if loan.amount * 100 > product.max_amount * tier_limits.max_amount_pct

tier_limits := data.risk.tiers[tier]

# ---------------------------------------------------------------------------------------------
# Credit score: with three scores, the median; with two, the lower one.

bureau_scores := [s |
	some bureau in data.risk.bureaus
	s := applicant.bureaus[bureau]
	is_number(s)
]

sorted_scores := sort(bureau_scores)

credit_score := sorted_scores[1] if count(sorted_scores) == 3

credit_score := sorted_scores[0] if count(sorted_scores) == 2

credit_points := 100 if {
	credit_score >= 780
} else := 85 if {
	credit_score >= 740
} else := 70 if {
	credit_score >= 700
} else := 50 if {
	credit_score >= 660
} else := 30 if {
	credit_score >= 620
} else := 0 if {
	credit_score < 620
}

# ---------------------------------------------------------------------------------------------
# Debt to income, scaled once: dti_scaled > bps * income holds when debt / income > bps / 10000.

monthly_debt := sum([d.monthly | some d in applicant.debts]) + loan.monthly_payment

income := applicant.income.verified_monthly

dti_scaled := monthly_debt * 10000

dti_points := 100 if {
	dti_scaled <= 2000 * income
} else := 80 if {
	dti_scaled <= 3000 * income
} else := 60 if {
	dti_scaled <= 3600 * income
} else := 40 if {
	dti_scaled <= 4300 * income
} else := 0 if {
	dti_scaled > 4300 * income
}

# ---------------------------------------------------------------------------------------------
# Loan to value, scaled once, for products secured by collateral.

ltv_scaled := loan.amount * 10000

ltv_points := 60 if {
	not collateral_product
} else := 20 if {
	not positive_collateral
} else := 100 if {
	ltv_scaled <= 6000 * loan.collateral_value
} else := 80 if {
	ltv_scaled <= 8000 * loan.collateral_value
} else := 50 if {
	ltv_scaled <= 9000 * loan.collateral_value
} else := 20 if {
	ltv_scaled > 9000 * loan.collateral_value
}

# ---------------------------------------------------------------------------------------------
# Employment: a table for the types whose points do not depend on the years.

employment_points := data.risk_opt.employment_points[employment.type]

employment_points := salaried_points if employment.type == "salaried"

employment_points := self_employed_points if employment.type == "self_employed"

salaried_points := 100 if {
	employment.years >= 5
} else := 80 if {
	employment.years >= 2
} else := 60 if {
	employment.years < 2
}

self_employed_points := 70 if {
	employment.years >= 3
} else := 40 if {
	employment.years < 3
}

# ---------------------------------------------------------------------------------------------
# Payment history: late payments in the last 12 months weigh three times those of the 12 before.

history_penalty := (15 * history.late_12m) + (5 * (history.late_24m - history.late_12m))

history_points := 100 - history_penalty if {
	history_penalty <= 100
} else := 0 if {
	history_penalty > 100
}

# ---------------------------------------------------------------------------------------------
# The weighted score, out of 10000: one sum, points of country and industry from tables.

score := (((((w.credit * credit_points + w.dti * dti_points) + w.ltv * ltv_points) + w.employment * employment_points) + w.history * history_points) + w.country * data.risk_opt.country_points[applicant.country]) + w.industry * data.risk_opt.industry_points[applicant.industry] if {
	w := data.risk.weights
}

tier := "prime" if {
	score >= data.risk.tiers.prime.min_score
} else := "near_prime" if {
	score >= data.risk.tiers.near_prime.min_score
} else := "subprime" if {
	score >= data.risk.tiers.subprime.min_score
} else := "decline" if {
	score < data.risk.tiers.subprime.min_score
}
