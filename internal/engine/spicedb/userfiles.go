package spicedb

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	workload.RegisterUserFiles(workload.UserFiles{Engine: Name, Claims: claims, Check: checkSpec, Read: fromFiles})
}

// claims says whether the user's policy is SpiceDB's: a schema file (*.zed), or a validation
// file, a YAML file with a top-level schema or schemaFile key, as `zed validate` and the
// playground read. OpenFGA's store files (*.fga.yaml) are OpenFGA's, asked before this.
func claims(s workload.UserSpec) bool {
	return slices.ContainsFunc(s.Policies, func(p string) bool { return isSchemaFile(p) || isValidationFile(p) })
}

func isSchemaFile(path string) bool { return strings.HasSuffix(path, ".zed") }

// isValidationFile looks for a top-level schema or schemaFile key in a YAML file. A file that
// cannot be read is not claimed: whoever reads it says why.
func isValidationFile(path string) bool {
	if !strings.HasSuffix(path, ".yaml") && !strings.HasSuffix(path, ".yml") {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		key, _, ok := strings.Cut(sc.Text(), ":")
		if ok && (key == "schema" || key == "schemaFile") {
			return true
		}
	}
	return false
}

// checkSpec refuses settings SpiceDB's files are not given with: a validation file holds its
// schema, relationships and assertions; a schema file needs its checks, and takes one
// relationships file.
func checkSpec(s workload.UserSpec) error {
	say := func(setting string, say func(n func(string) string) string) error {
		return workload.NewSettingError(setting, say)
	}
	switch {
	case len(s.Policies) > 1:
		return say("policy", func(n func(string) string) string {
			return fmt.Sprintf("a SpiceDB workload is one %s: a validation file (validation.yaml) or a schema (schema.zed)", n("policy"))
		})
	case s.HasCedar():
		return say("cedar_policies", func(func(string) string) string {
			return "a SpiceDB workload takes no Cedar files; run Cedar from a workload of its own"
		})
	case s.Query != "":
		return say("query", func(n func(string) string) string {
			return fmt.Sprintf("%s names a Rego decision; a SpiceDB check names its permission itself", n("query"))
		})
	case !isSchemaFile(s.Policies[0]) && (len(s.Data) > 0 || s.Inputs != ""):
		return say("inputs", func(n func(string) string) string {
			return fmt.Sprintf("%s is a validation file, which holds its relationships and assertions: give it alone, without %s or %s",
				s.Policies[0], n("data"), n("inputs"))
		})
	case isSchemaFile(s.Policies[0]) && s.Inputs == "":
		return say("inputs", func(n func(string) string) string {
			return fmt.Sprintf(`a SpiceDB schema needs %s FILE.jsonl of checks ({"check": "document:readme#view@user:alice", "expect": true|false|"conditional"} per line), and its relationships with %s`,
				n("inputs"), n("data"))
		})
	case len(s.Data) > 1:
		return say("data", func(n func(string) string) string {
			return fmt.Sprintf("a SpiceDB schema takes one relationships file (%s), one relationship a line", n("data"))
		})
	}
	return nil
}

// fromFiles reads a user's SpiceDB files into a workload: a validation file's assertions, or a
// checks file's lines, become its inputs with their expected decisions, each naming its line.
// What SpiceDB itself refuses (a relation the schema lacks) is found when the run prepares the
// workload, before any load, and names its line too.
func fromFiles(s workload.UserSpec) (*workload.Workload, error) {
	policy := s.Policies[0]
	var f *Fixture
	var err error
	v := &workload.Version{}
	if isSchemaFile(policy) {
		rels := ""
		if len(s.Data) > 0 {
			rels = s.Data[0]
		}
		f, err = LoadFiles(policy, rels, s.Inputs)
		v.Files = map[string]string{FileSchema: policy, FileChecks: s.Inputs}
		if rels != "" {
			v.Files[FileRelationships] = rels
		}
	} else {
		f, err = LoadValidationFile(policy)
		v.Files = map[string]string{FileValidation: policy}
	}
	if err != nil {
		return nil, err
	}
	for kind, n := range f.NotMeasured {
		if n > 0 {
			if v.NotMeasured == nil {
				v.NotMeasured = map[string]int{}
			}
			v.NotMeasured[kind] = n
		}
	}
	name := s.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(policy), filepath.Ext(policy))
	}
	files := append(append([]string{}, s.Policies...), s.Data...)
	if s.Inputs != "" {
		files = append(files, s.Inputs)
	}
	w := &workload.Workload{Name: name, Description: "user-supplied SpiceDB: " + strings.Join(files, ", "),
		Versions: map[string]*workload.Version{Name: v}}
	for _, a := range f.Assertions {
		line, err := CheckLine(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Origin, err)
		}
		w.Inputs = append(w.Inputs, workload.Input{Source: a.Origin, Expect: ExpectOf(a.Expect),
			Requests: map[string]workload.EngineRequest{Name: {Body: line, Source: a.Origin}}})
	}
	return w, nil
}
