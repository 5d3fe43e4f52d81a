package cedar

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/workload"
)

// builtinOrFail is the built-in workload called name, with its Cedar version.
func builtinOrFail(t *testing.T, name string) *workload.Workload {
	t.Helper()
	w, err := workload.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	if filesOf(w) == nil {
		t.Fatalf("workload %s has no Cedar version", name)
	}
	return w
}

// prepare loads the workload's Cedar version with cedar-go, validating its policies and
// entities against its schema when it has one.
func prepare(t *testing.T, w *workload.Workload) *cedarengine.Engine {
	t.Helper()
	f := filesOf(w)
	if f == nil {
		t.Fatalf("workload %s has no Cedar version", w.Name)
	}
	var pols []cedarengine.Source
	for _, p := range f.Policies {
		pols = append(pols, cedarengine.Source{Name: p.Name, Text: p.Content})
	}
	var entities, schema *cedarengine.Source
	if len(f.Entities) > 0 {
		entities = &cedarengine.Source{Name: "entities.json", Text: f.Entities}
	}
	if f.Schema != nil {
		schema = &cedarengine.Source{Name: f.Schema.Name, Text: f.Schema.Content}
	}
	e, err := cedarengine.New(pols, entities, schema)
	if err != nil {
		t.Fatalf("workload %s: load Cedar version: %v", w.Name, err)
	}
	return e
}

// checkAgainstModel decides every input of w with cedar-go and fails the test for each one
// whose decision differs from the reference model's (its Expect), or whose evaluation reported a
// policy error: a faithful version guards its attribute reads, so an error fails even when the
// decision happens to be right. A workload without inputs fails too: it would check nothing.
func checkAgainstModel(t *testing.T, w *workload.Workload) {
	t.Helper()
	if len(w.Inputs) == 0 {
		t.Fatalf("workload %s has no inputs", w.Name)
	}
	e := prepare(t, w)
	const maxReported = 20
	wrong := 0
	for i, in := range w.Inputs {
		body := Engine.Request(in)
		var problem string
		if body == nil {
			problem = "input has no Cedar request"
		} else {
			allow, errs, err := decide(e, body)
			switch {
			case err != nil:
				problem = err.Error()
			case len(errs) > 0:
				problem = "policy errors: " + errs[0]
			case in.Expect == workload.Unverified:
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
				w.Name, i, problem, in.Expect, in.Reason, body)
		}
	}
	if wrong > maxReported {
		t.Errorf("workload %s: %d of %d Cedar requests wrong, only the first %d shown", w.Name, wrong, len(w.Inputs), maxReported)
	}
}

// handCase is a hand-written input of a family's model, with the decision it must get.
type handCase[I any] struct {
	name  string
	in    I
	allow bool
}

// checkHandCases runs hand-written cases through w's Cedar version, each input written as its
// family's version writes it, and through the reference model (decide), so a disagreement on a
// chosen case shows up by name rather than somewhere among the generated inputs.
func checkHandCases[I any](t *testing.T, w *workload.Workload, cases []handCase[I], write func(I) []byte, model func(I) bool) {
	t.Helper()
	e := prepare(t, w)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := write(tc.in)
			allow, errs, err := decide(e, req)
			if err != nil || len(errs) > 0 || allow != tc.allow {
				t.Errorf("Cedar: allow %v, policy errors %v, error %v; want allow %v\nrequest: %s", allow, errs, err, tc.allow, req)
			}
			if m := model(tc.in); m != tc.allow {
				t.Errorf("the reference model says allow %v; want %v", m, tc.allow)
			}
		})
	}
}

// Every built-in with a Cedar version decides its inputs as the reference model does, with no
// policy error.
func TestBuiltinsAgreeWithTheModel(t *testing.T) {
	for _, name := range []string{"nop", "rbac", "envoy", "rbac-data-10", "rbac-data-1000"} {
		t.Run(name, func(t *testing.T) { checkAgainstModel(t, builtinOrFail(t, name)) })
	}
}

// Workloads Cedar has no version of say so: the indexed rules style (Cedar has no data to look
// a value up in); the rewritten Rego ones, OPA's alone, are internal/engine/all's to check.
func TestNoVersionWhereCedarHasNone(t *testing.T) {
	for _, name := range []string{"rules-path-10-indexed"} {
		w, err := workload.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if Engine.Written(w) || Engine.Request(w.Inputs[0]) != nil || w.Scale.Series(Name) != "" {
			t.Errorf("%s has a Cedar version", name)
		}
	}
}

// nop allows every request, each naming its user, action and document.
func TestNopAllowsEverything(t *testing.T) {
	w := builtinOrFail(t, "nop")
	for i, in := range w.Inputs {
		if in.Expect != workload.ExpectAllow {
			t.Fatalf("input %d expects %s", i+1, in.Expect)
		}
	}
	if got, want := string(Engine.Request(w.Inputs[0])), `{"principal":{"type":"User","id":`; !strings.HasPrefix(got, want) {
		t.Errorf("first request %s, want it to start %s", got, want)
	}
}

// rbac's hand-written cases decide in Cedar as in the reference model. Cedar's schema names the
// resource types, so a request for a type it does not know is refused before any policy runs:
// those cases are left out.
func TestRBACHandCases(t *testing.T) {
	d := &workload.RBACData{
		Users: map[string]workload.RBACUser{
			"ann":  {Roles: []string{"viewer"}},
			"bob":  {Roles: []string{"editor", "analyst"}},
			"cat":  {Roles: []string{"viewer", "admin"}},
			"dan":  {Roles: []string{"manager"}, Suspended: true},
			"eve":  {Roles: []string{"viewer"}},
			"finn": {Roles: nil},
		},
		Roles: map[string]map[string][]string{
			"admin":   {},
			"viewer":  {"document": {"read"}},
			"editor":  {"document": {"read", "write"}},
			"analyst": {"report": {"read"}},
			"manager": {"document": {"read", "write", "delete", "share"}},
		},
		Resources: map[string]map[string]workload.RBACResource{
			"document": {
				"d1": {Owner: "eve"},
				"d2": {Owner: "ann", Confidential: true},
			},
			"report": {"r1": {Owner: "eve"}},
		},
	}
	doc := func(id string) workload.RBACResourceRef { return workload.RBACResourceRef{Type: "document", ID: id} }
	report := workload.RBACResourceRef{Type: "report", ID: "r1"}
	tests := []handCase[workload.RBACInput]{
		{"viewer reads a document", workload.RBACInput{User: "ann", Action: "read", Resource: doc("d1")}, true},
		{"viewer may not write", workload.RBACInput{User: "ann", Action: "write", Resource: doc("d1")}, false},
		{"second role grants", workload.RBACInput{User: "bob", Action: "read", Resource: report}, true},
		{"role on another type does not leak", workload.RBACInput{User: "ann", Action: "read", Resource: report}, false},
		{"owner writes without a write role", workload.RBACInput{User: "eve", Action: "write", Resource: doc("d1")}, true},
		{"owner may not delete without a role", workload.RBACInput{User: "eve", Action: "delete", Resource: doc("d1")}, false},
		{"user without roles owns nothing here", workload.RBACInput{User: "finn", Action: "read", Resource: doc("d1")}, false},
		{"admin deletes anything", workload.RBACInput{User: "cat", Action: "delete", Resource: doc("d1")}, true},
		{"suspended manager is denied", workload.RBACInput{User: "dan", Action: "read", Resource: doc("d1")}, false},
		{"unknown user", workload.RBACInput{User: "zed", Action: "read", Resource: doc("d1")}, false},
		{"unknown resource", workload.RBACInput{User: "cat", Action: "read", Resource: doc("d9")}, false},
		{"confidential is never shared, even by an admin", workload.RBACInput{User: "cat", Action: "share", Resource: doc("d2")}, false},
		{"confidential may still be read by its owner", workload.RBACInput{User: "ann", Action: "read", Resource: doc("d2")}, true},
	}
	w := &workload.Workload{Name: "rbac", Model: d}
	if err := addBuiltin(w); err != nil {
		t.Fatal(err)
	}
	checkHandCases(t, w, tests, rbacRequest, func(in workload.RBACInput) bool { allow, _ := d.Decide(in); return allow })
}

// rbac-data-N's Cedar version is its series' cedar style, the users entities at every N.
func TestRBACDataSeries(t *testing.T) {
	w := builtinOrFail(t, "rbac-data-50")
	if s := w.Scale.Series(Name); s != "rbac-data/cedar" {
		t.Errorf("series %q, want rbac-data/cedar", s)
	}
	if got := strings.Count(string(filesOf(w).Entities), `"type":"User"`); got < 50 {
		t.Errorf("the entities hold %d users; want 50 and the owners' references", got)
	}
}

// A grant's prefix is a prefix, not a segment: "/people/" does not match "/people", and
// "/people" matches "/peoplex", in Cedar as in the reference model.
func TestEnvoyPrefixEdges(t *testing.T) {
	w := builtinOrFail(t, "envoy")
	d := w.Model.(*workload.EnvoyData)
	in := func(user, method, path string) workload.EnvoyInput {
		return workload.EnvoyInput{User: user, Method: method, Path: path, Host: "app.example"}
	}
	checkHandCases(t, w, []handCase[workload.EnvoyInput]{
		{"a grant under a prefix", in("ben", "PUT", "/people/42"), true},
		{"the prefix's parent", in("ben", "PUT", "/people"), false},
		{"a longer segment", in("ann", "GET", "/peoplex"), true},
		{"another method", in("ann", "POST", "/people"), false},
		{"the root grant", in("dan", "DELETE", "/anything"), true},
		{"an unknown user", in("zed", "GET", "/people"), false},
		{"a user without roles", in("eve", "GET", "/people"), false},
	}, func(in workload.EnvoyInput) []byte { return envoyRequest(in.User, in.Method, in.Path, in.Host) },
		func(in workload.EnvoyInput) bool { allow, _ := d.Decide(in); return allow })
}

// Every kind of rules-<kind>-<N> decides every input as the reference model says in Cedar, at a
// small N and at the largest, one policy per rule: a rule written wrong anywhere in the
// generated file fails here.
func TestRulesAgreeWithTheModel(t *testing.T) {
	sizes := []int{1, 10, workload.MaxRules}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for kind := range rulesPolicy {
		for _, n := range sizes {
			name := fmt.Sprintf("rules-%s-%d", kind, n)
			t.Run(name, func(t *testing.T) {
				w := builtinOrFail(t, name)
				if n == workload.MaxRules {
					// An ip policy of 10,000 CIDR rules evaluates every one for each input: a
					// hundred inputs, and the test need not take minutes.
					w.Inputs = w.Inputs[:100]
				}
				if got := prepare(t, w).Policies(); got != n {
					t.Errorf("the Cedar version holds %d policies; want %d", got, n)
				}
				if s := w.Scale.Series(Name); s != "rules-"+kind+"/cedar-policies" {
					t.Errorf("series %q", s)
				}
				checkAgainstModel(t, w)
			})
		}
	}
}

// A built-in's Cedar version is the same on every build from the same seed: its files and every
// request, byte for byte.
func TestBuiltinsAreTheSameEveryBuild(t *testing.T) {
	for _, name := range []string{"nop", "rbac", "api", "risk", "envoy", "docshare-20", "gdrive-50", "github-50", "tinytodo-50", "rules-ip-10", "rbac-data-100"} {
		a, b := builtinOrFail(t, name), builtinOrFail(t, name)
		if !reflect.DeepEqual(filesOf(a), filesOf(b)) || Engine.(engine.Handed).Handed(a) != Engine.(engine.Handed).Handed(b) {
			t.Errorf("%s: the Cedar version differs between two builds", name)
		}
		for i := range a.Inputs {
			if x, y := Engine.Request(a.Inputs[i]), Engine.Request(b.Inputs[i]); !bytes.Equal(x, y) {
				t.Fatalf("%s input %d: the Cedar request differs between two builds:\n%s\n%s", name, i+1, x, y)
			}
		}
	}
}
