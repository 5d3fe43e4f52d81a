package workload

import (
	"testing"

	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
)

// prepareCedar loads the workload's Cedar version with cedar-go, validating its policies and
// entities against its schema when it has one.
func prepareCedar(t *testing.T, w *Workload) *cedarengine.Engine {
	t.Helper()
	c := w.Cedar
	if c == nil {
		t.Fatalf("workload %s has no Cedar version", w.Name)
	}
	var pols []cedarengine.Source
	for _, f := range c.Policies {
		pols = append(pols, cedarengine.Source{Name: f.Name, Text: f.Content})
	}
	var entities, schema *cedarengine.Source
	if len(c.Entities) > 0 {
		entities = &cedarengine.Source{Name: "entities.json", Text: c.Entities}
	}
	if c.Schema != nil {
		schema = &cedarengine.Source{Name: c.Schema.Name, Text: c.Schema.Content}
	}
	e, err := cedarengine.New(pols, entities, schema)
	if err != nil {
		t.Fatalf("workload %s: load Cedar version: %v", w.Name, err)
	}
	return e
}

// cedarDecide parses and decides one Cedar request. errs lists the policies that failed to
// evaluate: a faithful port guards its attribute reads, so any error is a test failure even when
// the decision happens to be right.
func cedarDecide(e *cedarengine.Engine, request []byte) (allow bool, errs []string, err error) {
	req, err := e.ParseRequest(request)
	if err != nil {
		return false, nil, err
	}
	dec, diag := e.Decide(&req)
	for _, de := range diag.Errors {
		errs = append(errs, string(de.PolicyID)+": "+de.Message)
	}
	return bool(dec), errs, nil
}

// checkAgainstCedar decides every input of w with cedar-go and fails the test for each one whose
// decision differs from its Expect, or whose evaluation reported a policy error. A workload
// without inputs fails too: it would check nothing.
func checkAgainstCedar(t *testing.T, w *Workload) {
	t.Helper()
	if len(w.Inputs) == 0 {
		t.Fatalf("workload %s has no inputs", w.Name)
	}
	e := prepareCedar(t, w)
	const maxReported = 20
	wrong := 0
	for i, in := range w.Inputs {
		var problem string
		if in.Cedar == nil {
			problem = "input has no Cedar request"
		} else {
			allow, errs, err := cedarDecide(e, in.Cedar)
			switch {
			case err != nil:
				problem = err.Error()
			case len(errs) > 0:
				problem = "policy errors: " + errs[0]
			case in.Expect == Unverified:
				problem = "input has no expected decision"
			case expectOf(allow) != in.Expect:
				problem = "Cedar decided " + expectOf(allow).String()
			default:
				continue
			}
		}
		wrong++
		if wrong <= maxReported {
			t.Errorf("workload %s input %d: %s; the model expects %s (%s)\nCedar request: %s",
				w.Name, i, problem, in.Expect, in.Reason, in.Cedar)
		}
	}
	if wrong > maxReported {
		t.Errorf("workload %s: %d of %d Cedar requests wrong, only the first %d shown", w.Name, wrong, len(w.Inputs), maxReported)
	}
}

// checkCedarHandCases runs hand-written cases through the workload's Cedar version, mapping
// each input to its Cedar request with toCedar, as the workload's generator does.
func checkCedarHandCases[I any](t *testing.T, w *Workload, cases []handCase[I], toCedar func(I) []byte) {
	t.Helper()
	e := prepareCedar(t, w)
	for _, tc := range cases {
		t.Run(tc.name+"/cedar", func(t *testing.T) {
			req := toCedar(tc.in)
			allow, errs, err := cedarDecide(e, req)
			if err != nil || len(errs) > 0 || allow != tc.allow {
				t.Errorf("Cedar: allow %v, policy errors %v, error %v; want allow %v\nrequest: %s", allow, errs, err, tc.allow, req)
			}
		})
	}
}
