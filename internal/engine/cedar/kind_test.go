package cedar

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
)

// A Cedar server has no authorization policy in front of its decisions: mtls_authz is refused
// before anything starts, saying so.
func TestServerRefusesMTLSAuthz(t *testing.T) {
	_, err := kinds.New("cedar/server", kinds.Common{}, &ServerConfig{ServerConfig: kinds.ServerConfig{TLSServer: kinds.TLSServer{MTLSAuthz: true}}})
	if err == nil || !strings.Contains(err.Error(), "not supported by cedar/server") {
		t.Errorf("err %v, want mtls_authz not supported", err)
	}
}

// A policy that reads an attribute the request lacks is an evaluation error with Cedar's words,
// never a decision: Cedar skips the policy and decides without it.
func TestInprocEvalErrors(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "p.cedar")
	if err := os.WriteFile(policy, []byte(`permit (principal, action, resource) when { context.level > 2 };`), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := cedarengine.Load(cedarengine.Paths{Policies: []string{policy}})
	if err != nil {
		t.Fatal(err)
	}
	target := &inproc{engine: e}
	for _, ctx := range []string{`{"level": 3}`, `{}`} {
		r, err := e.ParseRequest([]byte(`{"principal": {"type": "User", "id": "ann"}, "action": {"type": "Action", "id": "view"},
			"resource": {"type": "Doc", "id": "d"}, "context": ` + ctx + `}`))
		if err != nil {
			t.Fatal(err)
		}
		target.requests = append(target.requests, r)
	}
	d := target.Worker()
	if got := d.Decide(context.Background(), 0); got != (verify.Outcome{Kind: verify.Decided, Allow: true}) {
		t.Errorf("first input: %+v, want allow", got)
	}
	got := d.Decide(context.Background(), 1)
	if got.Kind != verify.EvalFailed || got.Err == nil || !strings.Contains(got.Err.Error(), "cedar evaluation error: policy0:") {
		t.Errorf("second input: %+v, want an evaluation error naming the policy", got)
	}
}
