package scenario

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/kinds"
)

// A target's `options:` are its kind's own settings, decoded strictly: a key the kind does not
// take, a value of the wrong type or settings that cannot work are errors naming the file, the
// line and the target.
func TestTargetOptionsAreDecodedStrictly(t *testing.T) {
	const head = "workloads: [rbac]\ntargets:\n"
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown key", head + "  - target: opa/server\n    options:\n      port: 8181\n      prot: 8182\n",
			`s.yaml:6: target opa/server: unknown option "prot"; known: bundle_changes, bundle_server, bundle_size_limit, cacert, cert, decision_log_flush_timeout, decision_log_latency, decision_log_mask, decision_log_reporting, decision_log_service, decision_log_service_addr, decision_logs, http2, http2_connections, insecure, key, mtls, mtls_admit, mtls_authz, opa_bin, optimize, port, provenance, ready_timeout, replicas, server_cert, server_key, sut_args, tls, url`},
		{"a key of another kind", head + "  - target: cedar/server\n    options: {opa_bin: /usr/bin/opa}\n",
			`s.yaml:4: target cedar/server: unknown option "opa_bin"; known: cacert, cert, http2, http2_connections, insecure, key, mtls, mtls_admit, mtls_authz, port, ready_timeout, replicas, server_cert, server_key, sut_args, tls, url`},
		{"a kind without options", head + "  - target: opa/inproc\n    options:\n      url: http://127.0.0.1:8181\n",
			`s.yaml:5: target opa/inproc: unknown option "url"; this target takes no options`},
		{"wrong type", head + "  - target: opa/server\n    options:\n      port: eighty\n",
			"s.yaml:5: target opa/server: options: key `port`: want a whole number, got \"eighty\""},
		{"not a mapping", head + "  - target: opa/server\n    options: [url]\n",
			"s.yaml:4: target opa/server: options: want a mapping of known: bundle_changes, bundle_server, bundle_size_limit, cacert, cert, decision_log_flush_timeout, decision_log_latency, decision_log_mask, decision_log_reporting, decision_log_service, decision_log_service_addr, decision_logs, http2, http2_connections, insecure, key, mtls, mtls_admit, mtls_authz, opa_bin, optimize, port, provenance, ready_timeout, replicas, server_cert, server_key, sut_args, tls, url"},
		{"settings that cannot work", head + "  - target: opa/server\n    options: {port: 70000}\n",
			"s.yaml:4: target opa/server: options: port 70000: not a TCP port; want 1 to 65535, or none for a free one"},
		{"a bad decision rule", head + "  - target: http\n    options: {url: 'http://127.0.0.1:8080/authz', decision_status: 200=yes}\n",
			"s.yaml:4: target http: options: decision_status \"200=yes\": want STATUS=allow|deny pairs, such as 200=allow,403=deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("s.yaml", []byte(tc.yaml), "")
			if err == nil {
				t.Fatalf("accepted: %+v", s)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}

// Options set the target's settings, each target its own; flags set over them only the keys
// their kinds take.
func TestTargetOptionsSetTheSettings(t *testing.T) {
	yaml := "workloads: [rbac]\ntargets:\n" +
		"  - target: opa/server\n    options: {port: 8181, sut_args: [--h2c]}\n" +
		"  - target: http\n    options:\n      url: http://127.0.0.1:8080/v1/authorize\n      decision_path: /allow\n" +
		"  - opa/inproc\n"
	s, err := Parse("s.yaml", []byte(yaml), "")
	if err != nil {
		t.Fatal(err)
	}
	served, ok := s.Targets[0].Config.(kinds.Served)
	if !ok {
		t.Fatalf("opa/server settings %#v are no served kind's", s.Targets[0].Config)
	}
	opa := served.Server()
	if opa.Port != 8181 || len(opa.Args) != 1 || opa.Args[0] != "--h2c" || s.Targets[0].Placement() != kinds.LaunchedServer {
		t.Errorf("opa/server settings %#v, placement %s", s.Targets[0].Config, s.Targets[0].Placement())
	}
	h, ok := s.Targets[1].Config.(*kinds.HTTPConfig)
	if !ok || h.URL != "http://127.0.0.1:8080/v1/authorize" || h.DecisionPath != "/allow" || s.Targets[1].Placement() != kinds.External {
		t.Errorf("http settings %#v", s.Targets[1].Config)
	}
	if s.Targets[2].Config != nil || s.Targets[2].Placement() != kinds.InProcess {
		t.Errorf("opa/inproc without options: settings %#v, placement %s", s.Targets[2].Config, s.Targets[2].Placement())
	}
	if err := s.SetOptions(map[string]any{"sut_args": []string{"--addr-reuse"}, "method": "PUT"}); err != nil {
		t.Fatal(err)
	}
	if opa.Port != 8181 || opa.Args[0] != "--addr-reuse" || h.Method != "PUT" {
		t.Errorf("after flags: opa/server %+v, http %+v", opa, h)
	}
	if _, ok := s.Targets[2].Settings().(*kinds.NoConfig); !ok {
		t.Errorf("opa/inproc took settings %#v", s.Targets[2].Settings())
	}
}

// A served target given a url measures a running server with its own policy: a workload of
// requests alone is enough for it, from a scenario file as from --url.
func TestTargetWithURLNeedsOnlyRequests(t *testing.T) {
	yaml := "workloads:\n  - name: mine\n    inputs: inputs.jsonl\n    query: data.x.allow\n" +
		"targets:\n  - target: opa/server\n    options: {url: 'http://127.0.0.1:8181'}\n"
	s, err := Parse("s.yaml", []byte(yaml), filepath.Join("testdata", "user"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Targets[0].Placement() != kinds.External || len(s.Skips) != 0 {
		t.Errorf("placement %s, skips %+v", s.Targets[0].Placement(), s.Skips)
	}
	_, err = Parse("s.yaml", []byte(strings.Replace(yaml, "    options: {url: 'http://127.0.0.1:8181'}\n", "", 1)), filepath.Join("testdata", "user"))
	if err == nil || !strings.Contains(err.Error(), "workload mine has no Rego version") {
		t.Errorf("without url: %v, want the policy asked for", err)
	}
}

// Validation builds each workload once, and the scenario carries it to the run.
func TestValidationKeepsWhatItBuilt(t *testing.T) {
	s, err := Parse("s.yaml", []byte("workloads: [rbac]\ntargets: [opa/inproc]\nfloor: false\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Workloads[0].Built; w == nil || w.Name != "rbac" || len(w.Inputs) == 0 {
		t.Errorf("built %+v, want rbac", w)
	}
	s, err = FromFlags(AdHoc{Workloads: []string{"api"}})
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Workloads[0].Built; w == nil || w.Name != "api" {
		t.Errorf("from flags: built %+v, want api", w)
	}
}
