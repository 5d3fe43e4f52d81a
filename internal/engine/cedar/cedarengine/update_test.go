package cedarengine

import (
	"strings"
	"testing"
)

// An update builds a new engine and leaves the old one deciding as before: entities put and
// deleted are seen by the new one only, and an update that would make a cycle of parents or
// deletes what is not there is refused.
func TestWithLeavesTheEngineBeforeIt(t *testing.T) {
	e, err := New([]Source{{Name: "p.cedar", Text: []byte(`permit (principal in Group::"staff", action, resource);`)}},
		&Source{Name: "e.json", Text: []byte(`[{"uid": {"type": "User", "id": "ann"}, "attrs": {}, "parents": [{"type": "Group", "id": "staff"}]},
			{"uid": {"type": "Group", "id": "staff"}, "attrs": {}, "parents": []}]`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(e *Engine, r *Request) bool {
		d, _ := e.DecideCurrent(r)
		return bool(d)
	}
	ann, err := e.ParseRequest([]byte(`{"principal": {"type": "User", "id": "ann"}, "action": {"type": "Action", "id": "view"}, "resource": {"type": "Doc", "id": "d"}}`))
	if err != nil {
		t.Fatal(err)
	}
	bob, err := e.ParseRequest([]byte(`{"principal": {"type": "User", "id": "bob"}, "action": {"type": "Action", "id": "view"}, "resource": {"type": "Doc", "id": "d"}}`))
	if err != nil {
		t.Fatal(err)
	}
	u, err := ReadUpdate([]byte(`{"entities": [{"uid": {"type": "User", "id": "bob"}, "attrs": {}, "parents": [{"type": "Group", "id": "staff"}]}],
		"delete": ["User::\"ann\""]}`))
	if err != nil {
		t.Fatal(err)
	}
	n, err := e.With("u", u)
	if err != nil {
		t.Fatal(err)
	}
	if !ask(e, &ann) || ask(e, &bob) {
		t.Errorf("the engine before the update changed: ann %v, bob %v", ask(e, &ann), ask(e, &bob))
	}
	if ask(n, &ann) || !ask(n, &bob) {
		t.Errorf("the updated engine: ann %v, bob %v; want ann deleted and bob put", ask(n, &ann), ask(n, &bob))
	}
	live := NewLive(e)
	if err := live.Update("u", u); err != nil || live.Engine() == e || !ask(live.Engine(), &bob) {
		t.Errorf("Live.Update: %v", err)
	}
	// A new policy set, and the old engine still deciding with its own.
	forbid, err := ReadUpdate([]byte(`{"policies": ["permit (principal in Group::\"staff\", action, resource);\nforbid (principal == User::\"ann\", action, resource);"]}`))
	if err != nil {
		t.Fatal(err)
	}
	f, err := e.With("u", forbid)
	if err != nil {
		t.Fatal(err)
	}
	if ask(f, &ann) || !ask(e, &ann) || f.Policies() != 2 {
		t.Errorf("policies replaced: ann %v, before %v, %d policies", ask(f, &ann), ask(e, &ann), f.Policies())
	}
	for _, c := range []struct{ update, want string }{
		{`{"policies": ["permit (principal, action, resource"]}`, "u policies 1:1:"},
		{`{"policies": ["permit (principal == ?principal, action, resource);"]}`, "an update links no template"},
		{`{"policies": []}`, "would leave no policy"},
		{`{"entities": [{"uid": {"type": "Group", "id": "staff"}, "attrs": {}, "parents": [{"type": "User", "id": "ann"}]}]}`, "cycle"},
		{`{"delete": [{"type": "User", "id": "zed"}]}`, `no entity User::"zed"`},
		{`{"entity": []}`, `unknown field "entity"`},
		{`{}`, "no \"entities\""},
	} {
		u, err := ReadUpdate([]byte(c.update))
		if err == nil {
			_, err = e.With("u", u)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.update, err, c.want)
		}
	}
}
