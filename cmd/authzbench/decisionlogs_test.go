package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Decision logging OPA would refuse, or a log service that cannot listen, is bad input: exit
// 2 naming the flag and the cause, before any load (no result is written).
func TestDecisionLogsBadInput(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"OPA refuses a byte limit with a rate", []string{"--target", "opa/server", "--decision-logs", "service", "--decision-log-reporting", "buffer_size_limit_bytes=1000", "--decision-log-reporting", "max_decisions_per_second=10"},
			[]string{"--decision-logs settings refused by OPA", "specify either 'buffer_size_limit_bytes' or 'max_decisions_per_second'"}},
		{"OPA refuses a buffer type", []string{"--target", "opa/sdk", "--decision-logs", "service", "--decision-log-reporting", "buffer_type=ring"},
			[]string{"--decision-logs settings refused by OPA", `invalid buffer type "ring"`}},
		{"OPA refuses a min delay without a max", []string{"--target", "opa/extauthz", "--workload", "envoy", "--decision-logs", "console", "--decision-log-reporting", "min_delay_seconds=5"},
			[]string{"--decision-logs settings refused by OPA", "missing 'max_delay_seconds'"}},
		{"the service cannot listen", []string{"--target", "opa/sdk", "--decision-logs", "service", "--decision-log-service-addr", taken.Addr().String()},
			[]string{"--decision-log-service-addr", "cannot listen on " + taken.Addr().String(), "address already in use"}},
		{"the service is not on loopback", []string{"--target", "opa/server", "--decision-logs", "service", "--decision-log-service-addr", "0.0.0.0:0"},
			[]string{"--decision-log-service-addr", "not a loopback address"}},
		{"a slow service without its latency", []string{"--target", "opa/server", "--decision-logs", "service", "--decision-log-service", "slow"},
			[]string{"--decision-log-latency is needed by a slow log service"}},
		{"a setting without decision logs", []string{"--target", "opa/server", "--decision-log-mask", "/system/log/mask"},
			[]string{"--decision-log-mask needs --decision-logs console or service"}},
		{"a reporting key OPA does not have", []string{"--target", "opa/server", "--decision-logs", "service", "--decision-log-reporting", "buffer_size=10"},
			[]string{"--decision-log-reporting", "OPA's decision_logs.reporting has no buffer_size"}},
		{"decision logs of a server authzbench does not start", []string{"--target", "opa/server", "--url", "http://127.0.0.1:1", "--decision-logs", "service"},
			[]string{"--decision-logs configures the OPA linked into authzbench, started alone: not with --url"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "result.json")
			args := tc.args
			if !strings.Contains(strings.Join(args, " "), "--workload") {
				args = append(args, "--workload", "rbac")
			}
			var stdout, stderr bytes.Buffer
			code := runMain(append(args, "--duration", "1s", "-o", out), &stdout, &stderr, nil)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q: want it to say %q", stderr.String(), w)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a result was written (%v): the run went ahead", err)
			}
		})
	}
}
