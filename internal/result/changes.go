package result

// Operation is one kind of request a run sent beside its decisions (a write, in a run with
// changes): what it sent and how it ended, with its own latency histogram, so that reports give
// it rows of its own instead of mixing it into the decisions'. A decision run without other
// operations has none.
type Operation struct {
	// Name is the operation's: "write".
	Name     string `json:"name"`
	Requests uint64 `json:"requests"`
	// OK counts the acknowledged ones; only those count as done.
	OK     uint64 `json:"ok"`
	Errors uint64 `json:"errors"`
	// ErrorClasses splits the errors by kind (http_409, transport, timeout, deadlock, ...);
	// ErrorMessages holds the first message of each.
	ErrorClasses  map[string]uint64 `json:"error_classes,omitempty"`
	ErrorMessages map[string]string `json:"error_messages,omitempty"`
	// Interrupted counts those in flight when the run stopped: neither done nor failed.
	Interrupted uint64 `json:"interrupted,omitempty"`
	// LatencyUS and HDR (ns, V2 compressed) are the acknowledged ones' latencies.
	LatencyUS Percentiles `json:"latency_us"`
	HDR       string      `json:"hdr,omitempty"`
}

// Changes is what a run with changes did to the world and how its answers were judged against
// the versions each may reflect.
type Changes struct {
	// Source is where the changes came from: a changes file, or a built-in family.
	Source string `json:"source"`
	// Stream is the number of changes given; Applied how many were acknowledged.
	Stream  int     `json:"stream"`
	Applied int     `json:"applied"`
	RatePS  float64 `json:"rate_per_s"`
	// Consistency is what the decisions asked for, in the engine's words, when it asks any;
	// AllowedStaleMS how old a stale answer may be within its promise (0: none may).
	Consistency    string  `json:"consistency,omitempty"`
	AllowedStaleMS float64 `json:"allowed_stale_ms"`
	// VersionNamed: the answers named the version they were decided at, and were judged by it.
	VersionNamed bool `json:"version_named,omitempty"`
	// AnswersNamed counts the judged answers that named their version; the others were judged
	// by their decisions (a SpiceDB answer whose revision may also hold the write in flight).
	AnswersNamed uint64 `json:"answers_named,omitempty"`
	// Answers counts the decisions judged: fresh, stale (within the promise),
	// stale_beyond_promise and wrong (also counted in the summary's wrong decisions).
	Answers map[string]uint64 `json:"answers"`
	// StaleAgeUS: how long before each stale answer was sent the world had moved past it.
	StaleAgeUS *Percentiles `json:"stale_age_us,omitempty"`
	// Per change that flips some decision: the time from its acknowledgement to the first answer
	// reflecting it (Visible changes were seen; Unseen ones never were), and to the last answer
	// sent after it and missing it (the new-enemy window: how long a revoked grant still let
	// someone in), as distributions over the changes.
	Visible          int          `json:"visible"`
	Unseen           int          `json:"unseen,omitempty"`
	TimeToVisibleUS  *Percentiles `json:"time_to_visible_us,omitempty"`
	NewEnemyWindowUS *Percentiles `json:"new_enemy_window_us,omitempty"`
	// PauseMS is the longest time without any answer in the measured window (1 ms steps): what a
	// store that stops reads for a write shows. A closed loop hides it (its workers wait).
	PauseMS float64 `json:"pause_ms"`
	// NearChangeUS is the latency of the decisions sent within a second of a change's sending,
	// SteadyUS of the others.
	NearChangeUS *Percentiles `json:"near_change_latency_us,omitempty"`
	SteadyUS     *Percentiles `json:"steady_latency_us,omitempty"`
	// WriteError is the write that failed and stopped the stream, if one did.
	WriteError string `json:"write_error,omitempty"`
	// Writes is each change sent, in order, its times from the start of the measured window
	// (the first MaxChangeWrites; WritesOmitted counts the rest): what the report's timeline
	// marks.
	Writes        []ChangeWrite `json:"writes,omitempty"`
	WritesOmitted int           `json:"writes_omitted,omitempty"`
	// Timeline is an open loop's measured window, step by step by the sends' intended times:
	// how the decisions' latency followed the changes. A closed loop has none (its workers wait
	// out a pause and send nothing to time it by).
	Timeline []TimelineStep `json:"timeline,omitempty"`
}

// MaxChangeWrites bounds the writes a result lists one by one: 10 changes a second for 100 s.
const MaxChangeWrites = 1000

// ChangeWrite is one change as it was sent.
type ChangeWrite struct {
	Version int     `json:"version"`
	SentS   float64 `json:"sent_s"`
	// AckS is when it was acknowledged; Class, empty then, names the error when it was not
	// ("interrupted" for one in flight when the run stopped).
	AckS  float64 `json:"ack_s,omitempty"`
	Class string  `json:"class,omitempty"`
}

// TimelineStep is the sends due in [FromS, ToS) of the measured window: how many, how many were
// answered as decisions, and the latency of every due one from its intended send (an unsent one
// at its lower bound), as the run's summary counts them.
type TimelineStep struct {
	FromS  float64 `json:"from_s"`
	ToS    float64 `json:"to_s"`
	Due    int64   `json:"due"`
	OK     int64   `json:"ok"`
	Errors int64   `json:"errors,omitempty"`
	P50US  float64 `json:"p50_us"`
	P99US  float64 `json:"p99_us"`
	MaxUS  float64 `json:"max_us"`
}
