package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/workload"
)

// A gateway-style endpoint: POST /v1/authorize {"subject": ..., "op": ...} answers
// {"decision": "ALLOW"|"DENY"} after checking its bearer token, and 429 for every 10th subject.
func gateway(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/authorize" || r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		var req struct {
			Subject int    `json:"subject"`
			Op      string `json:"op"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &req); err != nil || req.Op != "read" {
			http.Error(w, "bad body: "+string(b), http.StatusBadRequest)
			return
		}
		if req.Subject%10 == 9 {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		if req.Subject%2 == 0 {
			fmt.Fprint(w, `{"decision": "ALLOW"}`)
			return
		}
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"decision": "DENY"}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTPTarget(t *testing.T) {
	srv := gateway(t)
	dir := t.TempDir()
	inputs := filepath.Join(dir, "in.jsonl")
	f, _ := os.Create(inputs)
	for i := range 20 {
		fmt.Fprintf(f, "{\"input\": {\"user\": {\"id\": %d}, \"action\": \"read\"}, \"expect\": %t}\n", i, i%2 == 0)
	}
	f.Close()
	spec := &workload.UserSpec{Name: "gw", Inputs: inputs}
	for _, tc := range []struct {
		name string
		http map[string]any
	}{
		{"by status", map[string]any{"decision_status": "200=allow,403=deny"}},
		{"by body", map[string]any{"decision_path": "/decision"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.http
			h["url"] = srv.URL + "/v1/authorize"
			h["headers"] = []string{"Authorization: Bearer s3cret"}
			h["body"] = `{"subject": {{input.user.id}}, "op": {{ input.action }}}`
			s := &scenario.Scenario{Name: "gw", Source: "test", Repeat: 1,
				Workloads: []scenario.WorkloadRef{{Name: "gw", User: spec}},
				Targets: []scenario.TargetRef{{Name: "http", Timeout: 5 * time.Second,
					Load: load.Spec{Workers: 2, Requests: 200, MaxTime: 30 * time.Second}}}}
			setOptions(t, s, h)
			doc := &result.Document{}
			if err := Run(context.Background(), s, Options{}, doc); err != nil {
				t.Fatal(err)
			}
			sum := doc.Runs[0].Summary
			// 20 inputs, 10 sends each: subjects 9 and 19 are rate limited, the rest decided right.
			if sum.OK != 180 || sum.ErrorClasses["rate_limited"] != 20 || len(sum.ErrorClasses) != 1 {
				t.Errorf("ok %d, classes %v; want 180 ok and 20 rate_limited", sum.OK, sum.ErrorClasses)
			}
		})
	}
}

func TestHTTPTargetNeedsADecisionRule(t *testing.T) {
	srv := gateway(t)
	s := &scenario.Scenario{Name: "gw", Source: "test", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: "rbac"}},
		Targets:   []scenario.TargetRef{{Name: "http", Timeout: time.Second, Load: load.Spec{Workers: 1, Requests: 1}}}}
	setOptions(t, s, map[string]any{"url": srv.URL})
	err := Run(context.Background(), s, Options{}, &result.Document{})
	if err == nil {
		t.Fatal("no error without --decision-path or --decision-status")
	}
}
