// Package result defines the result document, the only thing reports, compare and merge read:
// every view can be rebuilt from it alone, every histogram a view shows is stored in it, and
// Merge combines documents exactly. It also captures the environment and writes the document
// atomically, so an interrupted write never leaves half a file.
//
// It is a leaf: the standard library, hdrhistogram, buildinfo, outputs (the atomic writer) and
// userwords (what a file that is no result document is said to be), each of which imports the
// standard library alone (TestResultIsALeaf holds it to that). What produced a document
// (load drivers, recorders, targets, servers) converts its own figures into these types (see
// internal/bench/record.go), so a report or a merge links none of the engines.
package result

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/userwords"
)

// Schema names the document version. Field names are never renamed within a version.
const Schema = "authzbench/result/v1"

// Document is one authzbench run.
type Document struct {
	Schema   string    `json:"schema"`
	Created  time.Time `json:"created"`
	Command  []string  `json:"command,omitempty"`
	Scenario string    `json:"scenario,omitempty"`
	Env      Env       `json:"env"`
	// Interrupted marks a partial result: the run was stopped (Ctrl-C, a server that died)
	// before every step finished. What was measured is kept.
	Interrupted bool   `json:"interrupted,omitempty"`
	StopReason  string `json:"stop_reason,omitempty"`
	// Ended is when the last run stopped (or the scenario was stopped); with Created, how long
	// the whole measurement took and what else the machine was doing meanwhile.
	Ended time.Time `json:"ended,omitzero"`
	// Order is how each workload's targets followed one another: "interleaved" (one repetition
	// each in turn, A1 B1 A2 B2 …) or "sequential"; each repetition's turn says exactly.
	Order string `json:"order,omitempty"`
	Runs  []Run  `json:"runs"`
	// Skipped are the workload and target pairs the scenario left out, with why.
	Skipped []Skip `json:"skipped,omitempty"`
	// Comparisons are the ratio columns of the table with their 95 % confidence intervals:
	// a difference is called only when the interval excludes 1.
	Comparisons []Comparison `json:"comparisons,omitempty"`
	// Wrk is what wrk reached against the same server in the same run (calibrate --wrk).
	Wrk *Wrk `json:"wrk,omitempty"`
	// Shard is the part of a sharded scenario this document measured (--shard i/N); nil for a
	// whole run. Shards is, in a document merged from shards (authzbench merge), every part it
	// was made of, each with its own environment.
	Shard  *Shard      `json:"shard,omitempty"`
	Shards []ShardPart `json:"shards,omitempty"`
	// Scalability is the Universal Scalability Law fitted to each sweep of runs that differ
	// only in their workers or replicas (internal/fit).
	Scalability []USLFit `json:"scalability,omitempty"`
	// Growth is how latency grows with N along each scaling series of the runs (Run.Scale),
	// per target and percentile: the models fitted and the one chosen (growth.go).
	Growth []GrowthFit `json:"growth,omitempty"`
	// Replays are the impact of the policy on each replayed decision log, found before any
	// load (replay.go).
	Replays []Replay `json:"replays,omitempty"`
	// Capacity are the capacity searches the document holds, one per workload and target
	// searched (capacity.go); their probes are runs above.
	Capacity []Search `json:"capacity,omitempty"`
}

// Run is one workload through one target under one load setting.
type Run struct {
	Target      string       `json:"target"`
	Workload    string       `json:"workload"`
	WorkloadDoc WorkloadInfo `json:"workload_info"`
	SUT         SUT          `json:"sut"`
	Load        Load         `json:"load"`
	Summary     Summary      `json:"summary"`
	Repetitions []Repetition `json:"repetitions"`
	// Pinning says where the generator and the server ran, when authzbench pinned them for
	// this run (scenarios on small machines); env.pinning says what was asked.
	Pinning string `json:"pinning,omitempty"`
	// Affinity is the CPUs the generator and the server were allowed during the run, read back
	// from the kernel, whoever pinned them.
	Affinity *Affinity `json:"affinity,omitempty"`
	// Harness is what the authzbench process used during the run.
	Harness *Harness `json:"harness,omitempty"`
	// SUTResources is what the server authzbench started used during the measured phases:
	// its process tree's CPU and resident memory, sampled every 250 ms.
	SUTResources *Resources `json:"sut_resources,omitempty"`
	// Partial marks a run cut short; Error says why a run could not start or finish.
	Partial bool   `json:"partial,omitempty"`
	Error   string `json:"error,omitempty"`
	// Scale is the point of a scaling series the run is (its workload was generated for a size,
	// rules-path-1000); nil for any other run.
	Scale *Scale `json:"scale,omitempty"`
	// Operations are the requests sent beside the decisions (a run with changes: its writes),
	// each with its own counts and histogram; none in a decision run.
	Operations []Operation `json:"operations,omitempty"`
	// Changes says how the world changed during the run and how its answers were judged.
	Changes *Changes `json:"changes,omitempty"`
	// Operation is what each request asked when it was not a check: "list-objects" or
	// "list-users" (a whole set, judged against the reference model's), "batch-check" (50
	// checks, judged together). The run's counts and histogram are that operation's, its wrong
	// answers sets with a member missing or extra (a batch with a decision not as expected),
	// and an answer the engine cut short the error class "truncated". Empty for checks.
	Operation string `json:"operation,omitempty"`
}

// Scale places a run in a scaling series: Series names the family and the engine's style
// ("rules-path/rego-rules"), Param what N counts ("rules", "users"), N the size.
type Scale struct {
	Series string `json:"series"`
	Param  string `json:"param"`
	N      int    `json:"n"`
}

// SUT is the system under test of a run: the engine, how it was deployed, and the server
// authzbench started or was pointed at.
type SUT struct {
	Engine string `json:"engine"`
	Mode   string `json:"mode"`
	// Placement is where the engine ran, seen from the generator; empty in files written before
	// it was recorded (Run.Where infers what it can).
	Placement Placement `json:"placement,omitempty"`
	Version   string    `json:"version,omitempty"`
	Command   []string  `json:"command,omitempty"`
	URL       string    `json:"url,omitempty"`
	External  bool      `json:"external,omitempty"` // a server authzbench did not start
	LogLevel  string    `json:"log_level,omitempty"`
	PID       int       `json:"pid,omitempty"`
	// Connections is the size of the connection pool the target was given.
	Connections int `json:"connections,omitempty"`
	// TLS is how the connections were secured; nil in clear.
	TLS *TLS `json:"tls,omitempty"`
	// HTTP2: the requests went over HTTP/2 (h2 over TLS, h2c in clear), not HTTP/1.1.
	HTTP2 bool `json:"http2,omitempty"`
	// HostBuiltins are the built-in functions a WebAssembly target's policy called out of
	// Wasm, run by the host in Go (opa/wasm): the part of its work that was not Wasm.
	HostBuiltins []string `json:"host_builtins,omitempty"`
	// Replicas are the server processes authzbench started behind one address, connections
	// spread over them round robin (--replicas K); empty for a single server.
	Replicas []Replica `json:"replicas,omitempty"`
	// Written is what the run wrote into a server it did not start (a URL's OpenFGA stores,
	// SpiceDB schema and relationships), and whether it was removed at the end; nil when it
	// wrote nothing there.
	Written *Written `json:"written,omitempty"`
	// DecisionLogs is how the engine logged its decisions and where they went; nil when
	// decision logging was off.
	DecisionLogs *DecisionLogs `json:"decision_logs,omitempty"`
	// Datastore is the database the engine decided over, when one was chosen (--datastore):
	// which, how it was set up, and what loading the workload into it cost; nil for an engine's
	// default, or an engine that has none.
	Datastore *Datastore `json:"datastore,omitempty"`
	// Caches are the caches of an engine that has some (OpenFGA, SpiceDB), each on or off as the
	// run had it (the engine's default or a flag), and what the engine's own metrics counted
	// of its lookups and hits (caches.go); nil for an engine without caches.
	Caches []Cache `json:"caches,omitempty"`
	// Consistency is how fresh the checks asked the engine to be (OpenFGA's and SpiceDB's
	// consistency), and how stale an answer may be under the engine's promise; nil for an engine
	// that is asked none.
	Consistency *Consistency `json:"consistency,omitempty"`
	// Startup is what starting the server authzbench launched took, and its memory; nil for
	// a server it did not start, or replicas (each in Replicas' own process).
	Startup *Startup `json:"startup,omitempty"`
	// Bundle is the bundle the server was given by a bundle server inside authzbench (OPA's
	// bundle_server, optimize); nil when it read files.
	Bundle *Bundle `json:"bundle,omitempty"`
}

// Consistency is what a target's checks asked of the engine's freshness.
type Consistency struct {
	// Name is the consistency in the engine's words: "minimize_latency", "HIGHER_CONSISTENCY".
	Name string `json:"name"`
	// Default: none was asked for (--consistency); the target's default stood.
	Default bool `json:"default,omitempty"`
	// PromiseMS is how old an answer may be under it, by the engine's documentation (0: none may
	// be stale); Why says what that rests on.
	PromiseMS float64 `json:"promise_ms"`
	Why       string  `json:"why,omitempty"`
}

// Bundle is a policy bundle a server downloaded from authzbench and activated.
type Bundle struct {
	// Optimize is the optimization level it was built at (opa build's -O); 0 as written.
	Optimize int `json:"optimize,omitempty"`
	// Bytes is the tarball as served (gzipped); FilesBytes its files' bytes uncompressed.
	Bytes      int64 `json:"bytes"`
	FilesBytes int64 `json:"files_bytes"`
	// SizeLimitBytes is the server's limit on one file's bytes (OPA's size_limit_bytes).
	SizeLimitBytes int64 `json:"size_limit_bytes"`
	// Polling is how the server's bundle plugin learns of a new revision (a change of a run
	// whose world changes): long polling, with its timeout.
	Polling string `json:"polling,omitempty"`
}

// Startup is the start of a server authzbench launched: the time from its start to its first
// ready answer (loading its policy and data, or downloading and activating its bundles), and its
// memory as the kernel counts it (/proc/PID/status), when it was ready and when the run ended.
type Startup struct {
	ReadySeconds float64 `json:"ready_seconds"`
	// PeakMB is VmHWM when ready: the most resident memory the start took, its data's load
	// included, which sampling can miss. RSSMB is VmRSS then. Zero where /proc cannot say.
	PeakMB float64 `json:"peak_mb,omitempty"`
	RSSMB  float64 `json:"rss_mb,omitempty"`
	// EndPeakMB and EndRSSMB are VmHWM and VmRSS at the end of the run, before the server was
	// stopped: the steady memory under load, and whether the load raised the peak.
	EndPeakMB float64 `json:"end_peak_mb,omitempty"`
	EndRSSMB  float64 `json:"end_rss_mb,omitempty"`
}

// Datastore is the database an engine ran over, and the load of the workload into it.
type Datastore struct {
	// Engine: memory, sqlite or postgres.
	Engine string `json:"engine"`
	// Started: a PostgreSQL authzbench started for the run (initdb in a temporary directory),
	// else the running database URI names (its password left out).
	Started bool   `json:"started,omitempty"`
	URI     string `json:"uri,omitempty"`
	// ServerVersion is the database server's own version string.
	ServerVersion string `json:"server_version,omitempty"`
	// Settings are the server's settings that decide what was measured: fsync,
	// synchronous_commit, full_page_writes, max_connections.
	Settings map[string]string `json:"settings,omitempty"`
	// MaxConns and MinConns are the engine's connection pool to it (0: the engine's default,
	// named in Pool).
	MaxConns int `json:"max_conns,omitempty"`
	MinConns int `json:"min_conns,omitempty"`
	// Pool says the pool in the engine's words, its defaults included.
	Pool string `json:"pool,omitempty"`
	// Migrated is the engine's schema version after its own migrations ran.
	Migrated string `json:"migrated,omitempty"`
	// Tuples written before the clock, through the engine's bulk path (BulkPath), in
	// LoadSeconds: TuplesPerSecond.
	Tuples          int     `json:"tuples"`
	BulkPath        string  `json:"bulk_path,omitempty"`
	LoadSeconds     float64 `json:"load_seconds"`
	TuplesPerSecond float64 `json:"tuples_per_second,omitempty"`
	// SizeBytes is the database's size after the load (pg_database_size; the file's, for
	// SQLite).
	SizeBytes int64 `json:"size_bytes,omitempty"`
	// AnalyzeSeconds is how long PostgreSQL's ANALYZE of the database took after the load,
	// before the clock, so that the checks were planned with statistics of the tables the load
	// filled; absent where it did not run. AnalyzeError says why it failed (the run went on);
	// NotAnalyzed, that the user asked for none (--datastore-no-analyze).
	AnalyzeSeconds float64 `json:"analyze_seconds,omitempty"`
	AnalyzeError   string  `json:"analyze_error,omitempty"`
	NotAnalyzed    bool    `json:"not_analyzed,omitempty"`
}

// Written is what a run wrote into a running server the user gave it, and what became of it:
// removed at the end, or kept as asked (keep_written).
type Written struct {
	// What was written, in the server's words: "OpenFGA stores authzbench-0 (01K...)".
	What string `json:"what"`
	// Kept: left in the server at the end, as asked. Removed: taken out at the end, the server
	// left as it was found. Neither, with RemoveError, when removing failed.
	Kept        bool   `json:"kept,omitempty"`
	Removed     bool   `json:"removed,omitempty"`
	RemoveError string `json:"remove_error,omitempty"`
}

// TLS is the TLS a run measured: the mode, and which certificates, so two results can be told
// apart by what their handshakes did.
type TLS struct {
	// Mode: tls (the server's certificate checked), mtls (and the client's presented), or
	// mtls_authz (and an authorization policy of the server's admitting the client).
	Mode string `json:"mode"`
	// Generated: throwaway certificates authzbench made for the run (ECDSA P-256); else the
	// files the user gave, named below.
	Generated  bool   `json:"generated,omitempty"`
	CACert     string `json:"cacert,omitempty"`
	ServerCert string `json:"server_cert,omitempty"`
	ClientCert string `json:"client_cert,omitempty"`
	// Insecure: the server's certificate was not checked.
	Insecure bool `json:"insecure,omitempty"`
	// Admitted are the client identities the server's authorization policy admitted.
	Admitted []string `json:"admitted,omitempty"`
}

// Placement is where a run's engine ran, seen from the generator; it decides what the
// generator and the engine share.
type Placement string

const (
	// InProcess: the engine ran inside authzbench, sharing its Go scheduler and CPUs with the
	// generator.
	InProcess Placement = "in-process"
	// ProcessPerDecision: every decision started a process of its own (a CLI).
	ProcessPerDecision Placement = "process-per-decision"
	// LaunchedServer: a server authzbench started, pinned and stopped.
	LaunchedServer Placement = "launched-server"
	// External: a server someone else runs, which authzbench only sends requests to.
	External Placement = "external"
)

// Where is where the run's engine ran: its recorded placement, or for a file written before
// placements were recorded, in-process for a target named */inproc and "" (unknown) otherwise.
// Label names the run's target as a table shows it: the kind, its TLS mode when it spoke TLS,
// and h2 (over TLS) or h2c (in clear) when it spoke HTTP/2, with Nconns when its workers shared N
// HTTP/2 connections rather than one, and logs:MODE when it logged its decisions, so that one
// kind measured in several modes
// (experiments/tls.yaml, experiments/http2.yaml) reads as several rows. A replicated server
// reads as the kind and its replicas ("opa/server ×2"): one row per replica count in a replica
// sweep.
func (r *Run) Label() string {
	label := r.Target
	tls := r.SUT.TLS != nil && r.SUT.TLS.Mode != ""
	if tls {
		label += " " + r.SUT.TLS.Mode
	}
	if r.SUT.HTTP2 {
		if tls {
			label += " h2"
		} else {
			label += " h2c"
		}
		if r.SUT.Connections > 1 {
			label += " " + strconv.Itoa(r.SUT.Connections) + "conns"
		}
	}
	if k := len(r.SUT.Replicas); k > 1 {
		label += fmt.Sprintf(" ×%d", k)
	}
	if r.Operation != "" {
		label += " " + r.Operation
	}
	if d := r.SUT.DecisionLogs; d != nil {
		// One word: where the decisions were logged, and a log service that was not healthy.
		label += " logs:" + d.Mode
		if d.Service != "" && d.Service != "healthy" {
			label += "-" + d.Service
		}
	}
	return label
}

func (r *Run) Where() Placement {
	if r.SUT.Placement != "" {
		return r.SUT.Placement
	}
	if strings.HasSuffix(r.Target, "/inproc") {
		return InProcess
	}
	return ""
}

// Resources is what the server authzbench started used during a run's measured phases: its
// process tree's CPU and resident memory.
type Resources struct {
	CPUCoresMean float64 `json:"cpu_cores_mean"`
	CPUCoresMax  float64 `json:"cpu_cores_max"` // over one sampling interval
	RSSMaxMB     float64 `json:"rss_max_mb"`
	Samples      int     `json:"samples"`
}

// Affinity is a run's CPU lists as the kernel reported them (sched_getaffinity), "0,1".
type Affinity struct {
	Generator string `json:"generator,omitempty"`
	SUT       string `json:"sut,omitempty"` // the server authzbench started
}

// Harness is the authzbench process's own cost during a run: the generator's, plus the engine's
// for in-process targets. CPU per request lets one compare generators; the RSS figures show
// memory stays flat however many requests run.
type Harness struct {
	CPUSeconds      float64 `json:"cpu_s"`
	CPUPerRequestUS float64 `json:"cpu_per_request_us"`
	RSSStartMB      float64 `json:"rss_start_mb"`
	RSSEndMB        float64 `json:"rss_end_mb"`
	RSSPeakMB       float64 `json:"rss_peak_mb"` // process lifetime peak
}

// Skip is a workload and target pair the scenario left out: the workload has no version in the
// language the target's engine reads.
type Skip struct {
	Workload string `json:"workload"`
	Target   string `json:"target"`
	Reason   string `json:"reason"`
}

// HasSkip reports whether the pair is already noted as skipped.
func (d *Document) HasSkip(workload, target string) bool {
	for _, k := range d.Skipped {
		if k.Workload == workload && k.Target == target {
			return true
		}
	}
	return false
}

// WorkloadInfo says what was asked of the engine.
type WorkloadInfo struct {
	Description string `json:"description,omitempty"`
	// Handed says what the run's engine is handed ready-made that the Rego computes itself
	// (the ‡ rows); nil when both do the same work.
	Handed      *Handed `json:"handed,omitempty"`
	Query       string  `json:"query"`
	Inputs      int     `json:"inputs"`
	ExpectAllow int     `json:"expect_allow"`
	ExpectDeny  int     `json:"expect_deny"`
	Unverified  int     `json:"unverified"`
	// UndefinedAs is the decision an undefined result was read as (--undefined-as), for a
	// policy without a default; empty when undefined counted as an error.
	UndefinedAs string `json:"undefined_as,omitempty"`
	// RegoVersion is "v0" when the Rego was read as OPA v0 syntax (--v0-compatible).
	RegoVersion string `json:"rego_version,omitempty"`
	// NotMeasured counts, by kind, the queries of the user's files that the run did not
	// measure (an OpenFGA store file's list_objects and list_users tests): counted, not dropped.
	NotMeasured map[string]int `json:"not_measured,omitempty"`
}

// Handed is what one engine's version of a workload is handed ready-made because the engine
// cannot compute it: a JWT's verdict for Cedar, a request's entities stored ahead for OpenFGA.
type Handed struct {
	// Engine is the engine's name ("cedar"), Language the language reports name ("Cedar").
	Engine   string `json:"engine"`
	Language string `json:"language"`
	What     string `json:"what"`
}

// String is the note as a setting reads it: "in Cedar: ...".
func (h *Handed) String() string {
	if h == nil {
		return ""
	}
	return "in " + h.Language + ": " + h.What
}

// UnmarshalJSON reads the workload's description, and the ‡ note of the files written before
// it named its engine: their "cedar_differences" was only ever written for Cedar's runs.
func (w *WorkloadInfo) UnmarshalJSON(b []byte) error {
	type plain WorkloadInfo
	var v struct {
		plain
		CedarDifferences string `json:"cedar_differences"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*w = WorkloadInfo(v.plain)
	if w.Handed == nil && v.CedarDifferences != "" {
		w.Handed = &Handed{Engine: "cedar", Language: "Cedar", What: v.CedarDifferences}
	}
	return nil
}

// LoadModel is how a run's requests were sent: by a fixed number of workers, each sending its
// next request when the last one was answered (closed loop), or at an arrival rate whatever
// happened to earlier ones (open loop).
type LoadModel string

const (
	ClosedLoop LoadModel = "closed"
	OpenLoop   LoadModel = "open"
)

func (m LoadModel) String() string { return string(m) }

// UnmarshalText reads the model as the document spells it, and refuses any other word: a
// report must not read an unknown model as closed loop.
func (m *LoadModel) UnmarshalText(b []byte) error {
	switch v := LoadModel(b); v {
	case ClosedLoop, OpenLoop, "":
		*m = v
		return nil
	}
	return fmt.Errorf("load model %q: want %s or %s", b, ClosedLoop, OpenLoop)
}

// Load is the load model of a run.
type Load struct {
	Model       LoadModel `json:"model"`
	Workers     int       `json:"workers"`
	Rate        float64   `json:"rate"`                  // open loop: intended requests per second
	Connections int       `json:"connections,omitempty"` // open loop: bound on requests in flight
	DurationS   float64   `json:"duration_s"`
	WarmupS     float64   `json:"warmup_s"`
	Requests    int64     `json:"requests,omitempty"` // request budget, when the run was bounded by count
	TimeoutS    float64   `json:"timeout_s,omitempty"`
	// GeneratorProcs is the GOMAXPROCS authzbench drove this run with.
	GeneratorProcs int `json:"generator_procs,omitempty"`
	// Stages is an open-loop schedule of stages, as --stages writes it ("30s:0-2000,1m0s:2000"),
	// in place of a constant Rate (0 then); empty for a constant rate.
	Stages string `json:"stages,omitempty"`
	// Replay is a decision log's schedule followed in place of a constant Rate (0 then): each
	// event at its recorded offset from the first, divided by the speed.
	Replay *LoadReplay `json:"replay,omitempty"`
	// Custom is any other schedule, by its kind's name and in its own settings (a schedule kind
	// added after the rate, the stages and the replay records itself here, from its own file):
	// nil for those three and the closed loop.
	Custom *CustomSchedule `json:"schedule,omitempty"`
	// CoalesceUS is, in open loop, the window within which sends due together went out together
	// (--coalesce), µs; 0: every send at its own time.
	CoalesceUS float64 `json:"coalesce_us,omitempty"`
	// ShardWorkers is, in a closed-loop shard (--shard i/N), the workers this shard ran of
	// Workers, the scenario's whole.
	ShardWorkers int `json:"shard_workers,omitempty"`
	// InputSkew is how the inputs were drawn (--input-skew: uniform, zipf:S or hot:K/H), from a
	// fixed seed; empty for each input in turn, the default.
	InputSkew string `json:"input_skew,omitempty"`
}

// Open reports whether the load was open loop: sent on a schedule, not by workers.
func (l Load) Open() bool { return l.Model == OpenLoop }

// Decisions are a run's ok responses apart by the decision they carried.
type Decisions struct {
	Allow DecisionLatency `json:"allow"`
	Deny  DecisionLatency `json:"deny"`
}

// DecisionLatency is the responses of one decision: how many, and their latency (nil for none).
type DecisionLatency struct {
	Count     uint64       `json:"count"`
	LatencyUS *Percentiles `json:"latency_us,omitempty"`
}

// DecisionsOf is the split of the allow and deny histograms (ns); nil when both are empty.
func DecisionsOf(allow, deny *hdrhistogram.Histogram) *Decisions {
	if total(allow) == 0 && total(deny) == 0 {
		return nil
	}
	return &Decisions{Allow: DecisionLatency{Count: uint64(total(allow)), LatencyUS: PartOf(allow)},
		Deny: DecisionLatency{Count: uint64(total(deny)), LatencyUS: PartOf(deny)}}
}

// Summary merges all repetitions of a run.
type Summary struct {
	Requests      uint64 `json:"requests"`
	OK            uint64 `json:"ok"`
	WrongDecision uint64 `json:"wrong_decision"`
	// Errors counts every response that was not ok, wrong decisions included.
	Errors       uint64            `json:"errors"`
	ErrorClasses map[string]uint64 `json:"error_classes"`
	UnverifiedOK uint64            `json:"unverified_ok,omitempty"`
	// ThroughputRPS is ok responses per second: mean, sd and 95 % CI across repetitions.
	ThroughputRPS Spread `json:"throughput_rps"`
	// ShortWindow is set when some repetition's window held too few decisions for its req/s to
	// be a rate (FewForRate): one in 50 ms reads as 20 req/s whatever the rate asked.
	ShortWindow *ShortWindow `json:"short_window,omitempty"`
	// LatencyUS is over ok responses only, from the histogram of all repetitions merged; in an
	// open-loop run with unsent sends, over the ok responses and the unsent sends at their lower
	// bound (open.latency_includes_unsent), the ok-only figures being open.ok_latency_us.
	LatencyUS Percentiles `json:"latency_us"`
	// LatencyBeyond counts the ok responses slower than each of LatencyUS's percentiles: one
	// resting on few (FewBeyond) is close to the slowest few, not a stable figure.
	LatencyBeyond *Beyond `json:"latency_beyond,omitempty"`
	// ErrorLatencyUS is over the other responses, kept apart.
	ErrorLatencyUS *Percentiles `json:"error_latency_us,omitempty"`
	// Decisions are the ok responses apart by their decision, allow and deny: their counts add
	// up to ok, and each has its own latency. Nil where no response carried a decision (nop),
	// and in files written before they were kept.
	Decisions *Decisions `json:"decisions,omitempty"`
	// ErrorMessages is what went wrong with the first response of each error class that said,
	// by class (transport: the OS's words; http_503: the start of the body).
	ErrorMessages map[string]string `json:"error_messages,omitempty"`
	// LatencyCeilingS is the longest latency the histograms hold; Clamped counts the responses
	// (ok or not) that took longer and were recorded at it.
	LatencyCeilingS float64 `json:"latency_ceiling_s,omitempty"`
	Clamped         uint64  `json:"clamped,omitempty"`
	// Open loop only.
	Open *OpenSummary `json:"open,omitempty"`
	// Server is the server's own account of the ok responses that reported it.
	Server *ServerTimes `json:"server,omitempty"`
	// Attribution says where the time of those responses went, by band of client latency.
	Attribution *Attribution `json:"attribution,omitempty"`
	// Connections says how many measured requests opened a connection, and what that cost.
	Connections *Connections `json:"connections,omitempty"`
	// Mismatches names the inputs that got a wrong decision, lowest input number first, at most
	// MismatchesKept: WrongDecision says how many responses were wrong in all.
	Mismatches []Mismatch `json:"mismatches,omitempty"`
}

// MismatchesKept bounds the wrong decisions a summary names (as metrics.MismatchesKept bounds a
// recorder's): enough to see a pattern, few enough for a result document.
const MismatchesKept = 20

// Mismatch is an input that got a wrong decision.
type Mismatch struct {
	Input int `json:"input"` // 1-based, among the workload's inputs
	// Source is the file and line the input came from, for a workload from the user's files.
	Source   string `json:"source,omitempty"`
	Expected string `json:"expected"` // allow or deny
	Got      string `json:"got"`
}

// Where names the input as a user finds it: its file and line, or its number.
func (m Mismatch) Where() string {
	if m.Source != "" {
		return m.Source
	}
	return fmt.Sprintf("input %d", m.Input)
}

// Connections are the connections opened by measured requests: with reuse, a few at the start
// at most (one per worker); with --no-reuse, one per request. The connect time (TCP, and TLS)
// is part of those requests' latency, and shown apart here.
type Connections struct {
	Opened    int64       `json:"opened"`
	Expected  int64       `json:"expected"` // at most, with reuse; exactly, without
	Reused    bool        `json:"reused"`
	ConnectUS Percentiles `json:"connect_us"`
	// TLSUS and ExchangeUS are the other parts of the service time of the requests that opened
	// a connection: the TLS handshake (nil in clear) and the request and its answer after it;
	// with ConnectUS, each request's time split in three (without reuse, every request's).
	TLSUS      *Percentiles `json:"tls_us,omitempty"`
	ExchangeUS *Percentiles `json:"exchange_us,omitempty"`
	// Reconnects: requests that found their kept-alive connection closed by the server (a
	// request limit, an idle timeout) and went out again on a new one; not errors.
	Reconnects uint64 `json:"reconnects,omitempty"`
}

// ServerTimes are the server's own timers (OPA: timer_rego_query_eval_ns and
// timer_server_handler_ns), beside the latency the client measured.
type ServerTimes struct {
	Sampled   int64       `json:"sampled"`
	EvalUS    Percentiles `json:"eval_us"`
	HandlerUS Percentiles `json:"handler_us"`
}

// OpenSummary says how an open-loop run kept its schedule, and what latency would have looked
// like measured from the actual send instead of the intended one.
//
// Every send due in the measured window is either sent or unsent: intended_sends = sent +
// unsent, and the summary's requests are the sends due. An unsent send came due but found every
// connection busy until the run gave up on it (the run's timeout after the window); it is
// counted as error class unsent and charged, in latency_us, its lower bound: from its intended
// time to when the run gave up on it.
type OpenSummary struct {
	AchievedRPS Spread `json:"achieved_rps"`
	Intended    int64  `json:"intended_sends"`
	Sent        int64  `json:"sent"`
	Unsent      int64  `json:"unsent"`
	LateSends   int64  `json:"late_sends"` // for any reason, a busy pool included
	// GeneratorLate counts the late sends the generator itself was late for while a connection
	// was free (a late wake-up, the generator descheduled: short of CPU). The other late sends
	// waited because every connection was busy.
	GeneratorLate int64   `json:"generator_late_sends"`
	LateAfterUS   float64 `json:"late_after_us"`
	// RateMissed: some due send never went out, or the generator itself was late for more than
	// 1 % of them, in some repetition (the generator's rule, load.Schedule.Missed). Latency is
	// still measured from the intended times, but the load the server saw was not the load
	// asked for.
	RateMissed bool `json:"rate_missed"`
	// Sender is the open-loop engine that sent the repetitions ("event_loop" or "goroutines"),
	// "mixed" when they differ (shards merged from different builds); empty when none said.
	Sender string `json:"sender,omitempty"`
	// LatencyIncludesUnsent says the summary's latency_us counts the unsent sends at their
	// lower bound; OKLatencyUS is over the ok responses alone, from their intended times.
	LatencyIncludesUnsent bool        `json:"latency_includes_unsent"`
	OKLatencyUS           Percentiles `json:"ok_latency_us"`
	LatenessUS            Percentiles `json:"lateness_us"`
	UncorrectedLatencyUS  Percentiles `json:"uncorrected_latency_us"`
}

// Repetition is one repetition of a run. Its histograms (HdrHistogram's compressed V2 form,
// nanoseconds) are every distribution a view of the run shows, so that merged they rebuild the
// run's summary exactly, and two documents' runs merge (Merge).
type Repetition struct {
	// ID is the repetition's identity: 128 random bits in hex, drawn when it was measured and
	// kept as it is by every merge (merge, ab), so that one measurement counts once wherever it
	// goes: a merge or a comparison that would hold an ID twice is refused (Distinct), and a
	// store of results can take the ID as its key, adding a repetition it holds as a no-op. A
	// repetition added up from shards' (MergeShards) has an ID derived from theirs, listed in
	// Parts: the same shards merged again give the same ID. Empty in files written before IDs
	// were kept; those repetitions are told apart by their start time and histogram.
	ID    string   `json:"id,omitempty"`
	Parts []string `json:"parts,omitempty"`

	Requests      uint64            `json:"requests"`
	OK            uint64            `json:"ok"`
	Errors        uint64            `json:"errors"`
	ErrorClasses  map[string]uint64 `json:"error_classes,omitempty"`
	ElapsedS      float64           `json:"elapsed_s"`
	ThroughputRPS float64           `json:"throughput_rps"`
	LatencyUS     Percentiles       `json:"latency_us"`
	HDR           string            `json:"hdr"`                 // ok latencies, ns, V2 compressed
	ErrorHDR      string            `json:"error_hdr,omitempty"` // other responses, ns
	ErrorMessages map[string]string `json:"error_messages,omitempty"`
	Clamped       uint64            `json:"clamped,omitempty"` // beyond the histograms' ceiling
	Partial       bool              `json:"partial,omitempty"`
	// Turn is the repetition's place among all the scenario's repetitions (1, 2, …), and
	// Started when it began: interleaved targets alternate turns.
	Turn    int       `json:"turn,omitempty"`
	Started time.Time `json:"started,omitzero"`
	// MeasuredFrom is when the measured phase began (after the warm-up); it lasted ElapsedS.
	// Shards merged take their throughput over the window their measured phases spanned.
	MeasuredFrom time.Time `json:"measured_from,omitzero"`
	// Open loop only.
	AchievedRPS float64 `json:"achieved_rps,omitempty"`
	Intended    int64   `json:"intended_sends,omitempty"`
	Unsent      int64   `json:"unsent,omitempty"`
	LateSends   int64   `json:"late_sends,omitempty"`
	GenLate     int64   `json:"generator_late_sends,omitempty"`
	RateMissed  bool    `json:"rate_missed,omitempty"`
	// OpenSender is the open-loop engine that sent ("event_loop" or "goroutines"; empty in
	// results written before there were two).
	OpenSender  string `json:"open_sender,omitempty"`
	LateHDR     string `json:"late_hdr,omitempty"`        // lateness of every send, ns
	Uncorrected string `json:"uncorrected_hdr,omitempty"` // ok latencies from the actual send, ns
	// UnsentHDR holds the unsent sends' lower bounds, ns: with hdr, the latency of every due
	// send, which latency_us is over when there are unsent sends.
	UnsentHDR string `json:"unsent_hdr,omitempty"`
	// ConnectHDR holds the connect times of the requests that opened a connection (with reuse,
	// a few at the start), ns.
	ConnectHDR string `json:"connect_hdr,omitempty"`
	// TLSHDR and ExchangeHDR hold the other parts of those requests' service time: their TLS
	// handshakes, and what followed the connection's opening (the request and its answer), ns.
	TLSHDR      string `json:"tls_hdr,omitempty"`
	ExchangeHDR string `json:"exchange_hdr,omitempty"`
	// ServerEvalHDR and ServerHandlerHDR hold the server's own timers, for the ok responses that
	// reported them, ns.
	ServerEvalHDR    string `json:"server_eval_hdr,omitempty"`
	ServerHandlerHDR string `json:"server_handler_hdr,omitempty"`
	// AllowHDR and DenyHDR hold the ok responses' latencies apart by the decision they carried,
	// ns: together, hdr's. A denied check walks every branch where an allowed one may stop at
	// the first, so their latencies differ, and a mix of both hides it.
	AllowHDR string `json:"allow_hdr,omitempty"`
	DenyHDR  string `json:"deny_hdr,omitempty"`
	// ServerSample is a bounded sample of those responses' (client, handler, evaluation)
	// times, EncodeSample's text: what summary.attribution is computed from.
	ServerSample string `json:"server_sample,omitempty"`
	// Intervals is the measured window interval by interval, for a run that asked for it (a
	// capacity ramp): how latency followed a changing rate. Merges keep it with its repetition.
	Intervals []Interval `json:"intervals,omitempty"`
}

// SenderOf is the sender of repetitions sent by senders (OpenSummary.Sender): theirs when
// they agree, "mixed" when they do not; an empty one (not recorded) is passed over.
func SenderOf(senders ...string) string {
	of := ""
	for _, s := range senders {
		switch {
		case s == "" || s == of:
		case of == "":
			of = s
		default:
			return "mixed"
		}
	}
	return of
}

// EncodeHistogram returns the histogram in HdrHistogram's compressed V2 form (base64 text), which
// other HdrHistogram implementations read too.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram reads a histogram written by EncodeHistogram.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return nil, fmt.Errorf("decode histogram: not base64: %w", err)
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

// Write stores the document at path whole or not at all (outputs.Write: a temporary file
// beside it, synced, renamed into place), or into the path when it is a device or a FIFO,
// replacing a file already there.
func Write(path string, doc *Document) error { return write(path, true, doc) }

// WriteNew is Write for a path where no file may be replaced: a file there, even one that came
// while the run measured, is left as it is, and WriteNew fails with fs.ErrExist.
func WriteNew(path string, doc *Document) error { return write(path, false, doc) }

func write(path string, replace bool, doc *Document) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	b = append(b, '\n')
	if err := outputs.Write(path, replace, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return fmt.Errorf("write result %s: %w", path, err)
	}
	return nil
}

// Read loads a result document and checks its schema.
func Read(path string) (*Document, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read result %w", userwords.Unreadable(path, err))
	}
	var doc Document
	if err := json.Unmarshal(b, &doc); err != nil {
		err = userwords.JSON(b, err, "a result document, a JSON object")
		if je := (*userwords.JSONError)(nil); errors.As(err, &je) && je.Line > 0 {
			return nil, fmt.Errorf("read result %s:%d: %w", path, je.Line, err)
		}
		return nil, fmt.Errorf("read result %s: %w", path, err)
	}
	if doc.Schema != Schema {
		return nil, fmt.Errorf("read result %s: schema %q, want %q", path, doc.Schema, Schema)
	}
	return &doc, nil
}
