package result

import (
	"fmt"
	"strings"
)

// DecisionLogs is how an engine's decision logging was configured for a run (OPA's
// decision_logs, passed through as given) and where every decision it logged went.
type DecisionLogs struct {
	// Mode is where decisions were logged: "console" (OPA's console logger) or "service" (an
	// HTTP service inside authzbench receiving OPA's uploads).
	Mode string `json:"mode"`
	// Settings are OPA's decision_logs settings the run gave, by OPA's own keys
	// ("reporting.buffer_type": "event"); absent ones were OPA's defaults.
	Settings map[string]any `json:"settings,omitempty"`
	// Service is how the log service behaved: healthy, slow (Latency per upload), failing
	// (HTTP 500 to every upload) or down (nothing listening).
	Service string `json:"service,omitempty"`
	Latency string `json:"latency,omitempty"`
	// FlushTimeout is how long OPA was given at the end to upload what it held.
	FlushTimeout string `json:"flush_timeout,omitempty"`
	// Account is where each decision went; nil when the run ended before it could be taken.
	Account *DecisionLogAccount `json:"account,omitempty"`
}

// DecisionLogAccount accounts for every decision OPA logged during a run, by decision ID: each
// was received by the log service exactly once, dropped and counted so by OPA, or still in
// OPA's buffer at the end (drained after OPA's own final flush, to be identified). Missing
// and Duplicated are findings: a decision lost without OPA counting it, or received twice.
type DecisionLogAccount struct {
	// Logged is how many decisions OPA handed its decision logger (after its drop policy).
	Logged int64 `json:"logged"`
	// Console is how many were written to OPA's console (console mode).
	Console int64 `json:"console,omitempty"`
	// Received were uploaded to the service and accepted (HTTP 2xx) during the run or OPA's
	// final flush, each decision ID counted once.
	Received int64 `json:"received"`
	// DroppedRateLimit and DroppedBuffer are decisions OPA dropped and counted
	// (decision_logs_dropped_rate_limit_exceeded, decision_logs_dropped_buffer_size_limit_*).
	// OPA counts a dropped chunk of many decisions once, so where both causes dropped chunks
	// the split cannot be told: DroppedEither holds those.
	DroppedRateLimit int64 `json:"dropped_rate_limit"`
	DroppedBuffer    int64 `json:"dropped_buffer"`
	DroppedEither    int64 `json:"dropped_rate_limit_or_buffer,omitempty"`
	// StillBuffered were in OPA's buffer after its final flush.
	StillBuffered int64 `json:"still_buffered"`
	// Missing were logged, not received, not buffered and not counted as dropped by OPA.
	Missing int64 `json:"missing"`
	// Duplicated are extra copies: decisions the service accepted more than once.
	Duplicated int64 `json:"duplicated"`
	// Unexpected are decisions received that OPA's logger never counted.
	Unexpected int64 `json:"unexpected,omitempty"`
	// OPACounters are OPA's own counters at the end, by OPA's names.
	OPACounters map[string]int64 `json:"opa_counters,omitempty"`
	// OPABuffer is OPA's own measure of what its buffer held after the final flush: events for
	// the event buffer, bytes for the size buffer (BufferType says which).
	OPABuffer  int64  `json:"opa_buffer"`
	BufferType string `json:"buffer_type,omitempty"`
	// Uploads are what the service saw: accepted, refused (HTTP 500), abandoned (the client
	// gave up before the answer) and, after the final flush, drained.
	Uploads DecisionLogUploads `json:"uploads"`
	// Error says why the account is incomplete (OPA never reported at its stop); empty when
	// it is whole.
	Error string `json:"error,omitempty"`
}

// DecisionLogUploads counts the log service's uploads by what became of them.
type DecisionLogUploads struct {
	Accepted  int64 `json:"accepted"`
	Refused   int64 `json:"refused"`
	Abandoned int64 `json:"abandoned"`
	Drained   int64 `json:"drained"`
}

// Findings are what the account shows to be wrong: decisions missing, received twice or never
// logged, or an account that could not be taken.
func (a *DecisionLogAccount) Findings() []string {
	var out []string
	if a.Error != "" {
		out = append(out, "decision log account incomplete: "+a.Error)
	}
	if a.Missing > 0 {
		out = append(out, fmt.Sprintf("%d logged decisions missing: neither received, dropped and counted by OPA, nor buffered", a.Missing))
	}
	if a.Duplicated > 0 {
		out = append(out, fmt.Sprintf("%d decisions received more than once", a.Duplicated))
	}
	if a.Unexpected > 0 {
		out = append(out, fmt.Sprintf("%d decisions received that OPA's logger never counted", a.Unexpected))
	}
	return out
}

// String says where the decisions went, in one line.
func (a *DecisionLogAccount) String() string {
	if a.Console > 0 && a.Received == 0 && a.Uploads == (DecisionLogUploads{}) {
		return fmt.Sprintf("%d decisions logged, %d written to OPA's console", a.Logged, a.Console)
	}
	parts := []string{fmt.Sprintf("%d received", a.Received),
		fmt.Sprintf("%d dropped by rate limit", a.DroppedRateLimit),
		fmt.Sprintf("%d dropped by buffer", a.DroppedBuffer)}
	if a.DroppedEither > 0 {
		parts = append(parts, fmt.Sprintf("%d dropped by rate limit or buffer", a.DroppedEither))
	}
	parts = append(parts, fmt.Sprintf("%d still buffered", a.StillBuffered),
		fmt.Sprintf("%d missing", a.Missing), fmt.Sprintf("%d duplicated", a.Duplicated))
	if a.Unexpected > 0 {
		parts = append(parts, fmt.Sprintf("%d unexpected", a.Unexpected))
	}
	return fmt.Sprintf("%d decisions logged: %s", a.Logged, strings.Join(parts, ", "))
}

// Describe says how decisions were logged and where they went, in one line for the terminal;
// empty before the account is taken.
func (d *DecisionLogs) Describe() string {
	if d == nil || d.Account == nil {
		return ""
	}
	how := d.Mode
	if d.Service != "" {
		how += " " + d.Service
		if d.Latency != "" {
			how += " (" + d.Latency + " an upload)"
		}
	}
	return fmt.Sprintf("decision logs (%s): %s", how, d.Account)
}
