package workload

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadInputs(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.jsonl", `{"input": {"user": "ann"}, "expect": true}

# a comment
{"input": {"user": "bob"}, "expect": false}
{"input": {"user": "cy"}}
`)
	inputs, err := ReadInputs(good)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		json   string
		expect Expect
	}{{`{"user":"ann"}`, ExpectAllow}, {`{"user":"bob"}`, ExpectDeny}, {`{"user":"cy"}`, Unverified}}
	if len(inputs) != len(want) {
		t.Fatalf("%d inputs, want %d", len(inputs), len(want))
	}
	for i, w := range want {
		if string(inputs[i].JSON) != w.json || inputs[i].Expect != w.expect {
			t.Errorf("input %d: %s %s, want %s %s", i, inputs[i].JSON, inputs[i].Expect, w.json, w.expect)
		}
	}
}

func TestReadInputsErrorsNameTheLine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"not json", "{\"input\": {}}\nnot json\n", "bad.jsonl:2: not a JSON object"},
		{"missing input", "{\"expect\": true}\n", `bad.jsonl:1: missing "input"`},
		{"expect not boolean", "{\"input\": {}, \"expect\": \"yes\"}\n", "bad.jsonl:1:"},
		{"typo", "{\"input\": {}, \"exepct\": true}\n", `bad.jsonl:1: not a JSON object of the form {"input": {...}, "expect": true|false}: json: unknown field "exepct"`},
		{"two values", "{\"input\": {}} {\"input\": {}}\n", "bad.jsonl:1: more than one JSON value"},
		{"empty", "\n# nothing\n", "bad.jsonl: no inputs"},
		{"several", "x\n{\"input\": {}}\ny\n", "bad.jsonl:3:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadInputs(writeFile(t, dir, "bad.jsonl", tc.content))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := ReadInputs(filepath.Join(dir, "absent.jsonl")); err == nil || !strings.Contains(err.Error(), "absent.jsonl") {
		t.Errorf("missing file: %v", err)
	}
}

func TestQueryDerivation(t *testing.T) {
	dir := t.TempDir()
	inputs := writeFile(t, dir, "in.jsonl", `{"input": {}, "expect": true}`+"\n")
	one := writeFile(t, dir, "one.rego", "package httpapi.authz\n\nallow if input.user == \"ann\"\n")
	other := writeFile(t, dir, "other.rego", "package other\n\nallow := true\n")
	noAllow := writeFile(t, dir, "noallow.rego", "package quiet\n\npermit := true\n")

	w, err := FromFiles(UserSpec{Policies: []string{one}, Inputs: inputs})
	if err != nil || w.Query != "data.httpapi.authz.allow" || w.Name != "one" {
		t.Errorf("one package: %v %v", w, err)
	}
	_, err = FromFiles(UserSpec{Policies: []string{one, other}, Inputs: inputs})
	if err == nil || !strings.Contains(err.Error(), "data.httpapi.authz, data.other") {
		t.Errorf("two packages: %v", err)
	}
	_, err = FromFiles(UserSpec{Policies: []string{noAllow}, Inputs: inputs})
	if err == nil || !strings.Contains(err.Error(), "no rule named allow") {
		t.Errorf("no allow: %v", err)
	}
	_, err = FromFiles(UserSpec{Policies: []string{one}, Inputs: inputs, Query: "httpapi.authz.allow"})
	if err == nil || !strings.Contains(err.Error(), "want a reference under data") {
		t.Errorf("query without data.: %v", err)
	}
	w, err = FromFiles(UserSpec{Policies: []string{one, other}, Inputs: inputs, Query: "data.other.allow"})
	if err != nil || w.Query != "data.other.allow" {
		t.Errorf("explicit query: %v %v", w, err)
	}
	if _, err := FromFiles(UserSpec{Policies: []string{filepath.Join(dir, "nope.rego")}, Inputs: inputs}); err == nil {
		t.Error("a missing policy file was accepted")
	}
	// Tests beside the policy are not a second package to choose from: a *_test.rego file, and
	// a package of test_ rules only in a file named otherwise.
	testFile := writeFile(t, dir, "one_test.rego", "package httpapi.authz_test\n\ntest_ann if data.httpapi.authz.allow with input.user as \"ann\"\n")
	testPkg := writeFile(t, dir, "checks.rego", "package checks\n\ntest_bob if not data.httpapi.authz.allow with input.user as \"bob\"\n")
	w, err = FromFiles(UserSpec{Policies: []string{one, testFile, testPkg}, Inputs: inputs})
	if err != nil || w.Query != "data.httpapi.authz.allow" {
		t.Errorf("policy with tests beside it: %v %v", w, err)
	}
	// A package with a test_ rule and a rule of its own is not a test package.
	mixed := writeFile(t, dir, "mixed.rego", "package mixed\n\nallow := true\n\ntest_x if allow\n")
	if _, err := FromFiles(UserSpec{Policies: []string{one, mixed}, Inputs: inputs}); err == nil || !strings.Contains(err.Error(), "data.mixed") {
		t.Errorf("a package with a test_ rule beside others was left out: %v", err)
	}
}

// The small apps under testdata/rego-apps are loaded as a user loads them: the query derived
// (past the tests beside the policy), v0 syntax read only when asked for, the decision an
// undefined result stands for recorded, and the expectations worked out by hand kept.
func TestRegoApps(t *testing.T) {
	app := func(name string) string { return filepath.Join("testdata", "rego-apps", name) }
	for _, tc := range []struct {
		name      string
		spec      UserSpec
		query     string
		expects   []Expect
		undefined Expect
		err       string // the start of the error's last line, when it must fail
	}{
		{name: "v0", spec: UserSpec{Policies: []string{app("v0")}, Inputs: filepath.Join(app("v0"), "inputs.jsonl"), V0Compatible: true},
			query: "data.v0app.allow", expects: []Expect{ExpectAllow, ExpectAllow, ExpectDeny, ExpectDeny}},
		{name: "v0 without --v0-compatible", spec: UserSpec{Policies: []string{app("v0")}, Inputs: filepath.Join(app("v0"), "inputs.jsonl")},
			err: "the policy looks like Rego v0 (OPA before 1.0): add --v0-compatible"},
		{name: "nodefault", spec: UserSpec{Policies: []string{app("nodefault")}, Inputs: filepath.Join(app("nodefault"), "inputs.jsonl"), UndefinedAs: "deny"},
			query: "data.nodefault.allow", expects: []Expect{ExpectAllow, ExpectAllow, ExpectDeny, ExpectDeny}, undefined: ExpectDeny},
		{name: "nodefault, bad --undefined-as", spec: UserSpec{Policies: []string{app("nodefault")}, Inputs: filepath.Join(app("nodefault"), "inputs.jsonl"), UndefinedAs: "no"},
			err: `--undefined-as "no": want deny or allow`},
		{name: "withtests", spec: UserSpec{Policies: []string{app("withtests")}, Data: []string{filepath.Join(app("withtests"), "data.json")},
			Inputs: filepath.Join(app("withtests"), "inputs.jsonl")},
			query: "data.withtests.allow", expects: []Expect{ExpectAllow, ExpectDeny, ExpectDeny}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := FromFiles(tc.spec)
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
			if w.Query != tc.query || w.RegoV0 != tc.spec.V0Compatible || w.UndefinedAs != tc.undefined {
				t.Errorf("query %s, v0 %t, undefined as %s; want %s, %t, %s", w.Query, w.RegoV0, w.UndefinedAs, tc.query, tc.spec.V0Compatible, tc.undefined)
			}
			var got []Expect
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
	w, err := Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Export(w, dir); err != nil {
		t.Fatal(err)
	}
	inputs, err := ReadInputs(filepath.Join(dir, "inputs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != len(w.Inputs) || inputs[7].Expect != w.Inputs[7].Expect || string(inputs[7].JSON) != string(w.Inputs[7].JSON) {
		t.Errorf("exported inputs differ from the workload's")
	}
	u, err := FromFiles(UserSpec{Policies: []string{filepath.Join(dir, "rbac.rego")}, Data: []string{filepath.Join(dir, "data.json")},
		Inputs: filepath.Join(dir, "inputs.jsonl")})
	if err != nil || u.Query != w.Query {
		t.Errorf("exported files as a user workload: %v %v", u, err)
	}
}

func FuzzReadInputs(f *testing.F) {
	f.Add([]byte(`{"input": {"a": 1}, "expect": true}` + "\n"))
	f.Add([]byte("# c\n\n{\"input\": []}\n"))
	f.Add([]byte(`{"input": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "f.jsonl")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		inputs, err := ReadInputs(p)
		if err != nil {
			return
		}
		if len(inputs) == 0 {
			t.Fatal("no error and no inputs")
		}
		for _, in := range inputs {
			if len(in.JSON) == 0 {
				t.Fatal("an input with an empty document")
			}
		}
	})
}
