package result

// Search is one capacity search (authzbench capacity): one workload through one target, probed
// at open-loop rates against an SLO, and what the probes came to. Its probes are runs of the
// document, named by their place in Runs, so a report shows the search beside the runs it rests
// on and anyone can check the verdicts against the histograms.
type Search struct {
	Workload string `json:"workload"`
	// Target is the target as the runs label it (opa/server, cedar/server h2c ×3).
	Target string    `json:"target"`
	SLO    SearchSLO `json:"slo"`
	// Probes are the constant rates tried, in the order tried; a ramp's confirming probe is
	// its one probe.
	Probes []SearchProbe `json:"probes,omitempty"`
	// Met is the highest rate that met the SLO, and Missed the lowest above it that did not
	// (copies of their probes); nil where no probe met it, or none missed it.
	Met    *SearchProbe `json:"met,omitempty"`
	Missed *SearchProbe `json:"missed,omitempty"`
	// Ramp is the linear ramp that replaced the probes (capacity --ramp); nil for a search.
	Ramp *SearchRamp `json:"ramp,omitempty"`
	// Interrupted: the search was stopped before it ended (Ctrl-C, a server that died): Met and
	// Missed are only what was met and missed before that, and no capacity follows from them.
	Interrupted bool `json:"interrupted,omitempty"`
	// Error says why the search could not go on, where a probe could not be measured at all.
	Error string `json:"error,omitempty"`
}

// SearchSLO is what each rate had to meet: the latency at a percentile, from each request's
// intended send time, and the share of errors.
type SearchSLO struct {
	Percentile float64 `json:"percentile"`
	LatencyUS  float64 `json:"latency_us"`
	ErrorRatio float64 `json:"error_ratio"`
}

// SearchProbe is one constant rate tried, and its verdict.
type SearchProbe struct {
	Rate float64 `json:"rate"`
	// Run is the probe's run, its index in the document's Runs; -1 where it has none.
	Run  int    `json:"run"`
	Pass bool   `json:"pass"`
	Why  string `json:"why,omitempty"`
	// LatencyUS is the latency at the SLO's percentile.
	LatencyUS float64 `json:"latency_us"`
	// GeneratorBound: it failed because the generator itself fell behind, its own limit on
	// the machine rather than the server's. Unmeasured: it measured no rate at all.
	GeneratorBound bool `json:"generator_bound,omitempty"`
	Unmeasured     bool `json:"unmeasured,omitempty"`
}

// SearchRamp is a ramp's part of a search: its run, interval by interval, and the estimate it
// gave (the mean rate of the last interval that met the SLO before the first that broke it; 0
// for none), which the search's probe then confirms or refutes.
type SearchRamp struct {
	Run      int     `json:"run"`
	Estimate float64 `json:"estimate"`
	// GeneratorBound: the first interval that broke the SLO broke it through the generator,
	// so the estimate is the generator's limit. AllMet: no judged interval broke it, so the
	// estimate is a floor, not a capacity.
	GeneratorBound bool `json:"generator_bound,omitempty"`
	AllMet         bool `json:"all_met,omitempty"`
}
