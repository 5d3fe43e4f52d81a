package workload

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// appSizes are the sizes the app tests generate: the smallest world, and one large enough that
// folders, groups and teams nest to their full depth.
var appSizes = []int{MinAppSize, 200}

// checkApp builds an app at each test size and checks every input against the reference model
// (each engine's version is checked in its package), that every input has its relationship
// check, and that the inputs are decided by every rule the app has.
func checkApp(t *testing.T, app string, allows, denies []string) {
	for _, n := range appSizes {
		name := app + "-" + itoa(n)
		t.Run(name, func(t *testing.T) {
			w, err := buildApp(name, DefaultSeed, DefaultInputs)
			if err != nil {
				t.Fatal(err)
			}
			if w.Name != name || w.Description == "" || w.Scale == nil || w.Scale.N != n {
				t.Errorf("workload identity: name %q, description %q, scale %+v", w.Name, w.Description, w.Scale)
			}
			denyReasons := checkInputs(t, w)
			if w.Relationships == nil || w.Relationships.Family != app || len(w.Relationships.Checks) != len(w.Inputs) ||
				len(w.Relationships.Relationships) == 0 {
				t.Fatalf("relationship world %+v for %d inputs", w.Relationships, len(w.Inputs))
			}
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
// its relationship check i asks what the workload's input i asks.
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
		if !reflect.DeepEqual(a.Model, b.Model) ||
			!slices.Equal(a.Relationships.Relationships, b.Relationships.Relationships) {
			t.Errorf("%s: two builds hold different worlds", name)
		}
		checks := b.Relationships.Checks
		if len(checks) != len(b.Inputs) {
			t.Fatalf("%s: %d checks for %d inputs", name, len(checks), len(b.Inputs))
		}
		for i, in := range b.Inputs {
			if i < len(a.Inputs) && !bytes.Equal(a.Inputs[i].JSON, in.JSON) {
				t.Fatalf("%s input %d: %s, then %s", name, i, a.Inputs[i].JSON, in.JSON)
			}
			var q struct{ User, Action, Resource string }
			if err := json.Unmarshal(in.JSON, &q); err != nil {
				t.Fatal(err)
			}
			c := checks[i]
			if c.Subject != Obj("user", q.User) || c.Permission != "can_"+q.Action || c.Resource.ID != q.Resource || c.Carried != nil {
				t.Fatalf("%s input %d %s asks %+v", name, i, in.JSON, c)
			}
		}
	}
}
