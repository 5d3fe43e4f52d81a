# risk: loan risk assessment.
#
# A lender's approval policy for loan applications: hard stops (sanctions, age, blocked
# countries, product limits, bankruptcies, defaults, employment and income verification, thin
# credit files), then seven component scores (credit, debt-to-income, loan-to-value, employment,
# payment history, country, industry) combined with weights from data into a score out of
# 10000, a tier (prime, near-prime, subprime, decline), and tier-specific limits on the amount,
# the debt-to-income and the loan-to-value ratios.
#
# All arithmetic is on integers: ratios are compared by cross-multiplication and expressed in
# basis points, so the Go reference model computes exactly the same thing.
package authzbench.risk

default allow := false

# The loan is approved when no rule denies it and the application reached an approving tier.
allow if {
	count(deny) == 0
	tier in approving_tiers
}

approving_tiers := {"prime", "near_prime", "subprime"}

applicant := input.applicant

loan := input.loan

# ---------------------------------------------------------------------------------------------
# Products

product := data.risk.products[loan.product]

collateral_product if product.requires_collateral

# ---------------------------------------------------------------------------------------------
# Hard stops

deny contains "sanctioned" if {
	applicant.id in data.risk.sanctions
}

deny contains "underage" if {
	applicant.age < 18
}

deny contains "over maximum age at maturity" if {
	applicant.age * 12 + loan.term_months > data.risk.max_age_at_maturity * 12
}

deny contains "blocked country" if {
	data.risk.countries[applicant.country].blocked
}

deny contains "unknown country" if {
	not data.risk.countries[applicant.country]
}

deny contains "unknown industry" if {
	not data.risk.industries[applicant.industry]
}

deny contains "unknown product" if {
	not data.risk.products[loan.product]
}

deny contains "amount out of range" if {
	loan.amount < product.min_amount
}

deny contains "amount out of range" if {
	loan.amount > product.max_amount
}

deny contains "term out of range" if {
	loan.term_months < product.min_term_months
}

deny contains "term out of range" if {
	loan.term_months > product.max_term_months
}

deny contains "collateral required" if {
	collateral_product
	not positive_collateral
}

positive_collateral if loan.collateral_value > 0

deny contains "recent bankruptcy" if {
	years := applicant.history.bankruptcy_years_ago
	years != null
	years < data.risk.bankruptcy_lookback_years
}

deny contains "default on record" if {
	applicant.history.defaults > 0
}

deny contains "employment not acceptable" if {
	applicant.employment.type == "unemployed"
}

deny contains "employment not acceptable" if {
	not applicant.employment.verified
	loan.amount > data.risk.unverified_employment_max_amount
}

deny contains "income not verified" if {
	not applicant.income.verified
}

# Verified income more than the tolerance below stated income: the application overstated it.
deny contains "income mismatch" if {
	applicant.income.verified
	applicant.income.verified_monthly * 10000 < applicant.income.stated_monthly * (10000 - data.risk.income_tolerance_bps)
}

# Too many open credit lines signals an applicant borrowing to service debt.
deny contains "too many open debts" if {
	count(applicant.debts) > data.risk.max_open_debts
}

# Whatever the ratios say, the applicant must keep enough each month to live on.
deny contains "residual income too low" if {
	income - monthly_debt < data.risk.min_residual_income
}

# Some products are only offered to applicants working in low-risk industries.
deny contains "industry not eligible" if {
	industry_risk > product.max_industry_risk
}

deny contains "thin credit file" if {
	count(bureau_scores) < 2
}

deny contains "score below product minimum" if {
	count(bureau_scores) >= 2
	credit_score < product.min_score
}

deny contains "score too low" if {
	tier == "decline"
}

deny contains "amount over tier limit" if {
	limit := data.risk.tiers[tier].max_amount_pct
	loan.amount * 100 > product.max_amount * limit
}

deny contains "dti over tier limit" if {
	dti_over(data.risk.tiers[tier].max_dti_bps)
}

deny contains "ltv over tier limit" if {
	collateral_product
	positive_collateral
	ltv_over(data.risk.tiers[tier].max_ltv_bps)
}

# ---------------------------------------------------------------------------------------------
# Credit score: the bureaus' scores aggregated. With three scores, the median; with two, the
# lower one (lenders take the conservative figure).

bureau_scores := [s |
	some bureau in data.risk.bureaus
	s := applicant.bureaus[bureau]
	is_number(s)
]

sorted_scores := sort(bureau_scores)

credit_score := sorted_scores[1] if count(sorted_scores) == 3

credit_score := sorted_scores[0] if count(sorted_scores) == 2

credit_points := 100 if credit_score >= 780

credit_points := 85 if {
	credit_score >= 740
	credit_score < 780
}

credit_points := 70 if {
	credit_score >= 700
	credit_score < 740
}

credit_points := 50 if {
	credit_score >= 660
	credit_score < 700
}

credit_points := 30 if {
	credit_score >= 620
	credit_score < 660
}

credit_points := 0 if credit_score < 620

# ---------------------------------------------------------------------------------------------
# Debt to income: every monthly debt payment, the new loan's included, against verified income.

monthly_debt := sum([d.monthly | some d in applicant.debts]) + loan.monthly_payment

income := applicant.income.verified_monthly

# dti_over(bps) holds when monthly_debt / income > bps / 10000.
dti_over(bps) if monthly_debt * 10000 > bps * income

dti_within(bps) if not dti_over(bps)

dti_points := 100 if dti_within(2000)

dti_points := 80 if {
	dti_over(2000)
	dti_within(3000)
}

dti_points := 60 if {
	dti_over(3000)
	dti_within(3600)
}

dti_points := 40 if {
	dti_over(3600)
	dti_within(4300)
}

dti_points := 0 if dti_over(4300)

# ---------------------------------------------------------------------------------------------
# Loan to value, for products secured by collateral.

# ltv_over(bps) holds when amount / collateral_value > bps / 10000.
ltv_over(bps) if loan.amount * 10000 > bps * loan.collateral_value

ltv_within(bps) if not ltv_over(bps)

ltv_points := 60 if not collateral_product

ltv_points := 20 if {
	collateral_product
	not positive_collateral
}

ltv_points := 100 if {
	collateral_product
	positive_collateral
	ltv_within(6000)
}

ltv_points := 80 if {
	collateral_product
	positive_collateral
	ltv_over(6000)
	ltv_within(8000)
}

ltv_points := 50 if {
	collateral_product
	positive_collateral
	ltv_over(8000)
	ltv_within(9000)
}

ltv_points := 20 if {
	collateral_product
	positive_collateral
	ltv_over(9000)
}

# ---------------------------------------------------------------------------------------------
# Employment

employment := applicant.employment

employment_points := 100 if {
	employment.type == "salaried"
	employment.years >= 5
}

employment_points := 80 if {
	employment.type == "salaried"
	employment.years >= 2
	employment.years < 5
}

employment_points := 60 if {
	employment.type == "salaried"
	employment.years < 2
}

employment_points := 70 if {
	employment.type == "self_employed"
	employment.years >= 3
}

employment_points := 40 if {
	employment.type == "self_employed"
	employment.years < 3
}

employment_points := 50 if employment.type == "contract"

employment_points := 70 if employment.type == "retired"

employment_points := 0 if employment.type == "unemployed"

# ---------------------------------------------------------------------------------------------
# Payment history: late payments in the last 12 months weigh three times those of the 12 before.

history := applicant.history

late_older := history.late_24m - history.late_12m

history_penalty := (15 * history.late_12m) + (5 * late_older)

history_points := 100 - history_penalty if history_penalty <= 100

history_points := 0 if history_penalty > 100

# ---------------------------------------------------------------------------------------------
# Country and industry risk, from tables in data (risk levels 1 to 5).

country_risk := data.risk.countries[applicant.country].risk

industry_risk := data.risk.industries[applicant.industry].risk

risk_points(level) := 100 - (20 * (level - 1))

country_points := risk_points(country_risk)

industry_points := risk_points(industry_risk)

# ---------------------------------------------------------------------------------------------
# The weighted score, out of 10000 (weights in data sum to 100, points are out of 100).

weights := data.risk.weights

components := {
	"credit": credit_points,
	"dti": dti_points,
	"ltv": ltv_points,
	"employment": employment_points,
	"history": history_points,
	"country": country_points,
	"industry": industry_points,
}

score := sum([w | some name, points in components; w := weights[name] * points])

# ---------------------------------------------------------------------------------------------
# Tiers

tier := "prime" if score >= data.risk.tiers.prime.min_score

tier := "near_prime" if {
	score >= data.risk.tiers.near_prime.min_score
	score < data.risk.tiers.prime.min_score
}

tier := "subprime" if {
	score >= data.risk.tiers.subprime.min_score
	score < data.risk.tiers.near_prime.min_score
}

tier := "decline" if score < data.risk.tiers.subprime.min_score

# ---------------------------------------------------------------------------------------------
# Pricing: the rate offered to an approved application, in basis points over the base rate.
# Not part of the approval; a caller asks for data.authzbench.risk.offer.

rate_surcharges contains ["high ltv", 75] if {
	collateral_product
	positive_collateral
	ltv_over(8000)
}

rate_surcharges contains ["self employed", 50] if {
	employment.type == "self_employed"
}

rate_surcharges contains ["recent late payments", 40] if {
	history.late_12m > 0
}

rate_discounts contains ["long employment", 25] if {
	employment.years >= 10
}

offered_rate_bps := ((data.risk.base_rate_bps + data.risk.tiers[tier].rate_premium_bps) + sum([bps | some [_, bps] in rate_surcharges])) - sum([bps | some [_, bps] in rate_discounts])

offer := {"approved": true, "tier": tier, "rate_bps": offered_rate_bps} if allow

offer := {"approved": false, "reasons": reasons} if not allow

# ---------------------------------------------------------------------------------------------
# Explanations, for a person reading a decision (not used by allow).

reasons := sort([r | some r in deny])

summary := {
	"allow": allow,
	"tier": tier,
	"score": score,
	"credit_score": credit_score,
	"reasons": reasons,
}
