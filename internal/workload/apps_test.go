package workload

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// appSizes are the sizes the app tests generate: the smallest world, and one large enough that
// folders, groups and teams nest to their full depth.
var appSizes = []int{MinAppSize, 200}

// CheckAgainstOpenFGA asks OpenFGA every check of an app's OpenFGA version and fails the test
// for each decision that differs from the one the reference model expects. OpenFGA's package
// imports this one, so the checker is set from an external test file (apps_openfga_test.go):
// the export_test pattern, which keeps the cycle out of the build.
var CheckAgainstOpenFGA func(t *testing.T, name string, f *AppFGA)

func checkAgainstOpenFGA(t *testing.T, name string, f *AppFGA) {
	t.Helper()
	if CheckAgainstOpenFGA == nil {
		t.Fatal("no OpenFGA checker: apps_openfga_test.go sets it")
	}
	CheckAgainstOpenFGA(t, name, f)
}

// checkApp builds an app at each test size and checks OpenFGA against the reference model on
// every input (OPA and Cedar are checked in their packages), and that the inputs are decided
// by every rule the app has.
func checkApp(t *testing.T, app string, allows, denies []string) {
	for _, n := range appSizes {
		name := app + "-" + itoa(n)
		t.Run(name, func(t *testing.T) {
			b, err := buildApp(name, DefaultSeed, DefaultInputs)
			if err != nil {
				t.Fatal(err)
			}
			w := b.workload
			if w.Name != name || w.Description == "" || w.Scale == nil || w.Scale.N != n {
				t.Errorf("workload identity: name %q, description %q, scale %+v", w.Name, w.Description, w.Scale)
			}
			denyReasons := checkInputs(t, w)
			if len(b.openfga.Checks) != len(w.Inputs) {
				t.Fatalf("%d OpenFGA checks for %d inputs", len(b.openfga.Checks), len(w.Inputs))
			}
			checkAgainstOpenFGA(t, name, b.openfga)
			allowReasons := map[string]int{}
			for _, in := range w.Inputs {
				if in.Expect == ExpectAllow {
					allowReasons[in.Reason]++
				}
			}
			for _, want := range allows {
				if allowReasons[want] == 0 {
					t.Errorf("no input is allowed for %q; allow reasons %v", want, allowReasons)
				}
			}
			for _, want := range denies {
				if denyReasons[want] == 0 {
					t.Errorf("no input is denied for %q; deny reasons %v", want, denyReasons)
				}
			}
			t.Logf("%s: allow reasons %v", name, allowReasons)
		})
	}
}

func TestGdriveMatchesReferenceModel(t *testing.T) {
	checkApp(t, "gdrive",
		[]string{"allow: owner", "allow: folder owner", "allow: editor", "allow: viewer", "allow: public"},
		[]string{"deny: not owner", "deny: read only", "deny: sharing restricted", "deny: no access"})
}

func TestGithubMatchesReferenceModel(t *testing.T) {
	checkApp(t, "github",
		[]string{"allow: owner", "allow: org owner", "allow: base permission", "allow: collaborator", "allow: team", "allow: public"},
		[]string{"deny: archived", "deny: role too low", "deny: no access"})
}

func TestTinytodoMatchesReferenceModel(t *testing.T) {
	checkApp(t, "tinytodo",
		[]string{"allow: owner", "allow: editor", "allow: reader"},
		[]string{"deny: intern", "deny: not owner", "deny: read only", "deny: no access"})
}

// An app is the same world and the same inputs on every build, in every engine's form, and
// AppOpenFGA's check i asks what the workload's input i asks.
func TestAppsAreReproducibleAndAligned(t *testing.T) {
	for _, name := range []string{"gdrive-50", "github-50", "tinytodo-50"} {
		a, err := buildApp(name, DefaultSeed, 300)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := AppOpenFGA(name, DefaultSeed, DefaultInputs)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.workload.Model, b.Model) ||
			!slices.Equal(a.openfga.Tuples, f.Tuples) {
			t.Errorf("%s: two builds hold different worlds", name)
		}
		if len(f.Checks) != len(b.Inputs) {
			t.Fatalf("%s: %d checks for %d inputs", name, len(f.Checks), len(b.Inputs))
		}
		for i, in := range b.Inputs {
			if i < len(a.workload.Inputs) && !bytes.Equal(a.workload.Inputs[i].JSON, in.JSON) {
				t.Fatalf("%s input %d: %s, then %s", name, i, a.workload.Inputs[i].JSON, in.JSON)
			}
			var q struct{ User, Action, Resource string }
			if err := json.Unmarshal(in.JSON, &q); err != nil {
				t.Fatal(err)
			}
			c := f.Checks[i]
			if c.User != "user:"+q.User || c.Relation != "can_"+q.Action || !strings.HasSuffix(c.Object, ":"+q.Resource) ||
				c.Expect != in.Expect {
				t.Fatalf("%s input %d %s asks %+v of OpenFGA", name, i, in.JSON, c)
			}
		}
	}
}
