package spicedb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func start(t *testing.T, f *Fixture) *Engine {
	t.Helper()
	e, err := Start(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// verifyAll checks every assertion of f and says how many held.
func verifyAll(t *testing.T, f *Fixture) {
	t.Helper()
	e := start(t, f)
	for _, a := range f.Assertions {
		allowed, err := e.Check(context.Background(), e.Prepare(a))
		if err := a.Verify(allowed, err); err != nil {
			t.Error(err)
		}
	}
}

func TestValidationFileDecidesAsExpected(t *testing.T) {
	f, err := LoadValidationFile("testdata/docshare.yaml")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[Expect]int{}
	for _, a := range f.Assertions {
		counts[a.Expect]++
	}
	if counts[ExpectAllowed] != 5 || counts[ExpectDenied] != 3 || counts[ExpectConditional] != 1 {
		t.Errorf("assertions by expectation: %v, want 5 allowed, 3 denied, 1 conditional", counts)
	}
	if len(f.Relationships) != 9 {
		t.Errorf("%d relationships, want 9 (comments and blank lines skipped)", len(f.Relationships))
	}
	if f.NotMeasured["validation"] != 1 {
		t.Errorf("validation entries not measured: %d, want 1", f.NotMeasured["validation"])
	}
	verifyAll(t, f)
}

func TestSchemaFileAndNullLists(t *testing.T) {
	f, err := LoadValidationFile("testdata/schemafile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Assertions) != 1 || f.Assertions[0].Expect != ExpectConditional {
		t.Fatalf("assertions: %+v, want the one assertCaveated line", f.Assertions)
	}
	verifyAll(t, f)
}

func TestFilesDecideAsExpected(t *testing.T) {
	f, err := LoadFiles("testdata/docshare.zed", "testdata/docshare.relationships", "testdata/checks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Assertions) != 5 || f.Assertions[3].Origin != "testdata/checks.jsonl:5" {
		t.Errorf("assertions %+v: want 5, the fourth from line 5 (blank lines counted)", f.Assertions)
	}
	verifyAll(t, f)
}

// A check whose caveat lacks its context is conditional: an error, never a deny.
func TestConditionalIsNotADecision(t *testing.T) {
	f, err := LoadFiles("testdata/docshare.zed", "testdata/docshare.relationships", "testdata/checks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	e := start(t, f)
	conditional := f.Assertions[4]
	allowed, err := e.Check(context.Background(), e.Prepare(conditional))
	if !errors.Is(err, ErrConditional) || allowed {
		t.Fatalf("check without caveat context: allowed %v, error %v; want a conditional error", allowed, err)
	}
	if !strings.Contains(err.Error(), "hour") {
		t.Errorf("conditional error %q does not name the missing context", err)
	}
	denied := conditional
	denied.Expect = ExpectDenied
	if denied.Verify(allowed, err) == nil {
		t.Error("a conditional answer verified as a deny")
	}
	if conditional.Verify(false, nil) == nil {
		t.Error("a deny verified as conditional")
	}
}

func TestStartNamesTheLineSpiceDBRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name, file, want string
	}{
		{"subject type the relation does not allow", "schema: |-\n  definition user {}\n  definition doc {\n    relation viewer: user\n  }\nrelationships: |-\n  doc:a#viewer@user:x\n  doc:a#viewer@doc:b\nassertions:\n  assertTrue:\n    - doc:a#viewer@user:x\n",
			"v.yaml:8: spicedb refuses relationship doc:a#viewer@doc:b"},
		{"caveat the relation does not take", "schema: |-\n  definition user {}\n  caveat only_one(n int) { n == 1 }\n  definition doc {\n    relation viewer: user\n  }\nrelationships: |-\n  doc:a#viewer@user:x[only_one]\nassertions:\n  assertTrue:\n    - doc:a#viewer@user:x\n",
			"v.yaml:8: spicedb refuses relationship"},
		{"schema error", "schema: |-\n  definition user {}\n  definition doc {\n    relation viewer: usr\n  }\nassertions:\n  assertFalse:\n    - doc:a#viewer@user:x\n",
			"v.yaml:4: spicedb refuses the schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := LoadValidationFile(write("v.yaml", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			e, err := Start(context.Background(), f)
			if err == nil {
				e.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// Close stops what the engine started: no goroutine of ours outlives it.
func TestCloseStopsTheEngine(t *testing.T) {
	f, err := LoadValidationFile("testdata/docshare.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Goroutines SpiceDB starts once per process, whoever asks first, are not the engine's.
	warm, err := Start(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	warm.Close()
	before := runtime.NumGoroutine()
	e, err := Start(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range f.Assertions {
		_, _ = e.Check(context.Background(), e.Prepare(a))
	}
	e.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before the engine, %d after Close:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

// Relationships with an expiration hold until it, and not after.
func TestExpiringRelationships(t *testing.T) {
	f, err := LoadValidationFile("testdata/expiration.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Relationships) != 2 || f.Relationships[1].Rel.OptionalExpiration == nil {
		t.Fatalf("relationships %+v: want two, with their expirations", f.Relationships)
	}
	verifyAll(t, f)
}

// A context field SpiceDB names once per caveat that lacks it is said once: the message read
// "caveat context missing hour, hour".
func TestConditionalErrorNamesEachFieldOnce(t *testing.T) {
	err := &ConditionalError{Missing: []string{"hour", "day", "hour"}}
	if got, want := err.Error(), "conditional: caveat context missing hour, day"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
