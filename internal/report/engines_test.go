package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// The engines linked in are printed from the result's engines map, whatever engines it names;
// a result written before the map existed prints its opa and cedar fields as it always did.
func TestEngineVersionsFollowTheResult(t *testing.T) {
	render := func(t *testing.T, doc *result.Document) map[string]string {
		out := map[string]string{}
		for name, f := range map[string]func(*bytes.Buffer, *result.Document) error{
			"gobench":    func(b *bytes.Buffer, d *result.Document) error { return GoBench(b, d) },
			"prometheus": func(b *bytes.Buffer, d *result.Document) error { return Prometheus(b, d) },
			"markdown":   func(b *bytes.Buffer, d *result.Document) error { return Markdown(b, d) },
			"html":       func(b *bytes.Buffer, d *result.Document) error { return HTML(b, d) },
		} {
			var b bytes.Buffer
			if err := f(&b, doc); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out[name] = b.String()
		}
		return out
	}
	old := render(t, committedDoc(t, "quickstart-2026-11-23.json"))
	for name, want := range map[string][]string{
		"gobench":    {"opa: 1.22.2\n", "cedar-go: v1.9.0\n"},
		"prometheus": {`opa="1.22.2",cedar_go="v1.9.0"`},
		"markdown":   {"OPA 1.22.2, cedar-go v1.9.0"},
		"html":       {"<dt>cedar-go</dt><dd>v1.9.0</dd>"},
	} {
		for _, w := range want {
			if !strings.Contains(old[name], w) {
				t.Errorf("%s of a result without the engines map: no %q", name, w)
			}
		}
	}

	doc := committedDoc(t, "quickstart-2026-11-23.json")
	doc.Env.Engines = map[string]string{"opa": "1.22.2", "cedar-go": "v1.9.0", "open-fga": "v1.22.1"}
	now := render(t, doc)
	for name, want := range map[string][]string{
		"gobench":    {"cedar-go: v1.9.0\nopa: 1.22.2\nopen-fga: v1.22.1\n"},
		"prometheus": {`cedar_go="v1.9.0",opa="1.22.2",open_fga="v1.22.1"`},
		"markdown":   {"cedar-go v1.9.0, opa 1.22.2, open-fga v1.22.1"},
		"html":       {"<dt>open-fga</dt><dd>v1.22.1</dd>"},
	} {
		for _, w := range want {
			if !strings.Contains(now[name], w) {
				t.Errorf("%s of a result with the engines map: no %q", name, w)
			}
		}
		if strings.Contains(now[name], "OPA 1.22.2") {
			t.Errorf("%s of a result with the engines map still prints the legacy fields", name)
		}
	}
}
