package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// fakeEngine stands for a fourth engine: it writes rbac alone, and is handed its roles.
type fakeEngine struct{ engine.Engine }

func (fakeEngine) Name() string                       { return "fake" }
func (fakeEngine) Languages() []string                { return []string{"Fake"} }
func (fakeEngine) Written(w *workload.Workload) bool  { return w.Name == "rbac" }
func (fakeEngine) Handed(w *workload.Workload) string { return "Fake is handed the roles of " + w.Name }

// The list has a column per engine of the registry, and one more for an engine added to it,
// each cell saying whether the workload has a version in that engine's language, does the same
// work, is handed some of it (footnote), or why it has none (footnote).
func TestWorkloadListHasAColumnPerEngine(t *testing.T) {
	var ws []*workload.Workload
	for _, name := range []string{"nop", "rbac", "api"} {
		w, err := workload.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	engines := append(engine.All(), fakeEngine{})
	var b bytes.Buffer
	if err := listWorkloads(&b, ws, engines); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	header := strings.Fields(lines[0])
	cellOf := func(workload, engineName string) string {
		// Cells are aligned under the header: cut each row at the column's start.
		at := strings.Index(lines[0], strings.ToUpper(engineName)+" ")
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, workload+" ") {
				return strings.Fields(l[at:])[0] + " " + strings.Fields(l[at:])[1]
			}
		}
		t.Fatalf("no row for %s:\n%s", workload, b.String())
		return ""
	}
	for _, e := range engines {
		if !strings.Contains(strings.Join(header, " "), strings.ToUpper(e.Name())) {
			t.Errorf("header %q has no column for %s", lines[0], e.Name())
		}
	}
	for _, tc := range []struct{ workload, engine, prefix string }{
		{"nop", "openfga", "same work"},
		{"nop", "fake", "no"},
		{"rbac", "fake", "handed ["},
		{"api", "cedar", "handed ["},
		{"api", "openfga", "no ["},
		{"api", "opa", "same work"},
	} {
		if got := cellOf(tc.workload, tc.engine); !strings.HasPrefix(got, tc.prefix) {
			t.Errorf("%s under %s: %q, want %q", tc.workload, tc.engine, got, tc.prefix)
		}
	}
	for _, note := range []string{"] rbac in Fake: Fake is handed the roles of rbac", "] api in Cedar: Cedar is handed the token's verdict",
		"] api has no OpenFGA version: its rules verify a JWT"} {
		if !strings.Contains(b.String(), note) {
			t.Errorf("no footnote %q:\n%s", note, b.String())
		}
	}
}
