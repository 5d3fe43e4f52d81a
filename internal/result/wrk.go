package result

// Wrk is what wrk reached against the same server in the same run (`calibrate --wrk`): the
// yardstick for the generator's own cost. Its figures are wrk's own, read from its output, but
// for its CPU, which is the kernel's account of the wrk process.
type Wrk struct {
	Command     []string `json:"command"`
	Threads     int      `json:"threads"`
	Connections int      `json:"connections"`
	// DurationS is the time wrk measured over, as it reported it ("N requests in 2.00s").
	DurationS float64 `json:"duration_s"`
	Requests  int64   `json:"requests"`
	// ThroughputRPS is wrk's Requests/sec: every response, whatever its status (NonSuccess says
	// how many were not 2xx or 3xx).
	ThroughputRPS float64 `json:"throughput_rps"`
	// CPUSeconds is the user and system CPU of the wrk process; CPUPerRequestUS divides it by
	// Requests, as the harness's figure of the same name does for authzbench.
	CPUSeconds      float64 `json:"cpu_s"`
	CPUPerRequestUS float64 `json:"cpu_per_request_us"`
	// LatencyUS is wrk's latency distribution (--latency), from the actual send: wrk does not
	// correct for coordinated omission. Nil when its output had none.
	LatencyUS    *WrkLatency `json:"latency_us,omitempty"`
	NonSuccess   int64       `json:"non_2xx_3xx,omitempty"`
	SocketErrors int64       `json:"socket_errors,omitempty"` // connect, read, write and timeout, together
}

// WrkLatency is the part of a latency distribution wrk prints, in microseconds; a percentile
// it did not print is 0.
type WrkLatency struct {
	P50  float64 `json:"p50"`
	P75  float64 `json:"p75"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}
