package result

// Replica is one of several server processes behind one address (--replicas K): how many
// requests the generator sent it and what it used, so that an imbalance shows.
type Replica struct {
	Index int    `json:"index"` // 1 to K
	URL   string `json:"url"`
	PID   int    `json:"pid,omitempty"`
	// CPUs is the CPU list the replica was pinned to, as asked; "" when unpinned.
	CPUs string `json:"cpus,omitempty"`
	// Connections is how many of the generator's connections went to it over the whole run:
	// each repetition (and warm-up) opens a fresh set, dealt on from where the last one ended.
	Connections int `json:"connections"`
	// Requests counts the requests sent to it over the whole run, warm-ups included.
	Requests int64 `json:"requests"`
	// Resources is what its process used during the measured phases.
	Resources *Resources `json:"resources,omitempty"`
}

// USLFit is the Universal Scalability Law, X(N) = λN / (1 + σ(N−1) + κN(N−1)), fitted to one
// sweep of a result: runs of one workload and target that differ only in Param (workers
// or replicas). A sweep that cannot determine the model says why in Reason, and has no
// coefficients.
type USLFit struct {
	Workload string     `json:"workload"`
	Target   string     `json:"target"`
	Param    string     `json:"param"` // workers or replicas
	Points   []USLPoint `json:"points"`
	Fitted   bool       `json:"fitted"`
	Reason   string     `json:"reason,omitempty"`
	Lambda   float64    `json:"lambda,omitempty"` // req/s of one unit, free of contention
	Sigma    float64    `json:"sigma,omitempty"`  // contention
	Kappa    float64    `json:"kappa,omitempty"`  // crosstalk
	R2       float64    `json:"r2,omitempty"`
	// PeakN is where the model's throughput peaks, √((1−σ)/κ), and PeakRPS its throughput
	// there; with κ = 0 there is no peak (PeakN 0) and throughput levels off at CeilingRPS,
	// λ/σ (0 when σ = 0 too: linear).
	PeakN      float64 `json:"peak_n,omitempty"`
	PeakRPS    float64 `json:"peak_rps,omitempty"`
	CeilingRPS float64 `json:"ceiling_rps,omitempty"`
}

// USLPoint is one run of a sweep: its size and its ok responses per second (the repetitions'
// mean).
type USLPoint struct {
	N   int     `json:"n"`
	RPS float64 `json:"rps"`
	Run int     `json:"run"` // index in runs
}
