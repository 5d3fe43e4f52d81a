package openfga

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/authzbench/authzbench/internal/engine"
)

// TestMain lets this test binary become OpenFGA's server, as authzbench does.
func TestMain(m *testing.M) {
	engine.DispatchIfAsked()
	code := m.Run()
	stopPostgres()
	os.Exit(code)
}

// decideAll starts an engine for f and checks every assertion, failing on each wrong decision.
func decideAll(t *testing.T, f *Fixture) {
	t.Helper()
	ctx := context.Background()
	e, err := Start(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, a := range f.Assertions {
		req, err := e.Prepare(a)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Check(ctx, req)
		if err != nil {
			t.Errorf("%s: %s %s %s: %v", a.Origin, a.User, a.Relation, a.Object, err)
			continue
		}
		if got != a.Expect {
			t.Errorf("%s: test %q: %s %s %s: got %v, want %v", a.Origin, a.Name, a.User, a.Relation, a.Object, got, a.Expect)
		}
	}
}

func TestStoreFileDecidesAsExpected(t *testing.T) {
	for _, path := range []string{"testdata/store.fga.yaml", "testdata/modular/store.fga.yaml"} {
		t.Run(path, func(t *testing.T) {
			f, err := LoadStore(path)
			if err != nil {
				t.Fatal(err)
			}
			// inheritance: 8 checks (users × objects × relations), grant: 2, the drafts: 2 and 1.
			if len(f.Assertions) != 13 {
				t.Errorf("%d assertions, want 13", len(f.Assertions))
			}
			// 3 inline tuples, 3 from groups.yaml, 4 from folders.csv: inline and files merge.
			if n := len(f.TupleSets[0].Tuples); n != 10 {
				t.Errorf("store holds %d tuples, want 10", n)
			}
			if f.NotMeasured["list_objects"] != 2 || f.NotMeasured["list_users"] != 1 {
				t.Errorf("not measured: %v, want list_objects 2 (two relations), list_users 1", f.NotMeasured)
			}
			decideAll(t, f)
		})
	}
}

// The two draft tests write the same tuple with different grants, each for itself alone, as
// `fga model test` runs them; a test without tuples sees neither.
func TestTestTuplesHoldForTheirTestAlone(t *testing.T) {
	f, err := LoadStore("testdata/store.fga.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.TupleSets) != 3 {
		t.Fatalf("%d tuple sets, want 3 (the store's, and one per draft test)", len(f.TupleSets))
	}
	setOf := map[string]int{}
	for _, a := range f.Assertions {
		setOf[a.Name] = a.TupleSet
	}
	if setOf["inheritance"] != 0 || setOf["grant in time"] != 0 {
		t.Errorf("tests without tuples of their own use sets %v, want the store's (0)", setOf)
	}
	hour, tenMinutes := setOf["draft shared for an hour"], setOf["draft shared for ten minutes"]
	if hour == 0 || tenMinutes == 0 || hour == tenMinutes {
		t.Fatalf("draft tests use sets %d and %d, want two sets of their own", hour, tenMinutes)
	}
	for _, set := range []int{hour, tenMinutes} {
		tuples := f.TupleSets[set].Tuples
		if len(tuples) != 11 || tuples[10].Key.GetUser() != "user:gina" {
			t.Errorf("set %d holds %d tuples ending with %v, want the store's 10 and gina's grant", set, len(tuples), tuples[len(tuples)-1].Key)
		}
	}
	decideAll(t, f) // gina: viewer for the hour, not for ten minutes, nor in the inheritance test
}

func TestChecksFileDecidesAsExpected(t *testing.T) {
	f, err := LoadChecks("testdata/model.fga", "testdata/tuples.jsonl", "testdata/checks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Assertions) != 5 || len(f.TupleSets) != 1 || len(f.TupleSets[0].Tuples) != 4 {
		t.Fatalf("%d assertions over %d sets, want 5 over the file's 4 tuples", len(f.Assertions), len(f.TupleSets))
	}
	if got := f.Assertions[2].ContextualTuples; len(got) != 1 || got[0].Key.GetObject() != "group:eng" {
		t.Errorf("line 3's contextual tuples: %v", got)
	}
	if f.Assertions[3].Context.GetFields()["current_time"].GetStringValue() != "2026-01-01T23:00:00Z" {
		t.Errorf("line 4's context: %v", f.Assertions[3].Context)
	}
	decideAll(t, f)
}

// A model file in JSON, as `fga model get --format json` writes it, is the same model.
func TestJSONModel(t *testing.T) {
	dsl, err := LoadModel("testdata/model.fga")
	if err != nil {
		t.Fatal(err)
	}
	data, err := protojson.Marshal(dsl)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	fromJSON, err := LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(dsl, fromJSON) {
		t.Errorf("JSON model differs from its DSL:\n%v\n%v", fromJSON, dsl)
	}
}

// A Check OpenFGA refuses is an error, never a deny.
func TestCheckErrorIsNotADecision(t *testing.T) {
	f, err := LoadChecks("testdata/model.fga", "testdata/tuples.jsonl", "testdata/checks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Start(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	a := f.Assertions[0]
	a.Relation = "approver" // not in the model
	req, err := e.Prepare(a)
	if err != nil {
		t.Fatal(err)
	}
	if allowed, err := e.Check(context.Background(), req); err == nil {
		t.Errorf("check of an undefined relation: allowed=%v and no error", allowed)
	}
	a = f.Assertions[0]
	for range MaxContextualTuples + 1 {
		a.ContextualTuples = append(a.ContextualTuples, f.Assertions[2].ContextualTuples[0])
	}
	if _, err := e.Prepare(a); err == nil || !strings.Contains(err.Error(), "at most 100") {
		t.Errorf("101 contextual tuples: %v, want OpenFGA's limit of 100 named", err)
	}
}

// Close stops what the server started: no goroutine of ours outlives it.
func TestCloseStopsTheServer(t *testing.T) {
	f, err := LoadStore("testdata/store.fga.yaml")
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	decideAll(t, f) // starts, checks and closes
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before the engine, %d after Close:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

func TestPrepareAimsAtTheTestsStore(t *testing.T) {
	f, err := LoadStore("testdata/store.fga.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Start(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	stores := map[string]bool{}
	for _, a := range f.Assertions {
		req, err := e.Prepare(a)
		if err != nil {
			t.Fatal(err)
		}
		stores[req.GetStoreId()] = true
		if req.GetAuthorizationModelId() == "" {
			t.Errorf("%s: no model id: OpenFGA would look the latest model up on every Check", a.Origin)
		}
	}
	if len(stores) != 3 {
		t.Errorf("checks go to %d stores, want 3", len(stores))
	}
}
