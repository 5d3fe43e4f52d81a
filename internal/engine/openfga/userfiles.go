package openfga

import (
	"path/filepath"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

func init() { workload.OpenFGAFromFiles = fromFiles }

// fromFiles reads a user's OpenFGA files into a workload: a store file's check assertions, or a
// checks file's lines, become its inputs with their expected decisions, each naming its line.
// Everything OpenFGA refuses later (a type the model lacks) still names the file and line.
func fromFiles(s workload.UserSpec) (*workload.Workload, error) {
	policy := s.Policies[0]
	var f *Fixture
	var err error
	o := &workload.OpenFGA{}
	if workload.IsOpenFGAStore(policy) {
		f, err = LoadStore(policy)
		o.StorePath = policy
	} else {
		tuples := ""
		if len(s.Data) > 0 {
			tuples = s.Data[0]
		}
		f, err = LoadChecks(policy, tuples, s.Inputs)
		o.ModelPath, o.TuplesPath = policy, tuples
	}
	if err != nil {
		return nil, err
	}
	for kind, n := range f.NotMeasured {
		if n > 0 {
			if o.NotMeasured == nil {
				o.NotMeasured = map[string]int{}
			}
			o.NotMeasured[kind] = n
		}
	}
	name := s.Name
	if name == "" {
		name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(policy), filepath.Ext(policy)), ".fga")
	}
	w := &workload.Workload{Name: name, Description: "user-supplied: " + strings.Join(append(append([]string{}, s.Policies...), s.Data...), ", "), OpenFGA: o}
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
		w.Inputs = append(w.Inputs, workload.Input{OpenFGA: check, OpenFGASource: a.Origin, Source: a.Origin, Expect: expect})
	}
	return w, nil
}
