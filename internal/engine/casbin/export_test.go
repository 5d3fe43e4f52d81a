package casbin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Every family's export reads back through the user-file path (--policy model --policy policy
// --inputs requests) as the same workload: as many inputs, each with the built-in's expected
// decision, and Casbin gives every one of them that decision. The requests take the CSV form
// where every value is a string (nop, rbac) and JSON Lines where some are not (api's numbers,
// the rule families' lists of groups).
func TestExportReadsBackAsUserFiles(t *testing.T) {
	for _, tc := range []struct{ name, requests string }{
		{"nop", requestsCSV}, {"rbac", requestsCSV}, {"rbac-data-10", requestsCSV}, {"api", requestsJSONL},
		{"rules-ip-10", requestsJSONL}, {"rules-principal-10-indexed", requestsJSONL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			built, err := workload.Builtin(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := Registered.(engine.Exported).Export(built, dir); err != nil {
				t.Fatal(err)
			}
			files, err := builtinFiles(built)
			if err != nil {
				t.Fatal(err)
			}
			p := func(name string) string { return filepath.Join(dir, name) }
			if _, err := os.Stat(p(tc.requests)); err != nil {
				t.Fatalf("requests not written as %s: %v", tc.requests, err)
			}
			w := userWorkload(t, []string{p(files.ModelName), p(files.PolicyName)}, nil, p(tc.requests))
			if len(w.Inputs) != len(built.Inputs) {
				t.Fatalf("%d inputs read back, want %d", len(w.Inputs), len(built.Inputs))
			}
			l, err := Load(context.Background(), nil, w)
			if err != nil {
				t.Fatal(err)
			}
			for i, in := range w.Inputs {
				if in.Expect != built.Inputs[i].Expect {
					t.Fatalf("%s: expects %s, the built-in's input %d %s", in.Source, in.Expect, i+1, built.Inputs[i].Expect)
				}
				if c := verify.Classify(in.Expect, l.Decide(i)); c != verify.OK {
					t.Fatalf("%s: %s; request %s", in.Source, verify.Name(c, 0), Registered.Request(in))
				}
			}
		})
	}
}

// show prints the model whole, the policy's first lines with how many more there are, and the
// first requests; a workload without a Casbin version prints nothing of Casbin.
func TestShowPrintsModelPolicyAndRequests(t *testing.T) {
	w, err := workload.Builtin("rules-path-100")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	Registered.(engine.Exported).Show(w, &out)
	files, _ := builtinFiles(w)
	for _, want := range []string{"# === Casbin version (policy: 100 lines) ===", "# --- rules.conf ---\n" + files.Model,
		"# ... 70 more lines", string(Registered.Request(w.Inputs[0]))} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, out.String())
		}
	}
	risk, err := workload.Builtin("risk")
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	Registered.(engine.Exported).Show(risk, &out)
	if out.Len() != 0 {
		t.Errorf("show risk printed %q, want nothing", out.String())
	}
}
