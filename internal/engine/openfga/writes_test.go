package openfga

import (
	"context"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Each mode applies a built-in family's stream (rbac's revocations and grants, gdrive's shares,
// unshares, group memberships and folder moves) through its writer, and a check asked
// HIGHER_CONSISTENCY at once after each acknowledgement sees it: never stale. The writes change
// the target's own store, not the one the run's other targets share. A write OpenFGA refuses
// comes back classified, with OpenFGA's reason.
func TestWritesSeenAtOnceWithHigherConsistency(t *testing.T) {
	for _, name := range []string{"rbac", "gdrive-50"} {
		w, err := workload.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Inputs = w.Inputs[:200]
		cs, err := workload.BuiltinChanges(w, 24)
		if err != nil {
			t.Fatal(err)
		}
		common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1}
		for _, mode := range []struct {
			name, kind string
			cfg        kinds.Config
		}{
			{"inproc", "openfga/inproc", &OpenFGAInprocConfig{ConsistencySetting: ConsistencySetting{higherConsistency}}},
			{"server-http", "openfga/server", &OpenFGAServerConfig{ConsistencySetting: ConsistencySetting{higherConsistency}}},
			{"server-grpc", "openfga/server", &OpenFGAServerConfig{API: "grpc", ConsistencySetting: ConsistencySetting{higherConsistency}}},
		} {
			t.Run(name+"/"+mode.name, func(t *testing.T) {
				ctx := context.Background()
				tg, err := kinds.New(mode.kind, common, mode.cfg)
				if err != nil {
					t.Fatal(err)
				}
				if err := tg.Start(ctx, w); err != nil {
					t.Fatal(err)
				}
				defer tg.Stop(ctx)
				if c := tg.Info().Consistency; c == nil || c.Name != higherConsistency || c.Default || c.PromiseMS != 0 {
					t.Errorf("recorded consistency %+v", c)
				}
				ap, err := kinds.WriterOf(tg)
				if err != nil {
					t.Fatal(err)
				}
				d := tg.Worker()
				now := make([]bool, len(w.Inputs))
				for i, in := range w.Inputs {
					now[i] = in.Expect == workload.ExpectAllow
				}
				revoked := 0
				for k, c := range cs {
					form, err := engine.WriteFor(Name, w, c)
					if err != nil {
						t.Fatal(err)
					}
					if ack := ap.Apply(ctx, k+1, change.Change{Form: form, Sets: c.Sets}); ack.Class != "" || ack.Err != nil {
						t.Fatalf("change %d (%s): %s %v", k+1, c.What, ack.Class, ack.Err)
					}
					for i, allow := range c.Sets {
						if now[i] && !allow {
							revoked++
						}
						now[i] = allow
						if out := d.Decide(ctx, i); out.Kind != verify.Decided || out.Allow != allow {
							t.Fatalf("change %d (%s), asked at once: input %d %+v, want allowed %t", k+1, c.What, i+1, out, allow)
						}
					}
				}
				if revoked == 0 {
					t.Error("no change revoked a decision")
				}
				// Every input as the stream left it, and the run's shared engine untouched.
				for i := range w.Inputs {
					if out := d.Decide(ctx, i); out.Allow != now[i] {
						t.Fatalf("input %d after the stream: %+v, want allowed %t", i+1, out, now[i])
					}
				}
				if mode.name == "inproc" {
					shared, err := Load(ctx, common.Prepared, w)
					if err != nil {
						t.Fatal(err)
					}
					for i, in := range w.Inputs {
						if allowed, err := shared.Engine.Check(ctx, shared.Requests[i]); err != nil || allowed != (in.Expect == workload.ExpectAllow) {
							t.Fatalf("the shared engine, input %d: %v %v: the target's writes reached it", i+1, allowed, err)
						}
					}
				}
				// A tuple that is not there cannot be deleted: refused, with OpenFGA's reason.
				missing := `{"deletes": {"tuple_keys": [{"user": "user:nobody", "relation": "viewer", "object": "document:none"}]}}`
				ack := ap.Apply(ctx, len(cs)+1, change.Change{Form: []byte(missing)})
				if (ack.Class != "refused" && ack.Class != "http_400") || ack.Err == nil || !strings.Contains(ack.Err.Error(), "does not exist") {
					t.Errorf("a delete of a missing tuple: %q %v", ack.Class, ack.Err)
				}
			})
		}
	}
}

// The consistency is OpenFGA's words or nothing; its default is OpenFGA's, MINIMIZE_LATENCY, and
// the staleness it allows is the check cache's TTL when server arguments turn one on.
func TestConsistencySetting(t *testing.T) {
	if err := (&OpenFGAInprocConfig{ConsistencySetting: ConsistencySetting{"fully_consistent"}}).Check(); err == nil ||
		!strings.Contains(err.Error(), `consistency "fully_consistent": openfga/inproc takes OpenFGA's MINIMIZE_LATENCY or HIGHER_CONSISTENCY`) {
		t.Errorf("got %v", err)
	}
	if p := (&OpenFGAServerConfig{}).Promise(); p.Name != minimizeLatency || !p.Default || p.Stale != 0 {
		t.Errorf("default %+v", p)
	}
	c := &OpenFGAServerConfig{ServerConfig: kinds.ServerConfig{Args: []string{"--check-query-cache-enabled", "--check-query-cache-ttl=3s"}}}
	if p := c.Promise(); p.Stale.Seconds() != 3 {
		t.Errorf("with the query cache on for 3s: %+v", p)
	}
	c.Consistency = higherConsistency
	if p := c.Promise(); p.Stale != 0 {
		t.Errorf("HIGHER_CONSISTENCY with a cache: %+v", p)
	}
	for _, args := range [][]string{{"--check-iterator-cache-enabled=true"}, {"--check-query-cache-enabled", "true"}} {
		if got := cacheTTL(args); got.Seconds() != 10 {
			t.Errorf("%v: %s, want OpenFGA's default TTL 10s", args, got)
		}
	}
	if got := cacheTTL([]string{"--check-query-cache-enabled=false", "--check-query-cache-ttl=3s"}); got != 0 {
		t.Errorf("cache off: %s", got)
	}
}
