package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Fixtures for the user workload (user.go) live under testdata/user/inputs (the Rego policies
// beside them are OPA's, under internal/engine/opa/testdata).
func inputsFile(name string) string { return filepath.Join("testdata", "user", "inputs", name) }

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
