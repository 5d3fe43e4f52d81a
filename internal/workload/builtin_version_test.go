package workload

import (
	"errors"
	"strings"
	"testing"
)

// An engine's registered version reaches every built-in as it is built, families included, and
// an engine's failure is named with its workload rather than lost.
func TestBuiltinVersionsAreAddedAsBuilt(t *testing.T) {
	const name = "test-engine-of-builtin-versions"
	RegisterBuiltinVersion(BuiltinVersion{Engine: name, Add: func(w *Workload) error {
		switch {
		case w.Name == "risk":
			return errors.New("no translation")
		case w.Name != "nop" && !strings.HasPrefix(w.Name, "rules-"):
			return nil
		}
		if w.Versions == nil {
			w.Versions = map[string]*Version{}
		}
		w.Versions[name] = &Version{}
		for i := range w.Inputs {
			if w.Inputs[i].Requests == nil {
				w.Inputs[i].Requests = map[string]EngineRequest{}
			}
			w.Inputs[i].Requests[name] = EngineRequest{Body: []byte("x")}
		}
		return nil
	}})
	t.Cleanup(func() { builtinVersions = builtinVersions[:len(builtinVersions)-1] })

	for _, n := range []string{"nop", "rules-path-10"} {
		w, err := Builtin(n)
		if err != nil {
			t.Fatal(err)
		}
		if w.VersionFor(name) == nil || string(w.Inputs[len(w.Inputs)-1].Requests[name].Body) != "x" {
			t.Errorf("%s: the registered version was not added", n)
		}
	}
	if w, err := Builtin("rbac"); err != nil || w.VersionFor(name) != nil {
		t.Errorf("rbac: got version %v, err %v; want none", w.VersionFor(name), err)
	}
	if _, err := Builtin("risk"); err == nil || !strings.Contains(err.Error(), name+"'s version of workload risk: no translation") {
		t.Errorf("risk: got %v, want the engine's failure named", err)
	}
}
