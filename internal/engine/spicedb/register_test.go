package spicedb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// decideInputs runs every input of w through the in-process checker, as spicedb/inproc does, and
// classifies each answer against the input's expectation.
func decideInputs(t *testing.T, w *workload.Workload) []verify.Class {
	t.Helper()
	l, err := Load(context.Background(), engine.NewPrepared(), w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Engine.Close)
	var classes []verify.Class
	for i, in := range w.Inputs {
		allowed, err := l.Engine.Check(context.Background(), l.Requests[i])
		classes = append(classes, verify.Classify(in.Expect, Outcome(l.Fixture.Assertions[i], allowed, err)))
	}
	return classes
}

func TestUserFilesRunUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name        string
		spec        workload.UserSpec
		inputs      int
		allow, deny int
		files       []string
		notMeasured int
	}{
		{"validation file", workload.UserSpec{Policies: []string{"testdata/docshare.yaml"}}, 9, 5, 4, []string{FileValidation}, 1},
		{"validation file with schemaFile and null lists", workload.UserSpec{Policies: []string{"testdata/schemafile.yaml"}}, 1, 0, 1, []string{FileValidation}, 0},
		{"schema, relationships and checks", workload.UserSpec{Policies: []string{"testdata/docshare.zed"}, Data: []string{"testdata/docshare.relationships"}, Inputs: "testdata/checks.jsonl"},
			5, 2, 3, []string{FileSchema, FileRelationships, FileChecks}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := workload.FromFiles(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if !Registered.Written(w) {
				t.Fatal("the workload is not written for SpiceDB")
			}
			allow, deny, unverified := w.Counts()
			if len(w.Inputs) != tc.inputs || allow != tc.allow || deny != tc.deny || unverified != 0 {
				t.Errorf("%d inputs, %d allow, %d deny, %d unverified; want %d, %d, %d, 0", len(w.Inputs), allow, deny, unverified, tc.inputs, tc.allow, tc.deny)
			}
			for _, part := range tc.files {
				if w.VersionFor(Name).Files[part] == "" {
					t.Errorf("its version names no %s file: %v", part, w.VersionFor(Name).Files)
				}
			}
			if got := w.NotMeasured()["validation"]; got != tc.notMeasured {
				t.Errorf("validation entries not measured: %d, want %d", got, tc.notMeasured)
			}
			for i, in := range w.Inputs {
				if src := Registered.Source(in); !strings.HasPrefix(src, "testdata/") || !strings.Contains(src, ":") {
					t.Errorf("input %d: source %q names no file and line", i+1, src)
				}
			}
			for i, c := range decideInputs(t, w) {
				if c != verify.OK {
					t.Errorf("%s: %s", Registered.Source(w.Inputs[i]), verify.Name(c, 0))
				}
			}
		})
	}
}

// An assertCaveated line expects a conditional answer: that answer passes, and no outright
// one does. A conditional answer to any other check is never a decision.
func TestOutcomeHoldsCaveatedChecksToConditional(t *testing.T) {
	conditional := &ConditionalError{Missing: []string{"hour"}}
	for _, tc := range []struct {
		name    string
		expect  Expect
		allowed bool
		err     error
		want    verify.Class
	}{
		{"assertCaveated, conditional", ExpectConditional, false, conditional, verify.OK},
		{"assertCaveated, allowed", ExpectConditional, true, nil, verify.WrongDecision},
		{"assertCaveated, denied outright", ExpectConditional, false, nil, verify.EvalError},
		{"assertFalse, conditional", ExpectDenied, false, conditional, verify.EvalError},
		{"assertTrue, conditional", ExpectAllowed, false, conditional, verify.EvalError},
		{"assertFalse, denied", ExpectDenied, false, nil, verify.OK},
		{"assertTrue, allowed", ExpectAllowed, true, nil, verify.OK},
		{"assertTrue, denied", ExpectAllowed, false, nil, verify.WrongDecision},
		{"assertTrue, failed", ExpectAllowed, false, errors.New("dispatch failed"), verify.EvalError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Assertion{Origin: "v.yaml:3", Expect: tc.expect}
			out := Outcome(a, tc.allowed, tc.err)
			if got := verify.Classify(ExpectOf(tc.expect), out); got != tc.want {
				t.Errorf("%s, want %s (outcome %+v)", verify.Name(got, 0), verify.Name(tc.want, 0), out)
			}
			switch {
			case tc.expect == ExpectConditional && tc.want != verify.OK && (out.Err == nil || !strings.Contains(out.Err.Error(), "v.yaml:3: ")):
				t.Errorf("error %v: want one naming the assertion's line", out.Err)
			case tc.want != verify.OK && tc.err != nil && !errors.Is(out.Err, tc.err):
				t.Errorf("error %v: want SpiceDB's own", out.Err)
			}
		})
	}
}

// What SpiceDB's users keep is claimed, and nothing another engine reads.
func TestClaimsSpiceDBFilesAlone(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"testdata/docshare.yaml", true},
		{"testdata/schemafile.yaml", true},
		{"testdata/docshare.zed", true},
		{write("store.fga.yaml", "model_file: m.fga\ntests: []\n"), false},
		{write("data.yaml", "roles:\n  schema: x\n"), false},
		{write("policy.rego", "package authz\nschema: 1\n"), false},
		{filepath.Join(dir, "missing.yaml"), false},
	} {
		if got := claims(workload.UserSpec{Policies: []string{tc.path}}); got != tc.want {
			t.Errorf("%s: claimed %v, want %v", tc.path, got, tc.want)
		}
	}
}

// Settings a SpiceDB workload cannot be given with are refused, naming them, before any file
// is read.
func TestSpecRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec workload.UserSpec
		want string
	}{
		{"validation file with inputs", workload.UserSpec{Policies: []string{"testdata/docshare.yaml"}, Inputs: "testdata/checks.jsonl"}, "give it alone"},
		{"schema without checks", workload.UserSpec{Policies: []string{"testdata/docshare.zed"}}, "needs inputs FILE.jsonl"},
		{"two relationships files", workload.UserSpec{Policies: []string{"testdata/docshare.zed"}, Data: []string{"a", "b"}, Inputs: "testdata/checks.jsonl"}, "one relationships file"},
		{"a query", workload.UserSpec{Policies: []string{"testdata/docshare.yaml"}, Query: "data.x.allow"}, "query names a Rego decision"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workload.FromFiles(tc.spec)
			var setting *workload.SettingError
			if !errors.As(err, &setting) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want a setting error containing %q", err, tc.want)
			}
		})
	}
}

// An input's check is written and read back as the same assertion.
func TestCheckLineRoundTrip(t *testing.T) {
	f, err := LoadValidationFile("testdata/docshare.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range f.Assertions {
		line, err := CheckLine(a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseCheck(a.Origin, line)
		if err != nil {
			t.Fatalf("%s: %s: %v", a.Origin, line, err)
		}
		if b.String() != a.String() || b.Expect != a.Expect || len(b.Context) != len(a.Context) {
			t.Errorf("%s: %s read back as %s (%s), want %s (%s)", a.Origin, line, b, b.Expect, a, a.Expect)
		}
	}
}
