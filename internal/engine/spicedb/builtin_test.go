package spicedb

import (
	"context"
	"fmt"
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

// rel reads "subject relation resource" ("group:g#member viewer document:d2") for a test's
// hand-written world.
func rel(t *testing.T, s string) workload.Relationship {
	t.Helper()
	parts := strings.Split(s, " ")
	if len(parts) != 3 {
		t.Fatalf("%q is not subject relation resource", s)
	}
	node, relation, _ := strings.Cut(parts[0], "#")
	return workload.Relate(obj(t, parts[2]), parts[1], obj(t, node).Set(relation))
}

// obj reads "type:id".
func obj(t *testing.T, s string) workload.Object {
	t.Helper()
	typ, id, ok := strings.Cut(s, ":")
	if !ok {
		t.Fatalf("%q is not type:id", s)
	}
	return workload.Obj(typ, id)
}

// Requests whose entities contradict each other once all are stored: each such request is asked
// in a world of its own, and the others are not.
func TestContradictingRequestsGetWorldsOfTheirOwn(t *testing.T) {
	w := &workload.Workload{Name: "docshare-3", Relationships: &workload.RelationshipWorld{Family: "docshare",
		Relationships: []workload.Relationship{rel(t, "folder:f parent document:d"), rel(t, "user:c viewer folder:f"),
			// A wildcard stays a wildcard in a world of one's own.
			rel(t, "user:* archive folder:f")}}}
	ask := func(expect workload.Expect, user, permission, resource string, carried ...string) {
		c := workload.RelationshipCheck{Subject: obj(t, user), Permission: permission, Resource: obj(t, resource)}
		for _, r := range carried {
			c.Carried = append(c.Carried, rel(t, r))
		}
		w.Inputs = append(w.Inputs, workload.Input{Expect: expect})
		w.Relationships.Checks = append(w.Relationships.Checks, c)
	}
	// 1: a views d as its viewer.
	ask(workload.ExpectAllow, "user:a", "can_view", "document:d", "user:a viewer document:d", "user:o owner document:d")
	// 2: the same document without a on its list: a's viewer relationship from 1 would allow.
	ask(workload.ExpectDeny, "user:a", "can_view", "document:d", "user:o owner document:d")
	// 3: another document, none of whose paths the others' relationships touch.
	ask(workload.ExpectAllow, "user:b", "can_view", "document:e", "user:b owner document:e")
	// 4: a group with no members in this request: 5's membership would allow, two hops away.
	ask(workload.ExpectDeny, "user:a", "can_view", "document:d2", "group:g#member viewer document:d2")
	// 5: a in g, asking a document with no relationships.
	ask(workload.ExpectDeny, "user:a", "can_edit", "document:d3", "user:a member group:g")
	// 6: c blocked on d, though the stored folder shares d with c.
	ask(workload.ExpectDeny, "user:c", "can_view", "document:d", "user:c blocked document:d")
	// 7: c views d through the stored folder; 6's block would deny. It carries a relationship the
	// store holds too: its world holds it once.
	ask(workload.ExpectAllow, "user:c", "can_view", "document:d", "folder:f parent document:d")
	// 8: not even its owner may edit d, in the archived folder.
	ask(workload.ExpectDeny, "user:o", "can_edit", "document:d", "user:o owner document:d")
	if err := addBuiltin(w); err != nil {
		t.Fatal(err)
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
	user := &workload.Workload{Name: "rbac", Versions: map[string]*workload.Version{"openfga": {Files: map[string]string{"store": "store.fga.yaml"}}}}
	if HasBuiltin(user) || !strings.Contains(WhyNot(user), "user's own") {
		t.Errorf("a user's store file: HasBuiltin %v, WhyNot %q", HasBuiltin(user), WhyNot(user))
	}
	// So are files another engine's package read (a user's Cedar files, as its version).
	cedarUser := &workload.Workload{Name: "rbac", Versions: map[string]*workload.Version{"cedar": {Files: map[string]string{"policies": "p.cedar"}}}}
	if !strings.Contains(WhyNot(cedarUser), "user's own") {
		t.Errorf("a user's Cedar files: WhyNot %q", WhyNot(cedarUser))
	}
}

// A relationship the schema has no relation for names the relationship and where it was written.
func TestBuiltinNamesTheRelationshipSpiceDBCannotHold(t *testing.T) {
	w := mustBuiltin(t, "rbac")
	w.Relationships.Relationships = append(w.Relationships.Relationships, rel(t, "user:x approver kind:document"))
	_, err := BuiltinFixture(w)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("workload rbac relationship %d", len(w.Relationships.Relationships))) ||
		!strings.Contains(err.Error(), "approver") {
		t.Errorf("error %v: want the relationship, its number and its relation", err)
	}
}

// Every relationship family has a SpiceDB version, and every other workload says why it has
// none: a new family fails here until it is written for SpiceDB too.
func TestEveryRelationshipFamilyHasASpiceDBVersion(t *testing.T) {
	names := append(workload.Names(), "rbac-data-10", "docshare-7", "gdrive-10", "github-10", "tinytodo-10", "rules-path-10")
	for _, name := range names {
		w, err := workload.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if HasBuiltin(w) != (w.Relationships != nil) {
			t.Errorf("%s: HasBuiltin %v, a relationship world %v", name, HasBuiltin(w), w.Relationships != nil)
		}
		if !HasBuiltin(w) && WhyNot(w) == "" {
			t.Errorf("%s has no SpiceDB version and WhyNot says nothing", name)
		}
	}
}
