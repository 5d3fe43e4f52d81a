package spicedb

import (
	"context"
	"strings"
	"testing"

	v1 "github.com/authzed/authzed-go/proto/authzed/api/v1"
	"github.com/authzed/spicedb/pkg/tuple"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Each mode applies a built-in family's stream (rbac's revocations and grants, gdrive's shares,
// unshares, group memberships and folder moves) through its writer, and a check at once after
// each acknowledgement sees it, never stale: the server's asked at_least_as_fresh with the
// written token (and fully_consistent), the in-process checker at its head revision. The
// in-process writes change the target's own datastore, not the one the run's other targets
// share. A write SpiceDB refuses comes back classified, with SpiceDB's reason.
func TestWritesSeenAtOnceWithTheWrittenToken(t *testing.T) {
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
			name, kind, consistency string
			cfg                     kinds.Config
		}{
			{"inproc", "spicedb/inproc", fullyConsistent, &SpiceDBInprocConfig{}},
			{"server-fresh", "spicedb/server", atLeastAsFresh, &SpiceDBServerConfig{ConsistencySetting: ConsistencySetting{atLeastAsFresh}}},
			{"server-full", "spicedb/server", fullyConsistent, &SpiceDBServerConfig{ConsistencySetting: ConsistencySetting{fullyConsistent}}},
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
				if c := tg.Info().Consistency; c == nil || c.Name != mode.consistency || c.PromiseMS != 0 {
					t.Errorf("recorded consistency %+v", c)
				}
				ap, err := kinds.WriterOf(tg)
				if err != nil {
					t.Fatal(err)
				}
				d := tg.Worker()
				defer kinds.CloseDecider(d)
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
					ack := ap.Apply(ctx, k+1, change.Change{Form: form, Sets: c.Sets})
					if ack.Class != "" || ack.Err != nil || ack.Token == "" {
						t.Fatalf("change %d (%s): %q %v, token %q", k+1, c.What, ack.Class, ack.Err, ack.Token)
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
				l, err := Load(ctx, common.Prepared, w)
				if err != nil {
					t.Fatal(err)
				}
				if mode.name == "inproc" {
					for i, in := range w.Inputs {
						if allowed, err := l.Engine.Check(ctx, l.Requests[i]); err != nil || allowed != (in.Expect == workload.ExpectAllow) {
							t.Fatalf("the shared checker, input %d: %v %v: the target's writes reached it", i+1, allowed, err)
						}
					}
				}
				// A relationship the world holds cannot be created again: not acknowledged.
				dup := &v1.WriteRelationshipsRequest{Updates: []*v1.RelationshipUpdate{{Operation: v1.RelationshipUpdate_OPERATION_CREATE,
					Relationship: tuple.ToV1Relationship(l.Fixture.Relationships[0].Rel)}}}
				form, _ := protojson.Marshal(dup)
				ack := ap.Apply(ctx, len(cs)+1, change.Change{Form: form})
				if ack.Class == "" || ack.Err == nil || !strings.Contains(strings.ToLower(ack.Err.Error()), "exist") {
					t.Errorf("a create of a held relationship: %q %v", ack.Class, ack.Err)
				}
			})
		}
	}
}

// Asked minimize_latency, spicedb/server waits before the clock until SpiceDB's snapshot holds
// the workload: every input is then decided as the world says, none from before the load.
func TestMinimizeLatencyWaitsForTheLoad(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs = w.Inputs[:100]
	tg, err := kinds.New("spicedb/server", kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1},
		&SpiceDBServerConfig{ConsistencySetting: ConsistencySetting{minimizeLatency}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	defer tg.Stop(context.Background())
	if c := tg.Info().Consistency; c == nil || c.Name != minimizeLatency || c.PromiseMS != 5500 {
		t.Errorf("recorded consistency %+v", c)
	}
	decideEvery(t, tg, w)
}

// The consistency is SpiceDB's words, those the kind can ask, or nothing.
func TestConsistencySetting(t *testing.T) {
	for _, c := range []struct {
		cfg  kinds.Config
		want string
	}{
		{&SpiceDBServerConfig{ConsistencySetting: ConsistencySetting{"HIGHER_CONSISTENCY"}}, `consistency "HIGHER_CONSISTENCY": spicedb/server takes SpiceDB's [minimize_latency at_least_as_fresh fully_consistent]`},
		{&SpiceDBInprocConfig{ConsistencySetting{minimizeLatency}}, "always checks at the datastore's head revision"},
	} {
		if err := c.cfg.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	if err := (&SpiceDBInprocConfig{ConsistencySetting{fullyConsistent}}).Check(); err != nil {
		t.Error(err)
	}
	if p := (&SpiceDBServerConfig{}).Promise(); p.Name != atLeastAsFresh || !p.Default || p.Stale != quantizedStaleness {
		t.Errorf("default %+v", p)
	}
}
