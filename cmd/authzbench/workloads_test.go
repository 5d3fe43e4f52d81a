package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// fakeEngine stands for a fourth engine: it writes rbac alone, and is handed its roles.
type fakeEngine struct{ engine.Engine }

func (fakeEngine) Name() string                       { return "fake" }
func (fakeEngine) Languages() []string                { return []string{"Fake"} }
func (fakeEngine) Written(w *workload.Workload) bool  { return w.Name == "rbac" }
func (fakeEngine) Handed(w *workload.Workload) string { return "Fake is handed the roles of " + w.Name }
func (fakeEngine) WhyNot(w *workload.Workload) string {
	if w.Name == "api" {
		return "Fake reads no tokens"
	}
	return ""
}

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
		{"api", "fake", "no ["},
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
		"] api has no OpenFGA version: its rules verify a JWT", "] api has no Fake version: Fake reads no tokens"} {
		if !strings.Contains(b.String(), note) {
			t.Errorf("no footnote %q:\n%s", note, b.String())
		}
	}
}

// verifiedWorkloads are the workloads verify must pass on in every engine: OpenFGA's own
// (nop, rbac, tuple scaling), the per-request entities below, near and beyond OpenFGA's 100
// contextual tuples, and the three applications.
var verifiedWorkloads = []string{"nop", "rbac", "rbac-data-100", "docshare-5", "docshare-50", "docshare-200",
	"gdrive-100", "github-100", "tinytodo-100"}

// workloads verify decides every one of them alike in OPA, Cedar and OpenFGA, in every mode
// each engine has: a row per workload and mode, each ok, except the ext_authz modes, which
// take Envoy checks and say so.
func TestVerifyEveryEngineInEveryMode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA, Cedar and OpenFGA processes")
	}
	code, stdout, stderr := run(t, append(append([]string{"workloads", "verify"}, verifiedWorkloads...), "--first", "40")...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	rows := map[[2]string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
		f := strings.Fields(line)
		rows[[2]string{f[0], f[1]}] = strings.Join(f[2:], " ")
	}
	for _, name := range verifiedWorkloads {
		w, err := workload.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		okBy := map[string]int{}
		for _, m := range engineModes(t) {
			mode := m.Label
			got, found := rows[[2]string{name, mode}]
			lang, written := engine.WrittenFor(m.Kind.Engine, w)
			switch {
			case !found:
				t.Errorf("%s on %s: no row\n%s", name, mode, stdout)
			case !written:
				// An engine of the registry the workload has no version for says so.
				if !strings.Contains(got, "skipped: no "+lang+" version") {
					t.Errorf("%s on %s: %q, want it skipped for want of a %s version", name, mode, got, lang)
				}
			case strings.HasPrefix(got, "40 40 ok"):
				okBy[m.Kind.Engine]++
			case name == "nop" || !strings.Contains(got, "skipped: its inputs are not Envoy CheckRequests"):
				t.Errorf("%s on %s: %q, want 40 inputs checked and agreed", name, mode, got)
			}
		}
		// Every engine with a version of the workload, in process and served; OPA, Cedar and
		// OpenFGA have one of each.
		for _, e := range engine.All() {
			if _, written := engine.WrittenFor(e.Name(), w); (written || e.Name() == "opa" || e.Name() == "cedar" || e.Name() == "openfga") && okBy[e.Name()] < 2 {
				t.Errorf("%s: %d modes of %s ok, want in process and served", name, okBy[e.Name()], e.Name())
			}
		}
	}
}

// engineModes is every mode workloads verify checks: each engine kind in its default settings
// and in each of its variants (openfga/server over gRPC).
func engineModes(t *testing.T) []kinds.Mode {
	t.Helper()
	var modes []kinds.Mode
	for _, name := range kinds.EngineModes() {
		k, err := kinds.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		modes = append(modes, k.ModesOf()...)
	}
	return modes
}

// A wrong OpenFGA model (gdrive's, with a document's viewers no longer inherited from its
// folders) fails verify in every OpenFGA mode (in process, served over HTTP and over gRPC),
// naming the first input it decides wrongly and what OpenFGA was asked, while the right model
// passes the same inputs.
func TestVerifyNamesTheInputAWrongModelGets(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an OpenFGA server")
	}
	const inherited = "define viewer: [user, group#member] or editor or viewer from parent\n    define can_read"
	// The model is planted in the user's files: OpenFGA's version of a built-in is its package's
	// own, written from gdrive-100's relationships, which the files hold as OpenFGA's tuples.
	builtin, err := workload.Builtin("gdrive-100")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var tuples, checks bytes.Buffer
	for _, r := range builtin.Relationships.Relationships {
		fmt.Fprintf(&tuples, "{\"user\":%q,\"relation\":%q,\"object\":%q}\n", r.Subject, r.Relation, r.Resource)
	}
	for i, c := range builtin.Relationships.Checks {
		fmt.Fprintf(&checks, "{\"user\":%q,\"relation\":%q,\"object\":%q,\"expect\":%t}\n",
			c.Subject, c.Permission, c.Resource, builtin.Inputs[i].Expect == workload.ExpectAllow)
	}
	model, err := os.ReadFile(filepath.Join("..", "..", "internal", "engine", "openfga", "builtin", "gdrive.fga"))
	if err != nil {
		t.Fatal(err)
	}
	spec := workload.UserSpec{Name: "gdrive-100", Policies: []string{filepath.Join(dir, "gdrive.fga")},
		Data: []string{filepath.Join(dir, "tuples.jsonl")}, Inputs: filepath.Join(dir, "checks.jsonl")}
	for path, data := range map[string][]byte{spec.Data[0]: tuples.Bytes(), spec.Inputs: checks.Bytes()} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	verifyGdrive := func(planted func(string) string) (error, string, string, *workload.Workload) {
		if err := os.WriteFile(spec.Policies[0], []byte(planted(string(model))), 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := workload.FromFiles(spec)
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		err = verifyAndReport(context.Background(), &stdout, &stderr, []*workload.Workload{w}, bench.EquivalenceOptions{
			Targets: []string{"openfga/inproc", "openfga/server"}, Inputs: 300, Common: kinds.Common{TempDir: t.TempDir()}})
		return err, stdout.String(), stderr.String(), w
	}
	if err, stdout, stderr, _ := verifyGdrive(func(m string) string { return m }); err != nil {
		t.Fatalf("the right model fails: %v\n%s\n%s", err, stdout, stderr)
	}
	err, stdout, stderr, w := verifyGdrive(func(m string) string {
		if !strings.Contains(m, inherited) {
			t.Fatalf("gdrive.fga no longer holds %q", inherited)
		}
		return strings.Replace(m, inherited, "define viewer: [user, group#member] or editor\n    define can_read", 1)
	})
	var exit *exitError
	if !errors.As(err, &exit) || exit.code != exitFailed {
		t.Fatalf("verify returned %v, want exit %d\n%s\n%s", err, exitFailed, stdout, stderr)
	}
	for _, target := range []string{"openfga/inproc", "openfga/server", "openfga/server(grpc)"} {
		var n int
		// Each check is a line of the user's checks file: the line names the input.
		line := regexp.MustCompile(`workload gdrive-100, target ` + regexp.QuoteMeta(target) + `: ` + regexp.QuoteMeta(spec.Inputs) +
			`:(\d+) expects allow, got deny\n  given: (.*)\n`).FindStringSubmatch(stderr)
		if line == nil {
			t.Fatalf("stderr does not name %s's wrong input:\n%s", target, stderr)
		}
		n, _ = strconv.Atoi(line[1])
		if in := w.Inputs[n-1]; in.Expect != workload.ExpectAllow || line[2] != string(engine.RequestFor("openfga", in)) {
			t.Errorf("%s: input %d is %s, expects %s; stderr gives %s", target, n, engine.RequestFor("openfga", in), in.Expect, line[2])
		}
		if !strings.Contains(stdout, target) || !strings.Contains(stdout, "DISAGREES") {
			t.Errorf("no DISAGREES row for %s:\n%s", target, stdout)
		}
	}
	if !strings.Contains(err.Error(), "3 workload and target pairs disagree; first: workload gdrive-100, target openfga/inproc, "+spec.Inputs+":") {
		t.Errorf("error %q", err)
	}
}
