package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// An engine that disagrees with an expected decision is named with the first input it got
// wrong, in every mode; the inputs before it and after it still count.
func TestVerifyWorkloadsNamesTheFirstDisagreement(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA and Cedar processes")
	}
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	// Flip the expectations of inputs 4 and 7 (1-based): every engine now "disagrees" there.
	for _, i := range []int{3, 6} {
		if w.Inputs[i].Expect == workload.ExpectAllow {
			w.Inputs[i].Expect = workload.ExpectDeny
		} else {
			w.Inputs[i].Expect = workload.ExpectAllow
		}
	}
	rows, err := VerifyWorkloads(context.Background(), []*workload.Workload{w}, EquivalenceOptions{
		Inputs: 10, Common: kinds.Common{TempDir: t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	modes := 0
	for _, name := range kinds.EngineModes() {
		k, err := kinds.LookupAny(name)
		if err != nil {
			t.Fatal(err)
		}
		modes += len(k.ModesOf())
	}
	if len(rows) != modes {
		t.Fatalf("%d rows, want one per mode (%d)", len(rows), modes)
	}
	for _, r := range rows {
		// The ext_authz kinds take Envoy checks, which rbac's inputs are not: skipped, and said why.
		if reason := kindOf(t, r.Kind).Refuses(w); reason != "" {
			if r.Skipped != reason || r.Checked != 0 {
				t.Errorf("%s: skipped %q after %d checks, want skipped for %q", r.Target, r.Skipped, r.Checked, reason)
			}
			continue
		}
		// An engine of the registry with no version of rbac: skipped, and said why.
		if lang, written := engine.WrittenFor(kindOf(t, r.Kind).Engine, w); !written {
			if r.Skipped != "no "+lang+" version" || r.Checked != 0 {
				t.Errorf("%s: skipped %q after %d checks, want skipped for want of a %s version", r.Target, r.Skipped, r.Checked, lang)
			}
			continue
		}
		if r.Checked != 10 || r.Agreed != 8 || r.First == nil || r.First.Input != 4 {
			t.Errorf("%s: checked %d agreed %d first %+v; want 10, 8 and input 4", r.Target, r.Checked, r.Agreed, r.First)
			continue
		}
		if want := w.Inputs[3].Expect; r.First.Expect != want || r.First.Got == want.String() {
			t.Errorf("%s: first disagreement expects %s, got %s", r.Target, r.First.Expect, r.First.Got)
		}
		want := engine.For(kindOf(t, r.Kind).Engine).Request(w.Inputs[3])
		if string(r.First.Request) != string(want) {
			t.Errorf("%s: reported request %s, want what the engine was given: %s", r.Target, r.First.Request, want)
		}
	}
}

// A workload without a Cedar version is skipped by the Cedar targets, not failed.
func TestVerifyWorkloadsSkipsMissingEngineVersions(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	delete(w.Versions, "cedar")
	rows, err := VerifyWorkloads(context.Background(), []*workload.Workload{w}, EquivalenceOptions{
		Targets: []string{"opa/inproc", "cedar/inproc"}, Inputs: 20, Common: kinds.Common{TempDir: t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Agreed != 20 || rows[1].Skipped == "" || rows[1].Checked != 0 {
		t.Fatalf("rows %+v; want opa/inproc agreeing on 20 and cedar/inproc skipped", rows)
	}
}

// The small Rego apps (internal/engine/opa/testdata/rego-apps) decide as worked out by hand in
// every OPA mode: v0 syntax read as v0 in-process, by opa eval and by the server alike, and an
// undefined decision read as deny by all three. Without --undefined-as, undefined stays an
// error, named as such.
func TestVerifyRegoAppsInEveryOPAMode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA processes")
	}
	app := func(name, file string) string {
		return filepath.Join("..", "engine", "opa", "testdata", "rego-apps", name, file)
	}
	modes := []string{"opa/inproc", "opa/cli", "opa/server"}
	for _, tc := range []struct {
		name        string
		spec        workload.UserSpec
		agreed      int
		firstSource string // the file:line of the first input that disagreed
		firstGot    string
	}{
		{"v0", workload.UserSpec{Policies: []string{app("v0", "authz.rego")}, Inputs: app("v0", "inputs.jsonl"), V0Compatible: true}, 4, "", ""},
		{"nodefault as deny", workload.UserSpec{Policies: []string{app("nodefault", "authz.rego")}, Inputs: app("nodefault", "inputs.jsonl"), UndefinedAs: "deny"}, 4, "", ""},
		{"nodefault as allow", workload.UserSpec{Policies: []string{app("nodefault", "authz.rego")}, Inputs: app("nodefault", "inputs.jsonl"), UndefinedAs: "allow"},
			2, app("nodefault", "inputs.jsonl") + ":6", "allow"},
		{"nodefault", workload.UserSpec{Policies: []string{app("nodefault", "authz.rego")}, Inputs: app("nodefault", "inputs.jsonl")},
			2, app("nodefault", "inputs.jsonl") + ":6", "undefined"},
		{"withtests", workload.UserSpec{Policies: []string{app("withtests", "")}, Data: []string{app("withtests", "data.json")}, Inputs: app("withtests", "inputs.jsonl")}, 3, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := workload.FromFiles(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := VerifyWorkloads(context.Background(), []*workload.Workload{w}, EquivalenceOptions{
				Targets: modes, Parallel: 2, Common: kinds.Common{TempDir: t.TempDir()},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(modes) {
				t.Fatalf("%d rows, want %d", len(rows), len(modes))
			}
			for _, r := range rows {
				if r.Checked != len(w.Inputs) || r.Agreed != tc.agreed {
					t.Errorf("%s: checked %d agreed %d; want %d and %d", r.Target, r.Checked, r.Agreed, len(w.Inputs), tc.agreed)
				}
				switch {
				case tc.firstSource == "" && r.First != nil:
					t.Errorf("%s: disagrees at %+v", r.Target, r.First)
				case tc.firstSource != "" && (r.First == nil || r.First.Source != tc.firstSource || r.First.Got != tc.firstGot):
					t.Errorf("%s: first disagreement %+v; want %s getting %s", r.Target, r.First, tc.firstSource, tc.firstGot)
				}
			}
		})
	}
}

// Lines without an expected decision take the first target's, and every other target must
// agree with it: here Cedar's version of the policy permits bob where the Rego allows alice,
// and the Cedar target is named at the first Cedar line that differs.
func TestVerifyUnexpectedLinesAcrossEngines(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	spec := workload.UserSpec{
		Policies:      []string{write("app.rego", "package app\n\ndefault allow := false\n\nallow if input.user == \"alice\"\n")},
		Inputs:        write("inputs.jsonl", `{"input": {"user": "alice"}}`+"\n"+`{"input": {"user": "bob"}}`+"\n"),
		CedarPolicies: []string{write("app.cedar", `permit (principal == User::"bob", action, resource);`)},
		Requests: write("requests.jsonl", "# alice, then bob\n"+
			`{"principal": {"type": "User", "id": "alice"}, "action": {"type": "Action", "id": "view"}, "resource": {"type": "Photo", "id": "p1"}}`+"\n"+
			`{"principal": {"type": "User", "id": "bob"}, "action": {"type": "Action", "id": "view"}, "resource": {"type": "Photo", "id": "p1"}}`+"\n"),
	}
	w, err := workload.FromFiles(spec)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := VerifyWorkloads(context.Background(), []*workload.Workload{w}, EquivalenceOptions{
		Targets: []string{"opa/inproc", "cedar/inproc"}, Common: kinds.Common{TempDir: t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Agreed != 2 || rows[0].First != nil {
		t.Fatalf("rows %+v; want opa/inproc deciding both lines", rows)
	}
	d := rows[1].First
	want := Disagreement{Input: 1, Source: spec.Requests + ":2", Expect: workload.ExpectAllow, DecidedBy: "opa/inproc", Got: "deny"}
	if rows[1].Agreed != 0 || d == nil || d.Input != want.Input || d.Source != want.Source || d.Expect != want.Expect || d.DecidedBy != want.DecidedBy || d.Got != want.Got {
		t.Errorf("cedar/inproc: agreed %d, first %+v; want 0 and %+v", rows[1].Agreed, d, want)
	}
}

// The reference every other mode is checked against comes first among the engine modes of
// every engine the command links: the in-process OPA (the kinds' Order says so).
func TestVerifyReferenceComesFirst(t *testing.T) {
	if modes := kinds.EngineModes(); len(modes) == 0 || modes[0] != "opa/inproc" {
		t.Errorf("engine modes %v: want the in-process OPA first, the reference", modes)
	}
}

// OPA, Cedar and OpenFGA, in every mode, give nop's and rbac's inputs the decisions their Go
// reference model expects: three engines, one set of rules.
func TestVerifyNopAndRBACAcrossEveryEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA, Cedar and OpenFGA processes")
	}
	var ws []*workload.Workload
	for _, name := range []string{"nop", "rbac"} {
		w, err := workload.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	rows, err := VerifyWorkloads(context.Background(), ws, EquivalenceOptions{Inputs: 30, Common: kinds.Common{TempDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	checkedBy := map[string]int{} // engine → rows that checked every input
	for _, r := range rows {
		if r.Skipped != "" {
			if _, written := engine.WrittenFor(kindOf(t, r.Kind).Engine, ws[0]); written && kindOf(t, r.Kind).Refuses(ws[0]) == "" && r.Workload == "nop" {
				t.Errorf("%s on nop: skipped (%s)", r.Target, r.Skipped)
			}
			continue
		}
		if r.Checked != 30 || r.Agreed != 30 {
			t.Errorf("%s on %s: %d checked, %d agreed (first %+v)", r.Target, r.Workload, r.Checked, r.Agreed, r.First)
			continue
		}
		checkedBy[kindOf(t, r.Kind).Engine]++
	}
	for _, e := range engine.Names() {
		_, nop := engine.WrittenFor(e, ws[0])
		_, rbac := engine.WrittenFor(e, ws[1])
		if !nop || !rbac {
			continue // an engine of the registry with no version of them: its rows say so
		}
		if checkedBy[e] < 2*2 { // two workloads, at least two modes each
			t.Errorf("engine %s: %d workload-mode rows agreed, want every mode of both workloads", e, checkedBy[e])
		}
	}
}

// A mode whose program is not installed here (a server its engine ships as a program of its
// own, looked for beside authzbench and on PATH) is a row that says so when every mode is
// verified by default, and the engine's other modes are still checked; named with a target, it
// is refused with the words that say how to get it. Every registered kind that needs such a
// program is tried, on a built-in workload its engine has a version of.
func TestVerifySaysWhatIsNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // nothing on it, nor beside this test binary
	tried := 0
	for _, k := range kinds.Kinds() {
		var notInstalled *kinds.NotInstalledError
		if _, err := kinds.New(k.Name, kinds.Common{}, nil); !errors.As(err, &notInstalled) {
			continue
		}
		tried++
		t.Run(k.Name, func(t *testing.T) {
			var w *workload.Workload
			for _, name := range workload.Names() {
				if b, err := workload.Builtin(name); err == nil && engine.For(k.Engine).Written(b) {
					w = b
					break
				}
			}
			if w == nil {
				t.Fatalf("no built-in workload has a version for %s", k.Engine)
			}
			w.Inputs = w.Inputs[:min(len(w.Inputs), 10)]
			rows, err := VerifyWorkloads(context.Background(), []*workload.Workload{w}, EquivalenceOptions{Common: kinds.Common{TempDir: t.TempDir()}})
			if err != nil {
				t.Fatal(err)
			}
			others := 0
			for _, r := range rows {
				switch {
				case r.Kind == k.Name:
					if !strings.HasPrefix(r.Skipped, "not installed: "+notInstalled.Missing) || r.Checked != 0 {
						t.Errorf("%s: %+v, want skipped as not installed (%s)", r.Target, r, notInstalled.Missing)
					}
				case sameEngine(r.Kind, k.Engine):
					others++
					if r.Skipped != "" || r.Checked != len(w.Inputs) || r.Agreed != r.Checked {
						t.Errorf("%s: %+v, want every input checked and agreed", r.Target, r)
					}
				}
			}
			if others == 0 {
				t.Errorf("rows %+v: no other mode of %s checked", rows, k.Engine)
			}
			_, err = VerifyWorkloads(context.Background(), []*workload.Workload{w}, EquivalenceOptions{Targets: []string{k.Name}, Common: kinds.Common{TempDir: t.TempDir()}})
			if err == nil || !strings.Contains(err.Error(), notInstalled.Err.Error()) {
				t.Errorf("%s named: %v, want it refused, saying how to get it: %v", k.Name, err, notInstalled.Err)
			}
		})
	}
	if tried == 0 {
		t.Fatal("no registered kind needs a program installed apart: the rule went untried")
	}
}

// sameEngine reports whether the kind called name runs the engine called engineName.
func sameEngine(name, engineName string) bool {
	k, err := kinds.LookupAny(name)
	return err == nil && k.Engine == engineName
}
