package opa

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

// Fixtures of users' Rego files live under testdata/user: inputs/*.jsonl and
// policies/<case>/*.rego; small apps under testdata/rego-apps.
func inputsFile(name string) string   { return filepath.Join("testdata", "user", "inputs", name) }
func policiesDir(name string) string  { return filepath.Join("testdata", "user", "policies", name) }
func policyFile(dir, f string) string { return filepath.Join(policiesDir(dir), f) }

func TestFromFilesQuery(t *testing.T) {
	inputs := inputsFile("valid.jsonl")
	for _, tc := range []struct {
		name      string
		spec      workload.UserSpec
		wantQuery string
		wantErr   string
	}{
		{"one package with allow", workload.UserSpec{Policies: []string{policyFile("one", "authz.rego")}, Inputs: inputs},
			"data.httpapi.authz.allow", ""},
		{"a directory with one package", workload.UserSpec{Policies: []string{policiesDir("one")}, Inputs: inputs},
			"data.httpapi.authz.allow", ""},
		{"one package over two files", workload.UserSpec{Policies: []string{policiesDir("split")}, Inputs: inputs},
			"data.shared.allow", ""},
		{"two packages in two files", workload.UserSpec{Policies: []string{policyFile("two", "b.rego"), policyFile("two", "a.rego")}, Inputs: inputs},
			"", "cannot derive the query: the policies define packages data.team.a, data.team.b; give the query to ask, such as data.team.a.allow"},
		{"two packages in a directory", workload.UserSpec{Policies: []string{policiesDir("two")}, Inputs: inputs},
			"", "cannot derive the query: the policies define packages data.team.a, data.team.b; give the query to ask, such as data.team.a.allow"},
		{"two packages from two directories", workload.UserSpec{Policies: []string{policiesDir("one"), policiesDir("noallow")}, Inputs: inputs},
			"", "cannot derive the query: the policies define packages data.httpapi.authz, data.quiet; give the query to ask, such as data.httpapi.authz.allow"},
		{"package without allow", workload.UserSpec{Policies: []string{policiesDir("noallow")}, Inputs: inputs},
			"", "cannot derive the query: package data.quiet has no rule named allow; give the query to ask"},
		{"no Rego at all", workload.UserSpec{Policies: []string{policiesDir("none")}, Inputs: inputs},
			"", "policy " + policiesDir("none") + ": a policy directory with no .rego file in it"},
		{"query without data. prefix", workload.UserSpec{Policies: []string{policiesDir("one")}, Inputs: inputs, Query: "httpapi.authz.allow"},
			"", `query "httpapi.authz.allow": want a reference under data, such as data.authz.allow`},
		{"query without data. prefix and no policy", workload.UserSpec{Inputs: inputs, Query: "authz.allow"},
			"", `query "authz.allow": want a reference under data, such as data.authz.allow`},
		{"explicit query picks one of two packages", workload.UserSpec{Policies: []string{policiesDir("two")}, Inputs: inputs, Query: "data.team.b.allow"},
			"data.team.b.allow", ""},
		{"explicit query for a package without allow", workload.UserSpec{Policies: []string{policiesDir("noallow")}, Inputs: inputs, Query: "data.quiet.permit"},
			"data.quiet.permit", ""},
		// Tests beside the policy are not a second package to choose from: a *_test.rego file,
		// and a package of test_ rules only in a file named otherwise.
		{"tests beside the policy", workload.UserSpec{Policies: []string{policyFile("one", "authz.rego"), policyFile("tests", "authz_test.rego"),
			policyFile("tests", "checks.rego")}, Inputs: inputs}, "data.httpapi.authz.allow", ""},
		// A package with a test_ rule and a rule of its own is not a test package.
		{"a package with a test_ rule beside others", workload.UserSpec{Policies: []string{policyFile("one", "authz.rego"), policyFile("mixed", "mixed.rego")}, Inputs: inputs},
			"", "cannot derive the query: the policies define packages data.httpapi.authz, data.mixed; give the query to ask, such as data.httpapi.authz.allow"},
		// A target that brings its own policy (the http target) needs inputs only.
		{"no policy", workload.UserSpec{Inputs: inputs}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := workload.FromFiles(tc.spec)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w.Query != tc.wantQuery {
				t.Errorf("query %q, want %q", w.Query, tc.wantQuery)
			}
			if len(w.Inputs) != 5 {
				t.Errorf("%d inputs, want the 5 of valid.jsonl", len(w.Inputs))
			}
			if !reflect.DeepEqual(w.PolicyPaths, tc.spec.Policies) || w.Policies != nil || w.Data != nil {
				t.Errorf("policy paths %v (in memory %v, data %v), want the paths given and nothing in memory", w.PolicyPaths, w.Policies, w.Data)
			}
		})
	}
}

func TestFromFilesRejects(t *testing.T) {
	inputs := inputsFile("valid.jsonl")
	for _, tc := range []struct {
		name string
		spec workload.UserSpec
		// want is the start of the error.
		want string
	}{
		{"no inputs", workload.UserSpec{Policies: []string{policiesDir("one")}},
			`a user workload needs inputs FILE.jsonl (one {"input": ..., "expect": true|false} per line), or requests FILE.jsonl for Cedar`},
		{"missing policy", workload.UserSpec{Name: "mine", Policies: []string{policyFile("one", "absent.rego")}, Inputs: inputs},
			"policy " + policyFile("one", "absent.rego") + ": no such file"},
		{"missing data", workload.UserSpec{Name: "mine", Policies: []string{policiesDir("one")}, Data: []string{"absent.json"}, Inputs: inputs},
			"data absent.json: no such file"},
		{"policy that does not parse", workload.UserSpec{Policies: []string{policiesDir("bad")}, Inputs: inputs}, "load policies: "},
		{"bad inputs", workload.UserSpec{Policies: []string{policiesDir("one")}, Inputs: inputsFile("typo.jsonl")},
			inputsFile("typo.jsonl") + ":1: "},
		{"missing inputs", workload.UserSpec{Policies: []string{policiesDir("one")}, Inputs: inputsFile("absent.jsonl")}, "inputs " + inputsFile("absent.jsonl") + ": no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := workload.FromFiles(tc.spec)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("workload.FromFiles = %v, %v; want an error starting %q", w, err, tc.want)
			}
		})
	}
}

func TestFromFilesNameAndData(t *testing.T) {
	// Without a name, the workload is named after its first policy, a directory or a file
	// without its extension.
	for _, tc := range []struct {
		name, policy, want string
	}{{"", policiesDir("one"), "one"}, {"", policyFile("one", "authz.rego"), "authz"}, {"mine", policiesDir("one"), "mine"}} {
		t.Run(fmt.Sprintf("name %q, policy %s", tc.name, tc.policy), func(t *testing.T) {
			spec := workload.UserSpec{Name: tc.name, Policies: []string{tc.policy}, Data: []string{policyFile("none", "data.json")},
				Inputs: inputsFile("crlf.jsonl")}
			w, err := workload.FromFiles(spec)
			if err != nil {
				t.Fatal(err)
			}
			if w.Name != tc.want {
				t.Errorf("name %q, want %q", w.Name, tc.want)
			}
			if !reflect.DeepEqual(w.DataPaths, spec.Data) {
				t.Errorf("data paths %v, want %v", w.DataPaths, spec.Data)
			}
			allow, deny, unverified := w.Counts()
			if allow != 1 || deny != 0 || unverified != 1 {
				t.Errorf("counts %d/%d/%d, want 1/0/1", allow, deny, unverified)
			}
		})
	}
}

// The small apps under testdata/rego-apps are loaded as a user loads them: the query derived
// (past the tests beside the policy), v0 syntax read only when asked for, the decision an
// undefined result stands for recorded, and the expectations worked out by hand kept.
func TestRegoApps(t *testing.T) {
	app := func(name string) string { return filepath.Join("testdata", "rego-apps", name) }
	for _, tc := range []struct {
		name      string
		spec      workload.UserSpec
		query     string
		expects   []workload.Expect
		undefined workload.Expect
		err       string // the start of the error's last line, when it must fail
	}{
		{name: "v0", spec: workload.UserSpec{Policies: []string{app("v0")}, Inputs: filepath.Join(app("v0"), "inputs.jsonl"), V0Compatible: true},
			query: "data.v0app.allow", expects: []workload.Expect{workload.ExpectAllow, workload.ExpectAllow, workload.ExpectDeny, workload.ExpectDeny}},
		{name: "v0 without --v0-compatible", spec: workload.UserSpec{Policies: []string{app("v0")}, Inputs: filepath.Join(app("v0"), "inputs.jsonl")},
			err: "the policy looks like Rego v0 (OPA before 1.0): add --v0-compatible"},
		{name: "nodefault", spec: workload.UserSpec{Policies: []string{app("nodefault")}, Inputs: filepath.Join(app("nodefault"), "inputs.jsonl"), UndefinedAs: "deny"},
			query: "data.nodefault.allow", expects: []workload.Expect{workload.ExpectAllow, workload.ExpectAllow, workload.ExpectDeny, workload.ExpectDeny}, undefined: workload.ExpectDeny},
		{name: "nodefault, bad undefined_as", spec: workload.UserSpec{Policies: []string{app("nodefault")}, Inputs: filepath.Join(app("nodefault"), "inputs.jsonl"), UndefinedAs: "no"},
			err: `undefined_as "no": want deny or allow`},
		{name: "withtests", spec: workload.UserSpec{Policies: []string{app("withtests")}, Data: []string{filepath.Join(app("withtests"), "data.json")},
			Inputs: filepath.Join(app("withtests"), "inputs.jsonl")},
			query: "data.withtests.allow", expects: []workload.Expect{workload.ExpectAllow, workload.ExpectDeny, workload.ExpectDeny}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := workload.FromFiles(tc.spec)
			if tc.err != "" {
				if err == nil {
					t.Fatalf("loaded; want an error saying %q", tc.err)
				}
				lines := strings.Split(err.Error(), "\n")
				if last := lines[len(lines)-1]; !strings.HasPrefix(last, tc.err) {
					t.Fatalf("error ends %q; want %q", last, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w.Query != tc.query || regoV0(w) != tc.spec.V0Compatible || w.UndefinedAs != tc.undefined {
				t.Errorf("query %s, v0 %t, undefined as %s; want %s, %t, %s", w.Query, regoV0(w), w.UndefinedAs, tc.query, tc.spec.V0Compatible, tc.undefined)
			}
			var got []workload.Expect
			for _, in := range w.Inputs {
				got = append(got, in.Expect)
			}
			if !reflect.DeepEqual(got, tc.expects) {
				t.Errorf("expects %v, want %v", got, tc.expects)
			}
			// Named after the policy's directory, the first input after the comment line above it.
			if w.Name != tc.name || !strings.HasSuffix(w.Inputs[0].Source, "inputs.jsonl:2") {
				t.Errorf("name %q, first input from %s", w.Name, w.Inputs[0].Source)
			}
		})
	}
}

func TestExportRoundTrip(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := workload.Export(w, dir); err != nil {
		t.Fatal(err)
	}
	inputs, err := workload.ReadInputs(filepath.Join(dir, "inputs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != len(w.Inputs) || inputs[7].Expect != w.Inputs[7].Expect || string(inputs[7].JSON) != string(w.Inputs[7].JSON) {
		t.Errorf("exported inputs differ from the workload's")
	}
	u, err := workload.FromFiles(workload.UserSpec{Policies: []string{filepath.Join(dir, "rbac.rego")}, Data: []string{filepath.Join(dir, "data.json")},
		Inputs: filepath.Join(dir, "inputs.jsonl")})
	if err != nil || u.Query != w.Query {
		t.Errorf("exported files as a user workload: %v %v", u, err)
	}
}
