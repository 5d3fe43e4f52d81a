package profile

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A report keeps its totals when cut to its hottest lines, prints each line with its share, and
// reads back from its JSON as it was.
func TestReportTopAndRendering(t *testing.T) {
	rep := &Report{Workload: "loop", Query: "data.loop.allow", Inputs: 2, Evaluations: 4, TotalNS: 4_000_000,
		Lines: []Line{
			{File: "loop.rego", Line: 8, Source: "some x in data.loop.items", TimeNS: 3_000_000, Evals: 800, Redos: 796, Share: 0.75},
			{File: "loop.rego", Line: 5, Source: "allow if input.n > 0", TimeNS: 900_000, Evals: 8, Share: 0.225},
			{File: "", Line: 1, Source: "(the query data.loop.allow)", TimeNS: 100_000, Evals: 4, Share: 0.025},
		}}
	top := rep.Top(2)
	if len(top.Lines) != 2 || top.TotalNS != rep.TotalNS || len(rep.Lines) != 3 {
		t.Fatalf("top 2: %d lines, total %d; want 2 lines and the total of all 3, the report itself untouched", len(top.Lines), top.TotalNS)
	}
	if all := rep.Top(0); len(all.Lines) != 3 {
		t.Errorf("top 0 kept %d lines, want all 3", len(all.Lines))
	}
	var table bytes.Buffer
	if err := top.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"workload loop, data.loop.allow: 4 evaluations of 2 inputs, 4.0ms in profiled expressions",
		"loop.rego:8", "3.0ms", "75.0%", "796", "some x in data.loop.items", "loop.rego:5", "22.5%", "read the shares"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if strings.Contains(table.String(), "(the query") {
		t.Errorf("table shows a line past the top 2:\n%s", table.String())
	}
	var js bytes.Buffer
	if err := top.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Lines) != 2 || back.Lines[0] != top.Lines[0] || back.TotalNS != rep.TotalNS {
		t.Errorf("JSON does not read back as the report: %v\n%s", err, js.String())
	}
}
