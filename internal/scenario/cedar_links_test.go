package scenario

import (
	"path/filepath"
	"testing"
)

// template_links in a scenario file is found beside the file, as the other Cedar files are, and
// reaches the workload's spec.
func TestParseCedarTemplateLinks(t *testing.T) {
	dir := filepath.Join("..", "engine", "cedar", "testdata", "cedar-apps", "templates")
	yaml := "workloads:\n  - name: photos\n    cedar_policies: [policies.cedar]\n    schema: app.cedarschema\n" +
		"    entities: entities.json\n    template_links: links.json\n    requests: requests.jsonl\n" +
		"targets: [cedar/inproc]\n"
	s, err := Parse("s.yaml", []byte(yaml), dir)
	if err != nil {
		t.Fatal(err)
	}
	u := s.Workloads[len(s.Workloads)-1].User
	if u == nil || u.TemplateLinks != filepath.Join(dir, "links.json") {
		t.Fatalf("workload %+v: want template links %s", u, filepath.Join(dir, "links.json"))
	}
}
