package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Fixtures for the user workload (user.go) live under testdata/user: inputs/*.jsonl and
// policies/<case>/*.rego.
func inputsFile(name string) string   { return filepath.Join("testdata", "user", "inputs", name) }
func policiesDir(name string) string  { return filepath.Join("testdata", "user", "policies", name) }
func policyFile(dir, f string) string { return filepath.Join(policiesDir(dir), f) }

func TestReadInputsFixtures(t *testing.T) {
	type want struct {
		json   string
		expect Expect
	}
	for _, tc := range []struct {
		file string
		want []want
	}{
		{"valid.jsonl", []want{
			{`{"user":"ann","action":"read"}`, ExpectAllow},
			{`{"user":"bob","action":"write"}`, ExpectDeny},
			{`{"user":"cy"}`, Unverified},
			{`[1,2,3]`, ExpectAllow},
			{`"just a string"`, ExpectDeny},
		}},
		{"crlf.jsonl", []want{
			{`{"user":"ann"}`, ExpectAllow},
			{`{"user":"bob"}`, Unverified},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			inputs, err := ReadInputs(inputsFile(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			for _, in := range inputs {
				got = append(got, want{string(in.JSON), in.Expect})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("inputs\n %v\nwant\n %v", got, tc.want)
			}
		})
	}
}

func TestReadInputsErrorsCarryPathAndLine(t *testing.T) {
	const form = `a JSON object {"input": {...}, "expect": true|false}`
	for _, tc := range []struct {
		file string
		// want holds one entry per error, in order: the exact text, or its start when it ends
		// with "…" (what follows comes from encoding/json).
		want []string
	}{
		{"not_json.jsonl", []string{"not_json.jsonl:2: not valid JSON: invalid character 'o' in literal null (expecting 'u')"}},
		{"missing_input.jsonl", []string{`missing_input.jsonl:1: missing "input"`}},
		{"input_null.jsonl", []string{`input_null.jsonl:1: missing "input"`}},
		{"expect_string.jsonl", []string{"expect_string.jsonl:1: key `expect`: want true or false, got a string"}},
		{"expect_number.jsonl", []string{"expect_number.jsonl:1: key `expect`: want true or false, got a number"}},
		{"typo.jsonl", []string{`typo.jsonl:1: unknown key "exepct"`}},
		{"two_values.jsonl", []string{`two_values.jsonl:1: more than one JSON value on the line, or text after it: "{\"input\": {}}"`}},
		{"array.jsonl", []string{"array.jsonl:1: want " + form + ", got a list"}},
		{"empty.jsonl", []string{"empty.jsonl: no inputs"}},
		{"comments_only.jsonl", []string{"comments_only.jsonl: no inputs"}},
		// Every bad line at once, good lines and blank lines counted in the numbering.
		{"several.jsonl", []string{
			"several.jsonl:2: not valid JSON: invalid character 'o' looking for beginning of value",
			"several.jsonl:3: key `expect`: want true or false, got a string",
			`several.jsonl:5: unknown key "exepct"`,
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := inputsFile(tc.file)
			inputs, err := ReadInputs(path)
			if err == nil {
				t.Fatalf("accepted %d inputs", len(inputs))
			}
			if inputs != nil {
				t.Errorf("%d inputs returned beside the error", len(inputs))
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("%d errors, want %d:\n%s", len(lines), len(tc.want), err)
			}
			for i, w := range tc.want {
				w = filepath.Join(filepath.Dir(path), w)
				if prefix, ok := strings.CutSuffix(w, "…"); ok {
					if !strings.HasPrefix(lines[i], prefix) {
						t.Errorf("error %d\n %s\nwant it to start\n %s", i+1, lines[i], prefix)
					}
					continue
				}
				if lines[i] != w {
					t.Errorf("error %d\n %s\nwant\n %s", i+1, lines[i], w)
				}
			}
		})
	}
}

func TestReadInputsMissingFile(t *testing.T) {
	path := inputsFile("absent.jsonl")
	_, err := ReadInputs(path)
	if err == nil || err.Error() != "read inputs "+path+": no such file" {
		t.Errorf("err = %v", err)
	}
}

// TestReadInputsStopsAfterTwentyErrors: a file in the wrong format altogether gives twenty
// errors and a note, not one per line.
func TestReadInputsStopsAfterTwentyErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(path, bytes.Repeat([]byte("user,action\n"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadInputs(path)
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 21 || lines[20] != "too many errors; stopping" || !strings.HasPrefix(lines[19], path+":20: ") {
		t.Errorf("%d error lines, last two %q; want 20 errors then \"too many errors; stopping\"", len(lines), lines[len(lines)-2:])
	}
}

// TestReadInputsRejectsTrailingText: json.Decoder.More reports false before a closing '}' or
// ']', so text after the object that starts with one slips through the "more than one JSON
// value" check.
func TestReadInputsRejectsTrailingText(t *testing.T) {
	for _, file := range []string{"trailing_brace.jsonl", "trailing_bracket.jsonl"} {
		t.Run(file, func(t *testing.T) {
			if inputs, err := ReadInputs(inputsFile(file)); err == nil {
				t.Errorf("accepted %d inputs from a line with trailing text", len(inputs))
			}
		})
	}
}

func TestFromFilesQuery(t *testing.T) {
	inputs := inputsFile("valid.jsonl")
	for _, tc := range []struct {
		name      string
		spec      UserSpec
		wantQuery string
		wantErr   string
	}{
		{"one package with allow", UserSpec{Policies: []string{policyFile("one", "authz.rego")}, Inputs: inputs},
			"data.httpapi.authz.allow", ""},
		{"a directory with one package", UserSpec{Policies: []string{policiesDir("one")}, Inputs: inputs},
			"data.httpapi.authz.allow", ""},
		{"one package over two files", UserSpec{Policies: []string{policiesDir("split")}, Inputs: inputs},
			"data.shared.allow", ""},
		{"two packages in two files", UserSpec{Policies: []string{policyFile("two", "b.rego"), policyFile("two", "a.rego")}, Inputs: inputs},
			"", "cannot derive the query: the policies define packages data.team.a, data.team.b; give the query to ask, such as data.team.a.allow"},
		{"two packages in a directory", UserSpec{Policies: []string{policiesDir("two")}, Inputs: inputs},
			"", "cannot derive the query: the policies define packages data.team.a, data.team.b; give the query to ask, such as data.team.a.allow"},
		{"two packages from two directories", UserSpec{Policies: []string{policiesDir("one"), policiesDir("noallow")}, Inputs: inputs},
			"", "cannot derive the query: the policies define packages data.httpapi.authz, data.quiet; give the query to ask, such as data.httpapi.authz.allow"},
		{"package without allow", UserSpec{Policies: []string{policiesDir("noallow")}, Inputs: inputs},
			"", "cannot derive the query: package data.quiet has no rule named allow; give the query to ask"},
		{"no Rego at all", UserSpec{Policies: []string{policiesDir("none")}, Inputs: inputs},
			"", "policy " + policiesDir("none") + ": a policy directory with no .rego file in it"},
		{"query without data. prefix", UserSpec{Policies: []string{policiesDir("one")}, Inputs: inputs, Query: "httpapi.authz.allow"},
			"", `query "httpapi.authz.allow": want a reference under data, such as data.authz.allow`},
		{"query without data. prefix and no policy", UserSpec{Inputs: inputs, Query: "authz.allow"},
			"", `query "authz.allow": want a reference under data, such as data.authz.allow`},
		{"explicit query picks one of two packages", UserSpec{Policies: []string{policiesDir("two")}, Inputs: inputs, Query: "data.team.b.allow"},
			"data.team.b.allow", ""},
		{"explicit query for a package without allow", UserSpec{Policies: []string{policiesDir("noallow")}, Inputs: inputs, Query: "data.quiet.permit"},
			"data.quiet.permit", ""},
		// Tests beside the policy are not a second package to choose from: a *_test.rego file,
		// and a package of test_ rules only in a file named otherwise.
		{"tests beside the policy", UserSpec{Policies: []string{policyFile("one", "authz.rego"), policyFile("tests", "authz_test.rego"),
			policyFile("tests", "checks.rego")}, Inputs: inputs}, "data.httpapi.authz.allow", ""},
		// A package with a test_ rule and a rule of its own is not a test package.
		{"a package with a test_ rule beside others", UserSpec{Policies: []string{policyFile("one", "authz.rego"), policyFile("mixed", "mixed.rego")}, Inputs: inputs},
			"", "cannot derive the query: the policies define packages data.httpapi.authz, data.mixed; give the query to ask, such as data.httpapi.authz.allow"},
		// A target that brings its own policy (the http target) needs inputs only.
		{"no policy", UserSpec{Inputs: inputs}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := FromFiles(tc.spec)
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
		spec UserSpec
		// want is the start of the error.
		want string
	}{
		{"no inputs", UserSpec{Policies: []string{policiesDir("one")}},
			`a user workload needs inputs FILE.jsonl (one {"input": ..., "expect": true|false} per line), or requests FILE.jsonl for Cedar`},
		{"missing policy", UserSpec{Name: "mine", Policies: []string{policyFile("one", "absent.rego")}, Inputs: inputs},
			"policy " + policyFile("one", "absent.rego") + ": no such file"},
		{"missing data", UserSpec{Name: "mine", Policies: []string{policiesDir("one")}, Data: []string{"absent.json"}, Inputs: inputs},
			"data absent.json: no such file"},
		{"policy that does not parse", UserSpec{Policies: []string{policiesDir("bad")}, Inputs: inputs}, "load policies: "},
		{"bad inputs", UserSpec{Policies: []string{policiesDir("one")}, Inputs: inputsFile("typo.jsonl")},
			inputsFile("typo.jsonl") + ":1: "},
		{"missing inputs", UserSpec{Policies: []string{policiesDir("one")}, Inputs: inputsFile("absent.jsonl")}, "inputs " + inputsFile("absent.jsonl") + ": no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := FromFiles(tc.spec)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("FromFiles = %v, %v; want an error starting %q", w, err, tc.want)
			}
		})
	}
}

// TestCheckNamesTheSetting: a setting that is missing or malformed is reported before any file
// is read, naming the setting as a scenario file does; Named says the same in a caller's words
// (the command line's flags), every setting the message names renamed. (Cedar's settings are
// internal/engine/cedar's to check: see its TestCheckNamesTheSetting.)
func TestCheckNamesTheSetting(t *testing.T) {
	flag := func(setting string) string { return "--" + strings.ReplaceAll(setting, "_", "-") }
	absent := inputsFile("absent.jsonl") // never read: Check reads no file
	for _, tc := range []struct {
		name          string
		spec          UserSpec
		setting       string
		want, flagged string
	}{
		{"no inputs", UserSpec{Policies: []string{"p.rego"}}, "inputs",
			`a user workload needs inputs FILE.jsonl (one {"input": ..., "expect": true|false} per line), or requests FILE.jsonl for Cedar`,
			`a user workload needs --inputs FILE.jsonl (one {"input": ..., "expect": true|false} per line), or --requests FILE.jsonl for Cedar`},
		{"undefined as what", UserSpec{Inputs: absent, UndefinedAs: "maybe"}, "undefined_as",
			`undefined_as "maybe": want deny or allow`, `--undefined-as "maybe": want deny or allow`},
		{"query outside data", UserSpec{Inputs: absent, Query: "authz.allow"}, "query",
			`query "authz.allow": want a reference under data, such as data.authz.allow`,
			`--query "authz.allow": want a reference under data, such as data.authz.allow`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Check()
			var se *SettingError
			if !errors.As(err, &se) {
				t.Fatalf("Check = %v, want a SettingError", err)
			}
			if se.Setting != tc.setting || err.Error() != tc.want || se.Named(flag) != tc.flagged {
				t.Errorf("setting %q\n %s\n %s\nwant %q\n %s\n %s", se.Setting, err, se.Named(flag), tc.setting, tc.want, tc.flagged)
			}
			// FromFiles reports the same, before it reads a file.
			if _, err := FromFiles(tc.spec); err == nil || err.Error() != tc.want {
				t.Errorf("FromFiles = %v, want %q", err, tc.want)
			}
		})
	}
	if err := (UserSpec{Inputs: absent, Query: "data.x.allow", UndefinedAs: "deny"}).Check(); err != nil {
		t.Errorf("a complete spec: %v", err)
	}
}

func TestFromFilesNameAndData(t *testing.T) {
	// Without a name, the workload is named after its first policy, a directory or a file
	// without its extension.
	for _, tc := range []struct {
		name, policy, want string
	}{{"", policiesDir("one"), "one"}, {"", policyFile("one", "authz.rego"), "authz"}, {"mine", policiesDir("one"), "mine"}} {
		t.Run(fmt.Sprintf("name %q, policy %s", tc.name, tc.policy), func(t *testing.T) {
			spec := UserSpec{Name: tc.name, Policies: []string{tc.policy}, Data: []string{policyFile("none", "data.json")},
				Inputs: inputsFile("crlf.jsonl")}
			w, err := FromFiles(spec)
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
		{name: "nodefault, bad undefined_as", spec: UserSpec{Policies: []string{app("nodefault")}, Inputs: filepath.Join(app("nodefault"), "inputs.jsonl"), UndefinedAs: "no"},
			err: `undefined_as "no": want deny or allow`},
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

// FuzzReadInputs: ReadInputs never panics, and what it accepts is compact JSON with a defined
// expectation.
func FuzzReadInputs(f *testing.F) {
	for _, name := range []string{"valid.jsonl", "crlf.jsonl", "several.jsonl", "two_values.jsonl", "trailing_brace.jsonl", "empty.jsonl"} {
		b, err := os.ReadFile(inputsFile(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"input": {"a": [1, {"b": null}]}, "expect": false}` + "\n# x\n"))
	f.Add([]byte("{\"input\": 1e400}\n"))
	f.Add([]byte("\xef\xbb\xbf{\"input\": {}}\n"))
	f.Add([]byte(`{"input": {"a": 1}, "expect": true}` + "\n"))
	f.Add([]byte("# c\n\n{\"input\": []}\n"))
	f.Add([]byte(`{"input": null}`))
	path := filepath.Join(f.TempDir(), "inputs.jsonl")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		inputs, err := ReadInputs(path)
		if err != nil {
			if !strings.HasPrefix(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(inputs) == 0 {
			t.Fatal("no error and no inputs")
		}
		if lines := bytes.Count(b, []byte("\n")) + 1; len(inputs) > lines {
			t.Fatalf("%d inputs from %d lines", len(inputs), lines)
		}
		for i, in := range inputs {
			if !json.Valid(in.JSON) {
				t.Fatalf("input %d is not valid JSON: %q", i, in.JSON)
			}
			var c bytes.Buffer
			if err := json.Compact(&c, in.JSON); err != nil || !bytes.Equal(c.Bytes(), in.JSON) {
				t.Fatalf("input %d is not compact: %q", i, in.JSON)
			}
			if in.Expect != Unverified && in.Expect != ExpectAllow && in.Expect != ExpectDeny {
				t.Fatalf("input %d has expectation %d", i, in.Expect)
			}
		}
	})
}
