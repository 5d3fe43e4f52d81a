package main

// helpGroups are the flag groups of each command's help, by the command's path below the root
// ("history gate"), in the order shown. Every flag a command declares is in exactly one of its
// groups (help_test.go holds each command to it, so a new flag without a group fails); a group
// shared by commands lists the flags of them all, and each command's help shows those it has.
var helpGroups = map[string]func() []flagGroup{
	"run": func() []flagGroup {
		return []flagGroup{
			{title: "What to measure", intro: "targets × workloads, or a scenario file; nothing: the quickstart",
				flags: []string{"target", "workload", "file"}, more: []string{"floor", "operation"}},
			userFilesGroup(),
			{title: "Load", intro: "closed loop by default (--workers); open loop, sends at fixed times, with --rate, --rates, " +
				"--load-points or --stages",
				strip: []string{"open loop: ", "open loop, "},
				flags: []string{"workers", "rate", "duration", "repeat"},
				more: []string{"rates", "load-points", "stages", "connections", "warmup", "requests", "order", "timeout", "coalesce",
					"input-skew", "changes", "change-rate", "stale-allowed"}},
			serversGroup(),
			tlsGroup(),
			httpTargetGroup(),
			{title: "Outputs", intro: "a result file every report is rebuilt from, and the table on stdout",
				flags: []string{"out", "format", "html"},
				more:  []string{"wide", "prometheus", "history", "testbed", "force", "no-progress", "allow-errors"}},
			{title: "Decision-log replay", intro: "its events asked of your --policy, judged by their logged decisions",
				strip: []string{"with --decision-log: "},
				flags: []string{"decision-log"}, more: []string{"speed", "decision-field", "max-gap", "expect-changes"}},
			{title: "Generator, CPUs and scale-out", intro: "where the generator and servers run; one scenario split over machines",
				more: []string{"pin", "pin-sut", "pin-load", "generator-procs", "cpuprofile", "shard", "shard-base", "start-at"}},
		}
	},
	"capacity": func() []flagGroup {
		return []flagGroup{
			{title: "What to search", intro: "each workload on each target, one search each, one table",
				flags: []string{"target", "workload", "file"}},
			userFilesGroup(),
			{title: "The search", intro: "open-loop rates doubling from --start, then bisected, each probe judged against the SLO",
				flags: []string{"slo", "start", "max", "step"}, more: []string{"warmup", "connections", "max-steps", "resolution"}},
			{title: "Ramp", intro: "one linear ramp instead of the probes: quicker, an estimate biased high",
				flags: []string{"ramp"}, more: []string{"ramp-interval", "no-confirm"}},
			{title: "Replicas", intro: "how many replicas hold the rate you need, from a replica sweep's fit",
				flags: []string{"usl-from", "need"}, more: []string{"max-replicas"}},
			serversGroup(),
			tlsGroup(),
			httpTargetGroup(),
			{title: "Outputs", flags: []string{"out"}, more: []string{"force", "no-progress"}},
		}
	},
	"calibrate": func() []flagGroup {
		return []flagGroup{
			{title: "Load", intro: "closed loop, then open loop, against a server that answers at once",
				flags: []string{"workers", "rate", "connections", "duration"}},
			{title: "What to drive", flags: []string{"grpc", "wrk"}},
			{title: "Serving another generator", intro: "--serve drives nothing; --pacing-rate or --pacing-schedule judge the arrivals",
				flags: []string{"serve", "serve-for", "pacing-rate", "pacing-schedule", "pacing-skip", "pacing-out"},
				more:  []string{"pacing-skip-requests", "pacing-window", "pacing-speed", "pacing-max-gap", "pacing-cap"}},
			{title: "Outputs", flags: []string{"out", "force"}},
		}
	},
	"compare": func() []flagGroup {
		return []flagGroup{
			{title: "Matching", intro: "runs are matched by workload, target and load; on purpose, across",
				flags: []string{"any-target", "any-workload"}},
			gateGroup(),
			{title: "Outputs", flags: []string{"format"}},
		}
	},
	"ab": func() []flagGroup {
		return []flagGroup{
			{title: "The two sides", intro: "A and B differ in one thing; everything after -- is given to both sides' runs",
				flags: []string{"policy-a", "policy-b", "opa-bin-a", "opa-bin-b"},
				more:  []string{"workload-a", "workload-b", "target-a", "target-b", "file-a", "file-b"}},
			{title: "Turns", flags: []string{"repeat"}},
			gateGroup(),
			{title: "Outputs", flags: []string{"out-a", "out-b", "format", "force"}},
		}
	},
	"merge": func() []flagGroup { return []flagGroup{{title: "Outputs", flags: []string{"out", "format", "force"}}} },
	"report": func() []flagGroup {
		return []flagGroup{{title: "Outputs", flags: []string{"format", "wide", "prometheus", "force"}}}
	},
	"history add": func() []flagGroup {
		return []flagGroup{{title: "History", flags: []string{"history", "branch", "testbed"}}}
	},
	"history changes": func() []flagGroup {
		return []flagGroup{
			{title: "Which series", flags: []string{"history", "series", "branch"}},
			{title: "The change search", flags: []string{"min-effect", "min-commits", "alpha"}, more: []string{"permutations", "seed"}},
			{title: "Outputs", flags: []string{"format"}},
		}
	},
	"history gate": func() []flagGroup {
		return []flagGroup{
			{title: "The base", intro: "the last commits of the result's own series in the history",
				flags: []string{"history", "branch", "window", "testbed"}},
			gateGroup(),
			{title: "Outputs", flags: []string{"format"}},
		}
	},
	"history series": func() []flagGroup {
		return []flagGroup{{title: "History", flags: []string{"history", "format"}}}
	},
	"serve": func() []flagGroup {
		return []flagGroup{
			{title: "What to show", flags: []string{"history"}},
			{title: "Where", flags: []string{"host", "port", "allow-remote", "timeout"}},
		}
	},
	"workloads export": func() []flagGroup { return []flagGroup{{title: "Outputs", flags: []string{"force"}}} },
	"workloads verify": func() []flagGroup {
		return []flagGroup{
			{title: "What to verify", intro: "the named built-in workloads (all by default), or your own files, through every engine and mode",
				flags: []string{"target", "first", "parallel"}},
			userFilesGroup(),
		}
	},
	"profile": func() []flagGroup {
		return []flagGroup{
			{title: "What to profile", intro: "a built-in workload, or your own Rego",
				flags: []string{"workload", "rounds", "top", "format"}},
			userFilesGroup(),
		}
	},
}

// userFilesGroup are the flags of the user's own files (addUserFileFlags).
func userFilesGroup() flagGroup {
	return flagGroup{title: "Your own files", intro: "each engine's in its own forms (run --help-all says them)",
		strip: []string{"your "},
		flags: []string{"policy", "data", "inputs", "cedar-policies", "cedar-requests"},
		more:  []string{"query", "entities", "schema", "template-links", "name", "v0-compatible", "undefined-as"}}
}

// serversGroup are the target options of the servers a target starts or measures.
func serversGroup() flagGroup {
	return flagGroup{title: "Servers", intro: "those authzbench starts, or the running one --url names",
		flags: []string{"url", "opa-bin"}, fold: true,
		more: []string{"replicas", "port", "sut-arg", "ready-timeout", "log-level", "server-metrics", "no-reuse", "grpc-connections",
			"openfga-bin", "openfga-api", "spicedb-bin", "spicedb-key", "spicedb-overwrite", "keep-written",
			"decision-logs", "decision-log-reporting", "decision-log-mask", "decision-log-service", "decision-log-latency",
			"decision-log-service-addr", "decision-log-flush-timeout",
			"bundle-server", "bundle-size-limit", "optimize", "provenance", "bundle-changes",
			"datastore", "datastore-uri", "datastore-overwrite", "datastore-nondurable", "datastore-no-analyze", "datastore-max-conns", "datastore-min-conns",
			"consistency", "openfga-check-query-cache", "openfga-check-query-cache-ttl", "openfga-check-iterator-cache", "openfga-check-iterator-cache-ttl",
			"openfga-cache-controller", "openfga-cache-controller-ttl", "spicedb-dispatch-cache"}}
}

// tlsGroup are the target options of TLS and HTTP/2; each names the targets that take it.
func tlsGroup() flagGroup {
	return flagGroup{title: "TLS and HTTP/2", intro: "between the generator and the servers, for the targets each flag names",
		more: []string{"tls", "http2", "mtls", "mtls-authz", "mtls-admit", "server-cert", "server-key", "cacert", "cert", "key", "insecure", "http2-connections"}}
}

// httpTargetGroup are the http target's options.
func httpTargetGroup() flagGroup {
	return flagGroup{title: "The http target", intro: "--target http --url ENDPOINT: any JSON authorization endpoint",
		strip: []string{"http target: "},
		more:  []string{"body", "decision-path", "header", "method", "decision-status", "version-path"}}
}

// gateGroup are the flags of a regression gate (compare, ab, history gate).
func gateGroup() flagGroup {
	return flagGroup{title: "Gate", intro: "each change tested across repetitions (Mann-Whitney U)",
		flags: []string{"fail-on", "alpha"}}
}
