package openfga

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A good store file, line by line, that each bad case changes in one place.
const goodStore = `name: bad
model_file: model.fga
tuples:
  - user: user:anne
    relation: member
    object: group:eng
tests:
  - name: one
    check:
      - user: user:anne
        object: group:eng
        assertions:
          member: true
`

// TestBadFiles: every mistake is named with its file and line before anything runs.
func TestBadFiles(t *testing.T) {
	model, err := os.ReadFile("testdata/model.fga")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		change func(string) string
		files  map[string]string // more files beside the store file
		want   []string          // in the error, "store.fga.yaml" meaning the store file's path
		atRun  bool              // found when the store is written (OpenFGA's own rule), not when read
	}{
		{name: "unknown top key", change: func(s string) string { return strings.Replace(s, "name: bad", "nmae: bad", 1) },
			want: []string{"store.fga.yaml:1:", `"nmae"`}},
		{name: "unknown tuple key", change: func(s string) string { return strings.Replace(s, "    object: group:eng", "    objet: group:eng", 1) },
			want: []string{"store.fga.yaml:6:", `"objet"`}},
		{name: "unknown test key", change: func(s string) string { return strings.Replace(s, "    check:", "    checks:", 1) },
			want: []string{"store.fga.yaml:9:", `"checks"`}},
		{name: "unknown check key", change: func(s string) string { return strings.Replace(s, "        assertions:", "        assertion:", 1) },
			want: []string{"store.fga.yaml:12:", `"assertion"`}},
		{name: "assertion not a boolean", change: func(s string) string { return strings.Replace(s, "member: true", "member: yes please", 1) },
			want: []string{"store.fga.yaml:13:", "member", "true or false"}},
		{name: "user and users", change: func(s string) string {
			return strings.Replace(s, "      - user: user:anne\n", "      - user: user:anne\n        users: [user:bob]\n", 1)
		}, want: []string{"store.fga.yaml:10:", "both user and users"}},
		{name: "tuple of an undefined type", change: func(s string) string { return strings.Replace(s, "object: group:eng", "object: team:eng", 1) },
			want: []string{"store.fga.yaml:4:", "team"}, atRun: true},
		{name: "a tuple twice", change: func(s string) string { return strings.Replace(s, "tests:", "tuple_file: t.yaml\ntests:", 1) },
			files: map[string]string{"t.yaml": "- user: user:bob\n  relation: member\n  object: group:eng\n- user: user:anne\n  relation: member\n  object: group:eng\n"},
			want:  []string{"t.yaml:4:", "group:eng#member@user:anne"}, atRun: true},
		{name: "malformed DSL inline", change: func(s string) string {
			return strings.Replace(s, "model_file: model.fga", "model: |\n  model\n    schema 1.1\n  type user\n    relations\n      define owner [user]", 1)
		}, want: []string{"store.fga.yaml:7:", "syntax error"}},
		{name: "malformed DSL in model_file", change: func(s string) string { return strings.Replace(s, "model.fga", "broken.fga", 1) },
			files: map[string]string{"broken.fga": "model\n  schema 1.1\ntype user\n  relations\n    define owner [user]\n"},
			want:  []string{"broken.fga:5:", "syntax error"}},
		{name: "tuple_file missing", change: func(s string) string { return strings.Replace(s, "tests:", "tuple_file: gone.yaml\ntests:", 1) },
			want: []string{"store.fga.yaml:7:", "gone.yaml", "no such file"}},
		{name: "tuple_file of unknown form", change: func(s string) string { return strings.Replace(s, "tests:", "tuple_files: [t.txt]\ntests:", 1) },
			files: map[string]string{"t.txt": "user:anne member group:eng\n"},
			want:  []string{"store.fga.yaml:7:", "t.txt", `".txt"`}},
		{name: "tuple_file with a bad key", change: func(s string) string { return strings.Replace(s, "tests:", "tuple_file: t.yaml\ntests:", 1) },
			files: map[string]string{"t.yaml": "- user: user:bob\n  relation: member\n  object: group:eng\n- user: user:carol\n  relaton: member\n  object: group:eng\n"},
			want:  []string{"t.yaml:5:", `"relaton"`}},
		{name: "csv tuple file with a bad condition", change: func(s string) string { return strings.Replace(s, "tests:", "tuple_file: t.csv\ntests:", 1) },
			files: map[string]string{"t.csv": "user_type,user_id,relation,object_type,object_id,condition_name,condition_context\nuser,bob,member,group,eng,,\nuser,carol,viewer,document,memo,non_expired_grant,{oops\n"},
			want:  []string{"t.csv:3:", "condition_context"}},
		{name: "model and model_file", change: func(s string) string {
			return strings.Replace(s, "name: bad", "name: bad\nmodel: |\n  model\n    schema 1.1\n  type user", 1)
		},
			want: []string{"store.fga.yaml:2:", "both model and model_file"}},
		{name: "only list queries", change: func(s string) string {
			return strings.Replace(s, "    check:\n      - user: user:anne\n        object: group:eng\n        assertions:\n          member: true\n",
				"    list_objects:\n      - user: user:anne\n        type: group\n        assertions:\n          member: [group:eng]\n", 1)
		}, want: []string{"store.fga.yaml", "no check assertions", "list_objects queries: 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, text string) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("model.fga", string(model))
			for name, text := range c.files {
				write(name, text)
			}
			store := c.change(goodStore)
			if store == goodStore {
				t.Fatal("the case changes nothing")
			}
			write("store.fga.yaml", store)
			f, err := LoadStore(filepath.Join(dir, "store.fga.yaml"))
			if c.atRun {
				if err != nil {
					t.Fatalf("refused when read: %v", err)
				}
				var e *Engine
				if e, err = Start(context.Background(), f); err == nil {
					e.Close()
				}
			}
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			for _, want := range c.want {
				want = strings.ReplaceAll(want, "store.fga.yaml", filepath.Join(dir, "store.fga.yaml"))
				for _, name := range []string{"broken.fga", "gone.yaml", "t.txt", "t.yaml", "t.csv"} {
					if strings.HasPrefix(want, name) {
						want = filepath.Join(dir, want)
					}
				}
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
	// The good file is good: each case fails by its change alone.
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "model.fga"), model, 0o600)
	_ = os.WriteFile(filepath.Join(dir, "store.fga.yaml"), []byte(goodStore), 0o600)
	f, err := LoadStore(filepath.Join(dir, "store.fga.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	decideAll(t, f)
}

func TestBadChecksFile(t *testing.T) {
	tuple := `{"user": "user:hank", "relation": "member", "object": "group:eng"}`
	many := strings.TrimSuffix(strings.Repeat(tuple+",", MaxContextualTuples+1), ",")
	cases := []struct{ name, line, want string }{
		{"no expect", `{"user": "user:anne", "relation": "viewer", "object": "document:roadmap"}`, "missing expect"},
		{"unknown key", `{"user": "user:anne", "relation": "viewer", "object": "document:roadmap", "expected": true}`, `"expected"`},
		{"101 contextual tuples", `{"user": "user:anne", "relation": "viewer", "object": "document:roadmap", "expect": true, "contextual_tuples": [` + many + `]}`, "at most 100"},
		{"bad contextual tuple", `{"user": "user:anne", "relation": "viewer", "object": "document:roadmap", "expect": true, "contextual_tuples": [{"usr": "user:hank"}]}`, "contextual tuple 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "checks.jsonl")
			good := `{"user": "user:anne", "relation": "viewer", "object": "document:roadmap", "expect": true}`
			if err := os.WriteFile(path, []byte(good+"\n\n"+c.line+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadChecks("testdata/model.fga", "testdata/tuples.jsonl", path)
			if err == nil || !strings.Contains(err.Error(), path+":3:") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %s:3: and %q", err, path, c.want)
			}
		})
	}
	for _, missing := range []struct{ model, tuples string }{{"testdata/nope.fga", ""}, {"testdata/model.fga", "testdata/nope.csv"}} {
		if _, err := LoadChecks(missing.model, missing.tuples, "testdata/checks.jsonl"); err == nil || !strings.Contains(err.Error(), "nope") {
			t.Errorf("missing file: %v", err)
		}
	}
}
