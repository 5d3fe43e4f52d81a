package spicedb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad files are refused with the file and line to fix, before any engine starts.
func TestBadValidationFiles(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"relationship that does not parse", "schema: |-\n  definition user {}\nrelationships: |-\n  doc:a#viewer@user:x\n  doc:a#viewer user:y\n",
			"v.yaml:5: error parsing relationship `doc:a#viewer user:y`"},
		{"repeated relationship", "schema: |-\n  definition user {}\nrelationships: |-\n  doc:a#viewer@user:x\n  doc:a#viewer@user:x\n",
			"v.yaml:5: found repeated relationship"},
		{"assertion that does not parse", "schema: |-\n  definition user {}\nassertions:\n  assertTrue:\n    - doc:a#viewer@user:x\n    - doc:a@user:x\n",
			"v.yaml:6: error parsing relationship in assertion"},
		{"caveat context that is not JSON", "schema: |-\n  definition user {}\nassertions:\n  assertTrue:\n    - 'doc:a#viewer@user:x with {hour: 1}'\n",
			"v.yaml:5: error parsing caveat context"},
		{"schema and schemaFile", "schema: |-\n  definition user {}\nschemaFile: s.zed\nassertions:\n  assertTrue:\n    - doc:a#viewer@user:x\n",
			"v.yaml:1: both schema and schemaFile"},
		{"schemaFile outside the directory", "schemaFile: ../s.zed\nassertions:\n  assertTrue:\n    - doc:a#viewer@user:x\n",
			"outside the validation file's directory"},
		{"schemaFile missing", "schemaFile: s.zed\nassertions:\n  assertTrue:\n    - doc:a#viewer@user:x\n",
			"v.yaml: schemaFile: open"},
		{"no schema", "assertions:\n  assertTrue:\n    - doc:a#viewer@user:x\n",
			"v.yaml: no schema"},
		{"no assertions", "schema: |-\n  definition user {}\nassertions:\n  assertTrue: []\n  assertFalse: null\n",
			"v.yaml: no assertions to measure"},
		{"legacy blocks", "namespace_configs:\n  - \"name: user\"\nassertions:\n  assertTrue:\n    - doc:a#viewer@user:x\n",
			"namespace_configs and validation_tuples are no longer read"},
		{"not a mapping", "- schema\n", "v.yaml:1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "v.yaml")
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadValidationFile(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestBadChecksAndRelationshipsFiles(t *testing.T) {
	for _, tc := range []struct {
		name, rels, checks, want string
	}{
		{"expect missing", "", `{"check": "doc:a#view@user:x"}`, "c.jsonl:1: expect is missing"},
		{"expect not a decision", "", "\n" + `{"check": "doc:a#view@user:x", "expect": "yes"}`, `c.jsonl:2: expect is "yes"`},
		{"unknown field", "", `{"check": "doc:a#view@user:x", "expect": true, "ctx": {}}`, `c.jsonl:1: json: unknown field "ctx"`},
		{"check that does not parse", "", `{"check": "doc:a", "expect": true}`, `c.jsonl:1: check "doc:a"`},
		{"no checks", "", "\n\n", "c.jsonl: no checks"},
		{"relationship that does not parse", "// c\n\ndoc:a#viewer@user\n", `{"check": "doc:a#view@user:x", "expect": true}`, "r.txt:3:"},
		{"repeated relationship", "doc:a#viewer@user:x\ndoc:a#viewer@user:x[only_one]\n", `{"check": "doc:a#view@user:x", "expect": true}`, "r.txt:2: relationship doc:a#viewer@user:x repeats line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range map[string]string{"s.zed": "definition user {}", "r.txt": tc.rels, "c.jsonl": tc.checks} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadFiles(filepath.Join(dir, "s.zed"), filepath.Join(dir, "r.txt"), filepath.Join(dir, "c.jsonl"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// Positions come from the user's file: the schema's first line below `schema: |-`, each
// relationship and assertion at its own line.
func TestOriginsAreTheFilesLines(t *testing.T) {
	f, err := LoadValidationFile("testdata/docshare.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f.SchemaFile != "testdata/docshare.yaml" || f.SchemaLine != 2 {
		t.Errorf("schema at %s:%d, want testdata/docshare.yaml:2", f.SchemaFile, f.SchemaLine)
	}
	if got := f.Relationships[0].Origin; got != "testdata/docshare.yaml:29" {
		t.Errorf("first relationship from %s, want line 29", got)
	}
	if got := f.Assertions[0].Origin; got != "testdata/docshare.yaml:41" {
		t.Errorf("first assertion from %s, want line 41", got)
	}
}
