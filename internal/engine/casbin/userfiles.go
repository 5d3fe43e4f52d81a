package casbin

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

// Users' own Casbin files, as Casbin's users keep them: the model (model.conf, the file
// casbin.NewEnforcer takes first), its policy (policy.csv, one rule a line, the file adapter's
// form), and the requests to ask with the decision each expects, a CSV line each as the Casbin
// editor writes them (alice, data1, read) with the expected decision last (true or false), or
// JSON Lines ({"request": ["alice", "data1", "read"], "expect": true}) for requests whose values
// are numbers, lists or objects (ABAC's r.sub.Age).
//
// On authzbench's command line: --policy model.conf (and policy.csv, or --data policy.csv)
// --inputs requests.csv.

func init() {
	workload.RegisterUserFiles(workload.UserFiles{Engine: Name, Claims: claims, Check: checkSpec, Read: fromFiles})
}

// claims says whether the user's policy is Casbin's: a model file, *.conf, which no other
// engine reads.
func claims(s workload.UserSpec) bool { return slices.ContainsFunc(s.Policies, isModel) }

func isModel(path string) bool  { return strings.HasSuffix(path, ".conf") }
func isPolicy(path string) bool { return strings.HasSuffix(path, ".csv") }

// policyFiles are the policy files the spec names: a .csv beside the model in its policies, or
// its data.
func policyFiles(s workload.UserSpec) []string {
	var out []string
	for _, p := range s.Policies {
		if !isModel(p) {
			out = append(out, p)
		}
	}
	return append(out, s.Data...)
}

// checkSpec refuses settings Casbin's files are not given with, naming each as its flag or key.
func checkSpec(s workload.UserSpec) error {
	say := workload.NewSettingError
	models := slices.DeleteFunc(slices.Clone(s.Policies), func(p string) bool { return !isModel(p) })
	policies := policyFiles(s)
	switch {
	case len(models) > 1:
		return say("policy", func(n func(string) string) string {
			return fmt.Sprintf("a Casbin workload has one model: %s %s and %s", n("policy"), strings.Join(models, " and "), n("policy"))
		})
	case len(policies) > 1:
		return say("data", func(n func(string) string) string {
			return fmt.Sprintf("a Casbin model loads one policy file (%s), and %d are given: %s", n("data"), len(policies), strings.Join(policies, ", "))
		})
	case len(policies) == 1 && !isPolicy(policies[0]):
		return say("data", func(n func(string) string) string {
			return fmt.Sprintf("%s %s: a Casbin policy is a .csv file, one rule a line (p, alice, data1, read)", n("data"), policies[0])
		})
	case s.HasCedar():
		return say("cedar_policies", func(func(string) string) string {
			return "a Casbin workload takes no Cedar files; run Cedar from a workload of its own"
		})
	case s.Query != "":
		return say("query", func(n func(string) string) string {
			return fmt.Sprintf("%s names a Rego decision; Casbin decides with its model's matcher", n("query"))
		})
	case s.V0Compatible:
		return say("v0_compatible", func(n func(string) string) string {
			return fmt.Sprintf("%s reads Rego; a Casbin model has no versions to choose", n("v0_compatible"))
		})
	case s.UndefinedAs != "":
		return say("undefined_as", func(n func(string) string) string {
			return fmt.Sprintf("%s applies to a Rego policy without a default; Casbin's effect always decides", n("undefined_as"))
		})
	case s.Inputs == "":
		return say("inputs", func(n func(string) string) string {
			return fmt.Sprintf(`a Casbin model needs %s FILE of requests: requests.csv, a request a line with its expected decision last (alice, data1, read, true), `+
				`or requests.jsonl ({"request": ["alice", "data1", "read"], "expect": true} per line)`, n("inputs"))
		})
	}
	return nil
}

// fromFiles reads the user's Casbin files into a workload: the model (Casbin refusing it names
// its line), and each request line an input, with its expected decision. The policy is loaded
// when the run prepares the workload, before any load, each line Casbin refuses named.
func fromFiles(s workload.UserSpec) (*workload.Workload, error) {
	modelPath := s.Policies[slices.IndexFunc(s.Policies, isModel)]
	text, err := os.ReadFile(modelPath)
	if err != nil {
		return nil, err
	}
	m, err := ParseModel(modelPath, string(text))
	if err != nil {
		return nil, err
	}
	tokens := RequestTokens(m)
	v := &workload.Version{Files: map[string]string{FileModel: modelPath, FileRequests: s.Inputs}}
	files := []string{modelPath}
	if p := policyFiles(s); len(p) == 1 {
		if _, err := os.Stat(p[0]); err != nil {
			return nil, err
		}
		v.Files[FilePolicy] = p[0]
		files = append(files, p[0])
	}
	inputs, err := readRequests(s.Inputs, tokens)
	if err != nil {
		return nil, err
	}
	name := s.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(modelPath), filepath.Ext(modelPath))
	}
	return &workload.Workload{Name: name, Description: "user-supplied Casbin: " + strings.Join(append(files, s.Inputs), ", "),
		Versions: map[string]*workload.Version{Name: v}, Inputs: inputs}, nil
}

// readRequests reads a requests file, CSV (*.csv) or JSON Lines (*.jsonl, *.ndjson, *.json, or
// another name whose first line is a JSON object), each request as many values as the model's
// request definition has, as Enforce would refuse it otherwise.
func readRequests(path string, tokens []string) ([]workload.Input, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var jsonl bool
	switch filepath.Ext(path) {
	case ".csv":
	case ".jsonl", ".ndjson", ".json":
		jsonl = true
	default:
		jsonl = bytes.HasPrefix(bytes.TrimSpace(b), []byte("{"))
	}
	var inputs []workload.Input
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := fmt.Sprintf("%s:%d", path, n)
		var in workload.Input
		if jsonl {
			in, err = jsonRequest(line, tokens)
		} else {
			in, err = csvRequest(line, tokens)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		in.Source = where
		r := in.Requests[Name]
		r.Source = where
		in.Requests[Name] = r
		inputs = append(inputs, in)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%s: no requests", path)
	}
	return inputs, nil
}

// csvRequest reads a line of request values, strings as the Casbin editor's requests are, with
// the expected decision after them: true or false. (JSON Lines take a request without one.)
func csvRequest(line string, tokens []string) (workload.Input, error) {
	r := csv.NewReader(strings.NewReader(line))
	r.TrimLeadingSpace = true
	fields, err := r.Read()
	if err != nil {
		return workload.Input{}, err
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	// The expected decision is not optional: a line one value short would read as a request
	// without one, its last value taken for the decision.
	if len(fields) != len(tokens)+1 {
		return workload.Input{}, fmt.Errorf("casbin refuses the request: %w; a line is the request's values, then its expected decision (true or false)",
			requestSizeError(len(fields)-1, tokens))
	}
	var expect workload.Expect
	switch last := fields[len(tokens)]; last {
	case "true":
		expect = workload.ExpectAllow
	case "false":
		expect = workload.ExpectDeny
	default:
		return workload.Input{}, fmt.Errorf("the expected decision %q: want true or false, after the %d request values (r = %s)",
			last, len(tokens), strings.Join(tokens, ", "))
	}
	fields = fields[:len(tokens)]
	values := make([]any, len(fields))
	for i, f := range fields {
		values[i] = f
	}
	body, err := requestJSON(values...)
	if err != nil {
		return workload.Input{}, err
	}
	return workload.Input{Expect: expect, Requests: map[string]workload.EngineRequest{Name: {Body: body}}}, nil
}

// jsonRequest reads {"request": [values...], "expect": true|false}; without expect, the input
// is unverified.
func jsonRequest(line string, tokens []string) (workload.Input, error) {
	var doc struct {
		Request json.RawMessage `json:"request"`
		Expect  *bool           `json:"expect"`
	}
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return workload.Input{}, fmt.Errorf(`want {"request": [values...], "expect": true|false}: %w`, err)
	}
	if doc.Request == nil {
		return workload.Input{}, fmt.Errorf(`no "request": want {"request": [values...], "expect": true|false}`)
	}
	vals, err := ParseRequest(doc.Request)
	if err != nil {
		return workload.Input{}, err
	}
	if len(vals) != len(tokens) {
		return workload.Input{}, fmt.Errorf("casbin refuses the request: %w", requestSizeError(len(vals), tokens))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc.Request); err != nil {
		return workload.Input{}, err
	}
	in := workload.Input{Requests: map[string]workload.EngineRequest{Name: {Body: compact.Bytes()}}}
	if doc.Expect != nil {
		in.Expect = workload.ExpectDeny
		if *doc.Expect {
			in.Expect = workload.ExpectAllow
		}
	}
	return in, nil
}
