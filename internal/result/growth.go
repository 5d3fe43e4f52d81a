package result

// GrowthModel is a shape of latency against N: flat, growing with log N, or with N.
type GrowthModel string

const (
	Constant    GrowthModel = "constant"    // y = a
	Logarithmic GrowthModel = "logarithmic" // y = a + b·ln N
	Linear      GrowthModel = "linear"      // y = a + b·N
)

// GrowthFit is how one percentile of one target's latency grows along one scaling series: every
// model fitted to the points, and the one chosen by the rule in internal/fit.
type GrowthFit struct {
	Series     string `json:"series"` // "rules-path/rego-rules"
	Target     string `json:"target"`
	Param      string `json:"param"`      // what N counts: "rules", "users"
	Percentile string `json:"percentile"` // "p50", "p99"
	// Points are the (N, latency in µs) the models were fitted to, by N.
	Points []GrowthPoint `json:"points"`
	// Model is the chosen model, with its coefficients and R² repeated from Fits.
	Model     GrowthModel `json:"model"`
	Slope     float64     `json:"slope"`     // µs per unit of N (linear) or per unit of ln N (logarithmic); 0 for constant
	Intercept float64     `json:"intercept"` // µs
	R2        float64     `json:"r2"`
	// Fits are all three models, for the reader who disagrees with the rule.
	Fits []ModelFit `json:"fits"`
	// Why says, in a phrase, why the rule chose the model.
	Why string `json:"why"`
}

// GrowthPoint is one run's size and latency percentile.
type GrowthPoint struct {
	N         int     `json:"n"`
	LatencyUS float64 `json:"latency_us"`
}

// ModelFit is one model fitted by least squares.
type ModelFit struct {
	Model     GrowthModel `json:"model"`
	Slope     float64     `json:"slope"`
	Intercept float64     `json:"intercept"`
	R2        float64     `json:"r2"`
}
