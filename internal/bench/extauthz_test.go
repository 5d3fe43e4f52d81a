package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// envoy and nop run through OPA and Cedar behind Envoy's ext_authz API: every decision checked,
// the servers' timers read from the trailers of the sampled requests, the checks spread over
// the connections asked for.
func TestExtAuthzTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA and Cedar processes")
	}
	const requests = 400
	for _, name := range []string{"opa/extauthz", "cedar/extauthz"} {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			s := &scenario.Scenario{Name: "extauthz", Source: "test", Repeat: 1,
				Workloads: []scenario.WorkloadRef{{Name: "envoy"}, {Name: "nop"}},
				Targets: []scenario.TargetRef{{Name: name, Timeout: 30 * time.Second,
					Load: load.Spec{Workers: 3, Requests: requests, MaxTime: time.Minute}}}}
			setOptions(t, s, map[string]any{"grpc_connections": 2})
			doc := &result.Document{}
			if err := Run(context.Background(), s, Options{Common: kinds.Common{ServerMetricsEvery: 4}}, doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Runs) != 2 {
				t.Fatalf("%d runs, want envoy and nop", len(doc.Runs))
			}
			for _, r := range doc.Runs {
				if r.Summary.OK != requests || r.Summary.Errors != 0 {
					t.Errorf("%s: ok %d errors %d %v, want %d ok", r.Workload, r.Summary.OK, r.Summary.Errors, r.Summary.ErrorClasses, requests)
				}
				if r.SUT.Mode != "ext_authz" || r.SUT.Placement != kinds.LaunchedServer || r.SUT.Connections != 2 || !strings.HasPrefix(r.SUT.URL, "grpc://127.0.0.1:") {
					t.Errorf("%s: SUT %+v, want a launched ext_authz server on 2 connections", r.Workload, r.SUT)
				}
				// Each worker asks for timers on its 1st, 5th, 9th ... request.
				if sv := r.Summary.Server; sv == nil || sv.Sampled < requests/4-3 || sv.Sampled > requests/4+3 {
					t.Errorf("%s: server timers %+v, want about %d sampled", r.Workload, sv, requests/4)
				}
			}
		})
	}
}

// A policy that fails to evaluate reaches the client as a gRPC error, and every such answer is
// counted under its code, never as a decision.
func TestExtAuthzPolicyErrorIsClassified(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an OPA process")
	}
	dir := t.TempDir()
	policy := "package authz\n\nallow := true if input.attributes.request.http.method == \"GET\"\n\nallow := false if input.attributes.request.http.path == \"/boom\"\n"
	inputs := `{"input": {"attributes": {"request": {"http": {"method": "GET", "path": "/ok"}}}}, "expect": true}
{"input": {"attributes": {"request": {"http": {"method": "GET", "path": "/boom"}}}}, "expect": true}
`
	for name, text := range map[string]string{"authz.rego": policy, "inputs.jsonl": inputs} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w, err := workload.FromFiles(workload.UserSpec{Name: "conflict", Policies: []string{filepath.Join(dir, "authz.rego")},
		Inputs: filepath.Join(dir, "inputs.jsonl"), Query: "data.authz.allow"})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := kinds.New("opa/extauthz", kinds.Common{TempDir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Stop(context.Background())
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	d := tg.Worker()
	if out := d.Decide(context.Background(), 0); out.Err != nil || !out.Allow {
		t.Errorf("GET /ok: %+v, want an allow", out)
	}
	out := d.Decide(context.Background(), 1)
	if out.Err == nil || !strings.Contains(out.Err.Error(), "multiple outputs") && !strings.Contains(out.Err.Error(), "conflict") {
		t.Errorf("GET /boom: %+v, want OPA's conflict error", out)
	}
	if c := verify.Name(verify.Classify(w.Inputs[1].Expect, out), out.Status); c != "grpc_internal" {
		t.Errorf("GET /boom classed %s, want grpc_internal", c)
	}
}
