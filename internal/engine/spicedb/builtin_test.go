package spicedb

import (
	"context"
	"strings"
	"testing"

	"github.com/authzed/spicedb/pkg/tuple"

	"github.com/authzbench/authzbench/internal/workload"
)

// decideAll checks every assertion of f on a fresh engine and fails the test with the number
// that do not decide as expected, showing the first few.
func decideAll(t *testing.T, f *Fixture) {
	t.Helper()
	e := start(t, f)
	wrong := 0
	for _, a := range f.Assertions {
		allowed, err := e.Check(context.Background(), e.Prepare(a))
		if err := a.Verify(allowed, err); err != nil {
			wrong++
			if wrong <= 5 {
				t.Error(err)
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d assertions do not decide as their inputs expect", wrong, len(f.Assertions))
	}
}

// The ground truth that SpiceDB decides every input of every built-in with a SpiceDB version as
// OPA, Cedar and OpenFGA do: each input's expected decision comes from the workload's Go
// reference model, which the other engines' tests hold them to.
func TestBuiltinsDecideAsTheirInputsExpect(t *testing.T) {
	for _, name := range []string{"nop", "rbac", "rbac-data-10", "rbac-data-1000", "docshare-3", "docshare-50",
		"gdrive-100", "github-100", "tinytodo-100"} {
		t.Run(name, func(t *testing.T) {
			w, err := workload.Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			if !HasBuiltin(w) || WhyNot(w) != "" {
				t.Fatalf("HasBuiltin %v, WhyNot %q: want a SpiceDB version", HasBuiltin(w), WhyNot(w))
			}
			f, err := BuiltinFixture(w)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Assertions) != len(w.Inputs) {
				t.Fatalf("%d assertions for %d inputs", len(f.Assertions), len(w.Inputs))
			}
			allow, deny := 0, 0
			for i, a := range f.Assertions {
				want := ExpectDenied
				if w.Inputs[i].Expect == workload.ExpectAllow {
					want, allow = ExpectAllowed, allow+1
				} else {
					deny++
				}
				if a.Expect != want {
					t.Fatalf("assertion %d expects %s, its input %s", i+1, a.Expect, w.Inputs[i].Expect)
				}
			}
			// A schema that allowed everything would pass nop alone.
			if name != "nop" && (allow == 0 || deny == 0) {
				t.Fatalf("%d allows and %d denies: both decisions must be asked", allow, deny)
			}
			decideAll(t, f)
		})
	}
}

// docshare's requests carry entities of one world: stored together they decide each request
// as its own entities do, so no request needs objects of its own, and the ‡ note says so.
func TestDocshareStoresEveryRequestsEntities(t *testing.T) {
	w, err := workload.Builtin("docshare-10")
	if err != nil {
		t.Fatal(err)
	}
	fam, _ := builtinFamilyOf(w)
	f, stats, err := builtinWorld(w, fam)
	if err != nil {
		t.Fatal(err)
	}
	if stats.requests != len(w.Inputs) || stats.carried == 0 || stats.total != len(f.Relationships) {
		t.Errorf("stats %+v: want every one of %d requests carrying relationships, all stored (%d)", stats, len(w.Inputs), len(f.Relationships))
	}
	if stats.ownInputs != 0 {
		t.Errorf("%d requests given a world of their own; docshare's entities agree across requests", stats.ownInputs)
	}
	d := Differences(w)
	for _, says := range []string{"spicedb issue 1398", "the entities each request carries are stored before the clock", "each decides as its own entities do"} {
		if !strings.Contains(d, says) {
			t.Errorf("Differences %q does not say %q", d, says)
		}
	}
	if Differences(mustBuiltin(t, "rbac")) != "" {
		t.Errorf("rbac's SpiceDB version does rbac's work; Differences says %q", Differences(mustBuiltin(t, "rbac")))
	}
	if !strings.Contains(Differences(mustBuiltin(t, "tinytodo-10")), "intern") {
		t.Error("tinytodo's Differences does not say SpiceDB is handed who is an intern")
	}
}

func mustBuiltin(t *testing.T, name string) *workload.Workload {
	t.Helper()
	w, err := workload.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Requests whose entities contradict each other once all are stored: each such request is asked
// in a world of its own, and the others are not.
func TestContradictingRequestsGetWorldsOfTheirOwn(t *testing.T) {
	check := func(user, relation, object string, ctx ...string) []byte {
		var tuples []string
		for _, c := range ctx {
			parts := strings.Split(c, " ")
			tuples = append(tuples, `{"user":"`+parts[0]+`","relation":"`+parts[1]+`","object":"`+parts[2]+`"}`)
		}
		return []byte(`{"user":"` + user + `","relation":"` + relation + `","object":"` + object + `","contextual_tuples":[` + strings.Join(tuples, ",") + `]}`)
	}
	w := &workload.Workload{
		Name: "docshare-3",
		OpenFGA: &workload.OpenFGA{Model: "docshare.fga",
			Tuples: []byte(`{"user":"folder:f","relation":"parent","object":"document:d"}` + "\n" +
				`{"user":"user:c","relation":"viewer","object":"folder:f"}` + "\n" +
				// A wildcard stays a wildcard in a world of one's own.
				`{"user":"user:*","relation":"archive","object":"folder:f"}` + "\n")},
		Inputs: []workload.Input{
			// 1: a views d as its viewer.
			{Expect: workload.ExpectAllow, OpenFGA: check("user:a", "can_view", "document:d", "user:a viewer document:d", "user:o owner document:d")},
			// 2: the same document without a on its list: a's viewer tuple from 1 would allow.
			{Expect: workload.ExpectDeny, OpenFGA: check("user:a", "can_view", "document:d", "user:o owner document:d")},
			// 3: another document, none of whose paths the others' tuples touch.
			{Expect: workload.ExpectAllow, OpenFGA: check("user:b", "can_view", "document:e", "user:b owner document:e")},
			// 4: a group with no members in this request: 5's membership would allow, two hops away.
			{Expect: workload.ExpectDeny, OpenFGA: check("user:a", "can_view", "document:d2", "group:g#member viewer document:d2")},
			// 5: a in g, asking a document with no tuples.
			{Expect: workload.ExpectDeny, OpenFGA: check("user:a", "can_edit", "document:d3", "user:a member group:g")},
			// 6: c blocked on d, though the stored folder shares d with c.
			{Expect: workload.ExpectDeny, OpenFGA: check("user:c", "can_view", "document:d", "user:c blocked document:d")},
			// 7: c views d through the stored folder; 6's block would deny. It carries a tuple the
			// store holds too: its world holds it once.
			{Expect: workload.ExpectAllow, OpenFGA: check("user:c", "can_view", "document:d", "folder:f parent document:d")},
			// 8: not even its owner may edit d, in the archived folder.
			{Expect: workload.ExpectDeny, OpenFGA: check("user:o", "can_edit", "document:d", "user:o owner document:d")},
		},
	}
	fam, _ := builtinFamilyOf(w)
	f, stats, err := builtinWorld(w, fam)
	if err != nil {
		t.Fatal(err)
	}
	decideAll(t, f)
	distinct := map[string]bool{}
	for _, r := range f.Relationships {
		distinct[tuple.StringWithoutCaveatOrExpiration(r.Rel)] = true
	}
	if len(distinct) != len(f.Relationships) || stats.total != len(f.Relationships) {
		t.Errorf("%d relationships stored, %d distinct, %d counted: each once", len(f.Relationships), len(distinct), stats.total)
	}
	if stats.ownInputs != 3 {
		t.Errorf("%d requests with worlds of their own, want 3 (inputs 2, 4 and 7)", stats.ownInputs)
	}
	for i, own := range []bool{false, true, false, true, false, false, true, false} {
		if renamed := strings.HasPrefix(f.Assertions[i].Resource.ObjectID, "input"); renamed != own {
			t.Errorf("input %d asks %s; a world of its own: %v, want %v", i+1, f.Assertions[i], renamed, own)
		}
	}
	if d := Differences(w); !strings.Contains(d, "3 requests whose decision another request's relationships could change") {
		t.Errorf("Differences %q does not count the requests with worlds of their own", d)
	}
}

// api and risk compute what SpiceDB cannot; they have no version, and say why.
func TestNoBuiltinSaysWhy(t *testing.T) {
	for name, says := range map[string]string{"api": "JWT", "risk": "sum", "envoy": "Envoy", "rules-path-10": "rules"} {
		t.Run(name, func(t *testing.T) {
			w := mustBuiltin(t, name)
			f, err := BuiltinFixture(w)
			if f != nil || err != nil || HasBuiltin(w) {
				t.Fatalf("BuiltinFixture %v, %v, HasBuiltin %v: want no version", f, err, HasBuiltin(w))
			}
			if why := WhyNot(w); !strings.Contains(why, says) {
				t.Errorf("WhyNot %q does not say %q", why, says)
			}
		})
	}
	// A user's OpenFGA files named like a built-in are still the user's.
	user := &workload.Workload{Name: "rbac", OpenFGA: &workload.OpenFGA{StorePath: "store.fga.yaml"}}
	if HasBuiltin(user) || !strings.Contains(WhyNot(user), "user's own") {
		t.Errorf("a user's store file: HasBuiltin %v, WhyNot %q", HasBuiltin(user), WhyNot(user))
	}
	// So are files another engine's package read (a user's Cedar files, as its version).
	cedarUser := &workload.Workload{Name: "rbac", Versions: map[string]*workload.Version{"cedar": {Files: map[string]string{"policies": "p.cedar"}}}}
	if !strings.Contains(WhyNot(cedarUser), "user's own") {
		t.Errorf("a user's Cedar files: WhyNot %q", WhyNot(cedarUser))
	}
}

// One relationship carried under two conditions cannot be stored once for both requests.
func TestBuiltinRefusesATupleCarriedUnderTwoConditions(t *testing.T) {
	w := &workload.Workload{
		Name:    "docshare-3",
		OpenFGA: &workload.OpenFGA{Model: "docshare.fga"},
		Inputs: []workload.Input{
			{Expect: workload.ExpectAllow, OpenFGA: []byte(`{"user":"user:a","relation":"can_view","object":"document:d","contextual_tuples":[{"user":"user:a","relation":"viewer","object":"document:d"}]}`)},
			{Expect: workload.ExpectDeny, OpenFGA: []byte(`{"user":"user:a","relation":"can_view","object":"document:d","contextual_tuples":[{"user":"user:a","relation":"viewer","object":"document:d","condition":{"name":"in_hours","context":{"hour":3}}}]}`)},
		},
	}
	_, err := BuiltinFixture(w)
	if err == nil || !strings.Contains(err.Error(), "input 2 contextual tuple 1") || !strings.Contains(err.Error(), "input 1 contextual tuple 1") {
		t.Errorf("error %v: want both inputs named", err)
	}
}

// A tuple the schema has no relation for names the tuple's line.
func TestBuiltinNamesTheTupleSpiceDBCannotHold(t *testing.T) {
	w := mustBuiltin(t, "rbac")
	w.OpenFGA.Tuples = append(append([]byte{}, w.OpenFGA.Tuples...), `{"user":"user:x","relation":"approver","object":"kind:document"}`+"\n"...)
	_, err := BuiltinFixture(w)
	if err == nil || !strings.Contains(err.Error(), "workload rbac tuple line") || !strings.Contains(err.Error(), "approver") {
		t.Errorf("error %v: want the tuple's line and its relation", err)
	}
}

// Every built-in with an OpenFGA version has a SpiceDB version, and every other says why: a new
// family written for OpenFGA fails here until it is written for SpiceDB too.
func TestEveryOpenFGABuiltinHasASpiceDBVersion(t *testing.T) {
	names := append(workload.Names(), "rbac-data-10", "docshare-7", "gdrive-10", "github-10", "tinytodo-10", "rules-path-10")
	for _, name := range names {
		w, err := workload.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if HasBuiltin(w) != w.HasOpenFGA() {
			t.Errorf("%s: HasBuiltin %v, an OpenFGA version %v", name, HasBuiltin(w), w.HasOpenFGA())
		}
		if !HasBuiltin(w) && WhyNot(w) == "" {
			t.Errorf("%s has no SpiceDB version and WhyNot says nothing", name)
		}
	}
}
