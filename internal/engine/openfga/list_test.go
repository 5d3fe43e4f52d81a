package openfga

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// listWorkload is rbac cut to its first n inputs: list queries for some dozens of users.
func listWorkload(t *testing.T, n int) *workload.Workload {
	t.Helper()
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs = w.Inputs[:n]
	w.Relationships.Checks = w.Relationships.Checks[:n]
	return w
}

// askAll asks every input's list query of d and counts the outcomes by kind.
func askAll(t *testing.T, d kinds.Decider, inputs int) map[verify.Kind]int {
	t.Helper()
	counts := map[verify.Kind]int{}
	for i := range inputs {
		out := d.Decide(context.Background(), i)
		counts[out.Kind]++
		if out.Kind != verify.Listed && out.Kind != verify.WrongSet && out.Kind != verify.Cut {
			t.Fatalf("input %d: %+v: want a list answer", i+1, out)
		}
	}
	return counts
}

// ListObjects in process and served over gRPC (launched with its HTTP API measured, and with
// its gRPC API) answers every rbac list query with the reference model's set; the same queries
// with one object added to an expectation, or a tuple deleted behind the engine's back, are
// counted wrong; and a cap on results below an answer's size counts it truncated, never ok.
func TestListObjectsJudgedWhole(t *testing.T) {
	w := listWorkload(t, 40)
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1, Operation: kinds.ListObjects}
	start := func(t *testing.T, name string, c kinds.Config) kinds.Target {
		t.Helper()
		tg, err := kinds.New(name, common, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.Start(context.Background(), w); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { tg.Stop(context.Background()) })
		return tg
	}
	lists, err := workload.ListQueriesOf(w, workload.Objects)
	if err != nil {
		t.Fatal(err)
	}
	// Some answers must be long enough to cut at 5, and none may be a trivial empty set only.
	long := 0
	for _, q := range lists.Queries {
		if len(q.Expected) > 5 {
			long++
		}
	}
	if long == 0 {
		t.Fatalf("no list query of the first %d inputs has more than 5 objects: the cut below tests nothing", len(w.Inputs))
	}

	targets := map[string]kinds.Target{
		"inproc":      start(t, "openfga/inproc", nil),
		"server-http": start(t, "openfga/server", &OpenFGAServerConfig{API: "http"}),
		"server-grpc": start(t, "openfga/server", &OpenFGAServerConfig{API: "grpc"}),
	}
	for name, tg := range targets {
		t.Run(name, func(t *testing.T) {
			d := tg.Worker()
			if got := askAll(t, d, len(w.Inputs)); got[verify.Listed] != len(w.Inputs) {
				t.Fatalf("%v: want all %d answers the reference model's set", got, len(w.Inputs))
			}
			// One object added to the expectation of the first input's query: its inputs are
			// now asked a set the engine does not give.
			lw := d.(*listWorker)
			first := lists.ByInput[0]
			orig := lw.l.sets[first]
			t.Cleanup(func() { lw.l.sets[first] = orig })
			lw.l.sets[first] = verify.NewSet(append(slices.Clone(lists.Queries[first].Expected), "resource:document-doc-9999"))
			want := 0
			for _, q := range lists.ByInput {
				if q == first {
					want++
				}
			}
			got := askAll(t, d, len(w.Inputs))
			if got[verify.WrongSet] != want || got[verify.Listed] != len(w.Inputs)-want {
				t.Errorf("one object added to one expectation: %v, want %d wrong and the rest listed", got, want)
			}
			out := d.Decide(context.Background(), 0)
			if out.Err == nil || !strings.Contains(out.Err.Error(), "1 missing (resource:document-doc-9999)") {
				t.Errorf("wrong answer's message %v: want it to name the missing object", out.Err)
			}
			if c := verify.Classify(workload.ExpectAllow, out); c != verify.WrongDecision {
				t.Errorf("a wrong set classified %s, want wrong_decision", verify.Name(c, 0))
			}
		})
	}

	t.Run("tuple deleted behind the engine", func(t *testing.T) {
		tg := targets["inproc"].(*openfgaInproc)
		q, n, owned := ownedOnly(t, w, lists)
		s := tg.engine.Stores
		key := func() []*openfgav1.TupleKey {
			return []*openfgav1.TupleKey{{Object: owned, Relation: "owner", User: q.Subject.String()}}
		}
		del := &openfgav1.WriteRequest{StoreId: s.Stores[0], AuthorizationModelId: s.Models[0],
			Deletes: &openfgav1.WriteRequestDeletes{TupleKeys: []*openfgav1.TupleKeyWithoutCondition{{Object: owned, Relation: "owner", User: q.Subject.String()}}}}
		if _, err := tg.engine.Server().Write(context.Background(), del); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			add := &openfgav1.WriteRequest{StoreId: s.Stores[0], AuthorizationModelId: s.Models[0], Writes: &openfgav1.WriteRequestWrites{TupleKeys: key()}}
			if _, err := tg.engine.Server().Write(context.Background(), add); err != nil {
				t.Error(err)
			}
		})
		d := tg.Worker()
		i := slices.Index(lists.ByInput, n)
		if out := d.Decide(context.Background(), i); out.Kind != verify.WrongSet || !strings.Contains(out.Err.Error(), "1 missing ("+owned+")") {
			t.Errorf("after deleting %s#owner@%s: %+v, want a wrong set naming it missing", owned, q.Subject, out)
		}
	})

	t.Run("cut at max results", func(t *testing.T) {
		l, err := Load(context.Background(), common.Prepared, w)
		if err != nil {
			t.Fatal(err)
		}
		e, err := startListing(context.Background(), l.Fixture, listLimits{MaxResults: 5, Deadline: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		tg := &openfgaInproc{common: common, engine: e}
		if err := tg.lists.prepare(context.Background(), common.Prepared, kinds.ListObjects, w); err != nil {
			t.Fatal(err)
		}
		cut := 0
		for _, i := range lists.ByInput {
			if len(lists.Queries[i].Expected) > 5 {
				cut++
			}
		}
		got := askAll(t, tg.Worker(), len(w.Inputs))
		if got[verify.Cut] != cut || got[verify.Listed] != len(w.Inputs)-cut {
			t.Errorf("max results 5: %v, want the %d answers longer than 5 truncated and the rest listed", got, cut)
		}
		out := tg.Worker().Decide(context.Background(), slices.IndexFunc(lists.ByInput, func(q int) bool { return len(lists.Queries[q].Expected) > 5 }))
		if c := verify.Classify(workload.ExpectAllow, out); c != verify.Truncated || verify.Name(c, 0) != "truncated" {
			t.Errorf("a cut answer classified %s, want truncated", verify.Name(c, 0))
		}
	})

	t.Run("served cut at max results", func(t *testing.T) {
		tg := start(t, "openfga/server", &OpenFGAServerConfig{API: "grpc", ServerConfig: kinds.ServerConfig{Args: []string{"--listObjects-max-results", "5"}}})
		cut := 0
		for _, i := range lists.ByInput {
			if len(lists.Queries[i].Expected) > 5 {
				cut++
			}
		}
		if got := askAll(t, tg.Worker(), len(w.Inputs)); got[verify.Cut] != cut || got[verify.Listed] != len(w.Inputs)-cut {
			t.Errorf("--listObjects-max-results 5: %v, want the %d answers longer than 5 truncated and the rest listed", got, cut)
		}
	})
}

// ownedOnly is a list query of w whose user reads an object only as its owner
// (ListQueries.OwnedOnly), with its number and that object.
func ownedOnly(t *testing.T, w *workload.Workload, lists *workload.ListQueries) (*workload.ListQuery, int, string) {
	t.Helper()
	n, o, ok := lists.OwnedOnly(w)
	if !ok {
		t.Fatal("no list query's user reads an object only as its owner")
	}
	return &lists.Queries[n], n, o
}

// ListUsers in process and served over gRPC answers every rbac list-users query (every user who
// may act on the input's resource) with the reference model's set; one user added to an
// expectation is counted wrong; a cap on results below an answer's size counts it truncated.
func TestListUsersJudgedWhole(t *testing.T) {
	w := listWorkload(t, 30)
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1, Operation: kinds.ListUsers}
	lists, err := workload.ListQueriesOf(w, workload.Subjects)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		kind string
		cfg  kinds.Config
	}{{"inproc", "openfga/inproc", nil}, {"server-grpc", "openfga/server", &OpenFGAServerConfig{API: "grpc"}}} {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := kinds.New(tc.kind, common, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := tg.Start(context.Background(), w); err != nil {
				t.Fatal(err)
			}
			defer tg.Stop(context.Background())
			d := tg.Worker()
			if got := askAll(t, d, len(w.Inputs)); got[verify.Listed] != len(w.Inputs) {
				t.Fatalf("%v: want all %d answers the reference model's set", got, len(w.Inputs))
			}
			lw := d.(*listWorker)
			first := lists.ByInput[0]
			orig := lw.l.sets[first]
			defer func() { lw.l.sets[first] = orig }()
			ids := []string{"user-9999"}
			for _, u := range lists.Queries[first].Expected {
				ids = append(ids, strings.TrimPrefix(u, "user:"))
			}
			lw.l.sets[first] = verify.NewSet(ids)
			if out := d.Decide(context.Background(), 0); out.Kind != verify.WrongSet || !strings.Contains(out.Err.Error(), "1 missing (user-9999)") {
				t.Errorf("one user added to the expectation: %+v, want a wrong set naming it", out)
			}
		})
	}
	t.Run("cut at max results", func(t *testing.T) {
		l, err := Load(context.Background(), common.Prepared, w)
		if err != nil {
			t.Fatal(err)
		}
		e, err := startListing(context.Background(), l.Fixture, listLimits{MaxResults: 5, Deadline: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		tg := &openfgaInproc{common: common, engine: e}
		if err := tg.lists.prepare(context.Background(), common.Prepared, kinds.ListUsers, w); err != nil {
			t.Fatal(err)
		}
		cut := 0
		for _, q := range lists.ByInput {
			if len(lists.Queries[q].Expected) > 5 {
				cut++
			}
		}
		if cut == 0 {
			t.Fatal("no answer longer than 5: the cut tests nothing")
		}
		if got := askAll(t, tg.Worker(), len(w.Inputs)); got[verify.Cut] != cut || got[verify.Listed] != len(w.Inputs)-cut {
			t.Errorf("max results 5: %v, want the %d answers longer than 5 truncated and the rest listed", got, cut)
		}
	})
}

// OpenFGA's limits as a served run reads them from the server's arguments, and what counts as
// possibly cut: the cap reached, an answer larger than the cap, or 90 % of the deadline gone.
func TestListLimits(t *testing.T) {
	if l := serverListLimits(kinds.ListObjects, []string{"--log-level", "error", "--listObjects-max-results", "50", "--listUsers-deadline=1s"}); l != (listLimits{50, 3 * time.Second}) {
		t.Errorf("list-objects limits %+v, want 50 results and the default 3s", l)
	}
	if l := serverListLimits(kinds.ListUsers, []string{"--listObjects-max-results", "50", "--listUsers-deadline=1s"}); l != (listLimits{1000, time.Second}) {
		t.Errorf("list-users limits %+v, want the default 1,000 results and 1s", l)
	}
	l := listLimits{MaxResults: 10, Deadline: time.Second}
	for _, tc := range []struct {
		n, want int
		elapsed time.Duration
		cut     bool
	}{
		{3, 5, 0, false}, {10, 20, 0, true}, {4, 20, 0, true}, {4, 10, 0, false}, {4, 5, 950 * time.Millisecond, true}, {4, 5, 850 * time.Millisecond, false},
	} {
		if got := l.cut(tc.n, tc.want, tc.elapsed); got != tc.cut {
			t.Errorf("%d of %d after %s: cut %t, want %t", tc.n, tc.want, tc.elapsed, got, tc.cut)
		}
	}
	if (listLimits{}).cut(1, 1000, time.Hour) {
		t.Error("no limits: nothing is cut")
	}
}

// BatchCheck in process and served over gRPC: every batch of 50 rbac checks decided as the
// reference model expects; one expectation turned is a wrong answer in each batch holding it.
func TestBatchCheckJudgedWhole(t *testing.T) {
	w := listWorkload(t, 60)
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1, Operation: kinds.BatchCheck}
	for _, tc := range []struct {
		name string
		kind string
		cfg  kinds.Config
	}{{"inproc", "openfga/inproc", nil}, {"server-http", "openfga/server", &OpenFGAServerConfig{API: "http"}}} {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := kinds.New(tc.kind, common, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := tg.Start(context.Background(), w); err != nil {
				t.Fatal(err)
			}
			defer tg.Stop(context.Background())
			d := tg.Worker()
			if got := askAll(t, d, len(w.Inputs)); got[verify.Listed] != len(w.Inputs) {
				t.Fatalf("%v: want all %d batches decided as expected", got, len(w.Inputs))
			}
			// Input 30's expectation turned (laid out twice: the batches wrap around): the 50
			// batches starting at 41 to 59 and 0 to 30 hold it.
			bw := d.(*batchWorker)
			turn := func() {
				for _, k := range []int{30, 30 + len(w.Inputs)} {
					if k < len(bw.expects) {
						bw.expects[k] = map[workload.Expect]workload.Expect{workload.ExpectAllow: workload.ExpectDeny, workload.ExpectDeny: workload.ExpectAllow}[bw.expects[k]]
					}
				}
			}
			turn()
			defer turn()
			got := askAll(t, d, len(w.Inputs))
			if got[verify.WrongSet] != kinds.BatchSize || got[verify.Listed] != len(w.Inputs)-kinds.BatchSize {
				t.Errorf("one expectation turned: %v, want the %d batches holding it wrong", got, kinds.BatchSize)
			}
			if out := d.Decide(context.Background(), 41); out.Err == nil || !strings.Contains(out.Err.Error(), "check 50 of 50: expected") {
				t.Errorf("batch 41: %v, want its 50th check named", out.Err)
			}
		})
	}
}
