package openfga

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	workload.RegisterUserFiles(workload.UserFiles{Engine: Name, Claims: claims, Check: checkSpec, Read: fromFiles})
}

// The parts of the user's files, as workload.Version.Files names them.
const (
	FileStore  = "store"
	FileModel  = "model"
	FileTuples = "tuples"
	FileChecks = "checks"
)

// claims says whether the spec's policy is an OpenFGA file, as OpenFGA's CLI names them: a
// store file (*.fga.yaml, *.fga.yml), or a model in the DSL (*.fga) or a modular model's
// manifest (fga.mod).
func claims(s workload.UserSpec) bool {
	return slices.ContainsFunc(s.Policies, func(p string) bool { return isStore(p) || isModel(p) })
}

// isStore reports whether path names an OpenFGA store file.
func isStore(path string) bool {
	return strings.HasSuffix(path, ".fga.yaml") || strings.HasSuffix(path, ".fga.yml")
}

// isModel reports whether path names an OpenFGA model: the DSL or a modular model.
func isModel(path string) bool {
	return strings.HasSuffix(path, ".fga") || strings.HasSuffix(path, "fga.mod")
}

// checkSpec checks an OpenFGA workload's settings: a store file alone (it holds the model,
// tuples and tests), or a model with at most one tuple file (data) and a checks file (inputs).
func checkSpec(s workload.UserSpec) error {
	say := func(setting, format string, settings ...string) error {
		return workload.NewSettingError(setting, func(n func(string) string) string {
			words := make([]any, len(settings))
			for i, a := range settings {
				words[i] = n(a)
			}
			return fmt.Sprintf(format, words...)
		})
	}
	switch {
	case len(s.Policies) > 1:
		return say("policy", "an OpenFGA workload is one %s: a store file (store.fga.yaml) or a model (model.fga, fga.mod)", "policy")
	case s.HasCedar():
		return say("cedar_policies", "an OpenFGA workload takes no Cedar files; run Cedar from a workload of its own")
	case s.Query != "":
		return say("query", "%s names a Rego decision; an OpenFGA check names its relation itself", "query")
	case isStore(s.Policies[0]) && (len(s.Data) > 0 || s.Inputs != ""):
		return say("inputs", "a store file holds its tuples and its tests' checks: give it alone, without %s or %s", "data", "inputs")
	case isModel(s.Policies[0]) && s.Inputs == "":
		return say("inputs", `an OpenFGA model needs %s FILE.jsonl of checks ({"user": ..., "relation": ..., "object": ..., "expect": true|false} per line), and its tuples with %s`, "inputs", "data")
	case len(s.Data) > 1:
		return say("data", "an OpenFGA model takes one tuple file (%s): YAML, JSON, JSON Lines or CSV", "data")
	}
	return nil
}

// fromFiles reads a user's OpenFGA files into a workload: a store file's check assertions, or a
// checks file's lines, become its inputs with their expected decisions, each naming its line,
// and each input's Check its request (Input.Requests). Everything OpenFGA refuses later (a type
// the model lacks) still names the file and line.
func fromFiles(s workload.UserSpec) (*workload.Workload, error) {
	policy := s.Policies[0]
	var f *Fixture
	var err error
	v := &workload.Version{}
	if isStore(policy) {
		f, err = LoadStore(policy)
		v.Files = map[string]string{FileStore: policy}
	} else {
		tuples := ""
		if len(s.Data) > 0 {
			tuples = s.Data[0]
		}
		f, err = LoadChecks(policy, tuples, s.Inputs)
		v.Files = map[string]string{FileModel: policy, FileChecks: s.Inputs}
		if tuples != "" {
			v.Files[FileTuples] = tuples
		}
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
		name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(policy), filepath.Ext(policy)), ".fga")
	}
	w := &workload.Workload{Name: name, Description: "user-supplied: " + strings.Join(append(append([]string{}, s.Policies...), s.Data...), ", "),
		Versions: map[string]*workload.Version{Name: v}}
	if s.Inputs != "" {
		w.Description += ", " + s.Inputs
	}
	for _, a := range f.Assertions {
		check, err := CheckJSON(a)
		if err != nil {
			return nil, err
		}
		expect := workload.ExpectDeny
		if a.Expect {
			expect = workload.ExpectAllow
		}
		w.Inputs = append(w.Inputs, workload.Input{Source: a.Origin, Expect: expect,
			Requests: map[string]workload.EngineRequest{Name: {Body: check, Source: a.Origin}}})
	}
	return w, nil
}
