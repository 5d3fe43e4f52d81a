package cedarengine

import (
	"fmt"
	"strings"
	"testing"
)

// ent is one entity of an entities file: uid "Type::id", parents the same way.
func ent(uid string, parents ...string) string {
	ref := func(s string) string {
		typ, id, _ := strings.Cut(s, "::")
		return fmt.Sprintf(`{"type": %q, "id": %q}`, typ, id)
	}
	ps := make([]string, len(parents))
	for i, p := range parents {
		ps[i] = ref(p)
	}
	return fmt.Sprintf(`{"uid": %s, "attrs": {}, "parents": [%s]}`, ref(uid), strings.Join(ps, ", "))
}

func entitiesFile(ents ...string) string { return "[\n" + strings.Join(ents, ",\n") + "\n]" }

// An entity graph whose parents form a cycle is refused at load, naming the file, the place of
// the first entity on the cycle and every entity on it, as the Cedar CLI refuses it; a graph
// without one loads, however the parents share ancestors or point outside the file.
func TestParentCycleRefused(t *testing.T) {
	chain := make([]string, 0, 20_000)
	for i := range 20_000 {
		chain = append(chain, ent(fmt.Sprintf("Group::g%d", i), fmt.Sprintf("Group::g%d", i+1)))
	}
	for _, c := range []struct {
		name     string
		entities string
		schema   string
		want     string // the error; empty: loads
	}{
		{name: "self-parent", entities: entitiesFile(ent("User::a", "User::a")),
			want: `entities.json:2:1: parent cycle: User::"a" -> User::"a"`},
		{name: "two entities", entities: entitiesFile(ent("User::a", "Group::g"), ent("Group::g", "User::a")),
			want: `entities.json:2:1: parent cycle: User::"a" -> Group::"g" -> User::"a"`},
		{name: "three entities, found from the last", entities: entitiesFile(
			ent("Org::o", "User::a"), ent("Group::g", "Org::o"), ent("Team::x"), ent("User::a", "Group::g")),
			want: `entities.json:2:1: parent cycle: Org::"o" -> User::"a" -> Group::"g" -> Org::"o"`},
		{name: "cycle away from the first entities", entities: entitiesFile(
			ent("User::u", "Group::g1"), ent("Group::g1"), ent("Group::c1", "Group::c2"), ent("Group::c2", "Group::c1")),
			want: `entities.json:4:1: parent cycle: Group::"c1" -> Group::"c2" -> Group::"c1"`},
		{name: "action entities", entities: entitiesFile(ent("Action::read", "Action::all"), ent("Action::all", "Action::read")),
			want: `parent cycle: Action::"read" -> Action::"all" -> Action::"read"`},
		{name: "entities file closing a cycle through the schema's actions",
			schema:   "entity User;\naction all;\naction read in [all] appliesTo { principal: User, resource: User };",
			entities: entitiesFile(ent("Action::all", "Action::read")),
			want:     `entities.json:2:1: parent cycle: Action::"all" -> Action::"read" -> Action::"all"`},
		{name: "diamond", entities: entitiesFile(
			ent("User::a", "Group::l", "Group::r"), ent("Group::l", "Org::o"), ent("Group::r", "Org::o"), ent("Org::o"))},
		{name: "parent not in the file", entities: entitiesFile(ent("User::a", "Group::missing"), ent("Group::g", "User::a"))},
		{name: "chain of 20,000", entities: entitiesFile(chain...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			entities := &Source{Name: "entities.json", Text: []byte(c.entities)}
			var schema *Source
			if c.schema != "" {
				schema = &Source{Name: "app.cedarschema", Text: []byte(c.schema)}
			}
			_, err := New([]Source{{Name: "policies.cedar", Text: []byte(`permit (principal, action, resource);`)}}, entities, schema)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused a graph without a cycle: %v", err)
			case c.want != "" && err == nil:
				t.Fatalf("loaded; want %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %q, want %q", err, c.want)
			}
		})
	}
}

// A request that brings entities is checked before any load for a cycle among them, or through
// the store: its parents may name an entity of the store whose parents name one of its own.
func TestRequestEntitiesParentCycleRefused(t *testing.T) {
	e, err := New([]Source{{Name: "policies.cedar", Text: []byte(`permit (principal in Group::"g", action, resource);`)}},
		&Source{Name: "entities.json", Text: []byte(entitiesFile(ent("User::a", "Group::g"), ent("Doc::d")))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	request := func(ents ...string) []byte {
		return []byte(`{"principal": "User::\"a\"", "action": "Action::\"view\"", "resource": "Doc::\"d\"", "entities": ` + entitiesFile(ents...) + `}`)
	}
	for _, c := range []struct {
		name string
		ents []string
		want string
	}{
		{"through the store", []string{ent("Group::g", "User::a")}, `"entities": parent cycle: Group::"g" -> User::"a" -> Group::"g"`},
		{"among its own", []string{ent("Team::t", "Org::o"), ent("Org::o", "Team::t")}, `"entities": parent cycle: Org::"o" -> Team::"t" -> Org::"o"`},
		{"self-parent", []string{ent("Team::t", "Team::t")}, `"entities": parent cycle: Team::"t" -> Team::"t"`},
		{"none", []string{ent("Group::g", "Org::o"), ent("Org::o")}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _, err := e.ParseRequestWarning(request(c.ents...))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused a request without a cycle: %v", err)
			case c.want == "":
				if dec, _ := e.Decide(&r); !bool(dec) {
					t.Error("User::a in Group::g in Org::o: want allow")
				}
			case err == nil || !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}
