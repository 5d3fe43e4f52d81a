package all

import (
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// The -opt rewrites are OPA's built-ins alone (Rego rewritten from its profile, no reference
// model of their own): no other engine has a version of them, and those that explain why say
// it is a rewrite for OPA.
func TestRewrittenWorkloadsAreOPAsAlone(t *testing.T) {
	says := map[string]string{"casbin": "rewritten for OPA", "spicedb": "Rego only"}
	for _, name := range []string{"rbac-opt", "api-opt", "risk-opt"} {
		w, err := workload.BuiltinWith(name, workload.DefaultSeed, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range engine.All() {
			if written := e.Written(w); written != (e.Name() == "opa") {
				t.Errorf("%s: written in %s: %t", name, engine.Language(e), written)
			}
			if want := says[e.Name()]; want != "" && !strings.Contains(engine.WhyNot(e, w), want) {
				t.Errorf("%s: %s says %q, want it to say %q", name, e.Name(), engine.WhyNot(e, w), want)
			}
		}
	}
}
