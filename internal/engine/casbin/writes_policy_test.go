package casbin

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/change/changetest"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// withoutLine is a policy's text with the one line want left out; the test fails when the
// policy has no such line.
func withoutLine(t *testing.T, policy, want string) string {
	t.Helper()
	lines := strings.Split(policy, "\n")
	i := slices.Index(lines, want)
	if i < 0 {
		t.Fatalf("the policy has no line %q", want)
	}
	return strings.Join(slices.Delete(lines, i, i+1), "\n")
}

// A policy replacement Casbin acknowledged is the policy of the next decision, in process and on
// the Casbin server: rbac's policy without editor's write on documents decides every input as
// rbac's reference model does with that grant gone; the policy put back decides as loaded; an
// empty policy (no role links, so nobody is active) denies everything. A policy the server
// cannot load is refused, 400, and leaves the policy it had.
func TestPolicyReplacementSeenOnceAcknowledged(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared()}
	tg, err := kinds.New("casbin/inproc", common, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	loaded := tg.(*casbinInproc).loaded.Files
	applier, err := kinds.WriterOf(tg)
	if err != nil {
		t.Fatal(err)
	}
	d := tg.Worker()
	enf, err := NewEnforcer(loaded)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(enf))
	defer srv.Close()
	served, err := (&casbinServerWriter{srv}).writer()
	if err != nil {
		t.Fatal(err)
	}

	// What rbac's reference model decides with editor's write on documents withdrawn.
	m := *w.Model.(*workload.RBACData)
	m.Roles = map[string]map[string][]string{}
	for role, byType := range w.Model.(*workload.RBACData).Roles {
		m.Roles[role] = map[string][]string{}
		for typ, acts := range byType {
			m.Roles[role][typ] = acts
		}
	}
	m.Roles["editor"]["document"] = []string{"read"}
	withdrawn := make([]bool, len(w.Inputs))
	flips := 0
	for i, in := range w.Inputs {
		withdrawn[i], _ = m.Decide(in.Model.(workload.RBACInput))
		if withdrawn[i] != (in.Expect == workload.ExpectAllow) {
			flips++
		}
	}
	if flips == 0 {
		t.Fatal("withdrawing editor's write on documents flips no input: the test shows nothing")
	}

	dir := t.TempDir()
	files := map[string]string{
		"no-editor-write.csv": withoutLine(t, loaded.Policy, "p, editor, document, write"),
		"again.csv":           loaded.Policy,
		"empty.csv":           "# nothing: nobody is active\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	loadedDecision := func(i int) bool { return w.Inputs[i].Expect == workload.ExpectAllow }
	steps := []struct {
		file string
		want func(i int) bool
	}{
		{"no-editor-write.csv", func(i int) bool { return withdrawn[i] }},
		{"again.csv", loadedDecision},
		{"empty.csv", func(int) bool { return false }},
		{"again.csv", loadedDecision},
	}
	ask := func(i int) bool { return askServed(t, srv, w, i) }
	for k, s := range steps {
		form, err := Registered.(engine.WriteResolver).ResolveWrite(w, json.RawMessage(`{"policy": "`+s.file+`"}`), dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := Registered.(engine.WriteChecker).CheckWrite(form); err != nil {
			t.Fatalf("the resolved form is refused: %v", err)
		}
		for name, a := range map[string]change.Applier{"in process": applier, "served": served} {
			if ack := a.Apply(context.Background(), k+1, change.Change{Form: form}); ack.Class != "" || ack.Err != nil {
				t.Fatalf("%s: %s: %s %v", name, s.file, ack.Class, ack.Err)
			}
		}
		for i := range w.Inputs {
			out := d.Decide(context.Background(), i)
			if out.Kind != verify.Decided {
				t.Fatalf("in process: %s: input %d: %v", s.file, i+1, out.Err)
			}
			if out.Allow != s.want(i) {
				t.Errorf("in process: after %s, input %d decided %v, want %v", s.file, i+1, out.Allow, s.want(i))
			}
			if got := ask(i); got != s.want(i) {
				t.Errorf("served: after %s, input %d decided %v, want %v", s.file, i+1, got, s.want(i))
			}
		}
	}
	// A policy the server cannot load is refused and leaves the one it had.
	bad := `{"policy": "bad.csv", "text": "p, editor, document\n"}`
	if ack := served.Apply(context.Background(), 5, change.Change{Form: []byte(bad)}); ack.Class != "http_400" {
		t.Errorf("a policy line of the wrong size: %+v, want http_400", ack)
	}
	if ack := applier.Apply(context.Background(), 5, change.Change{Form: []byte(bad)}); ack.Class != "refused" {
		t.Errorf("in process, a policy line of the wrong size: %+v, want refused", ack)
	}
	for i := range w.Inputs {
		if got := ask(i); got != loadedDecision(i) {
			t.Fatalf("served: after a refused policy, input %d decided %v, want %v as before", i+1, got, loadedDecision(i))
		}
		if out := d.Decide(context.Background(), i); out.Allow != loadedDecision(i) {
			t.Fatalf("in process: after a refused policy, input %d decided %v, want %v as before", i+1, out.Allow, loadedDecision(i))
		}
	}
}

// casbinServerWriter is the casbin/server applier over a test server.
type casbinServerWriter struct{ srv *httptest.Server }

func (s *casbinServerWriter) writer() (change.Applier, error) {
	return &rolesPoster{client: s.srv.Client(), url: s.srv.URL + RolesPath, policyURL: s.srv.URL + PolicyPath}, nil
}

// A changes file's policy replacement that Casbin would refuse is refused before any load,
// naming the policy file and its line; so is a form that is not one.
func TestPolicyReplacementRefused(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"short.csv":   "p, editor, document, read\np, editor, document\n",
		"unknown.csv": "p, editor, document, read\n\nq, x, y\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ form, want string }{
		{`{"policy": "short.csv"}`, "short.csv:2: casbin refuses the policy line"},
		{`{"policy": "unknown.csv"}`, "unknown.csv:3"},
		{`{"policy": "missing.csv"}`, "missing.csv"},
		{`{"policy": "short.csv", "text": "p, a, b, c"}`, `leave out "text"`},
		{`{"policy": ""}`, `without "policy"`},
		{`{"policy": "short.csv", "roles": {}}`, `unknown field "roles"`},
	} {
		_, err := Registered.(engine.WriteResolver).ResolveWrite(w, json.RawMessage(c.form), dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.form, err, c.want)
		}
	}
	// A form that names a file but was never read is refused by the check every line gets.
	if err := Registered.(engine.WriteChecker).CheckWrite(json.RawMessage(`{"policy": "v2.csv"}`)); err == nil || !strings.Contains(err.Error(), "not read") {
		t.Errorf("an unread policy replacement: %v", err)
	}
	// Role links come back from ResolveWrite as they are.
	links := json.RawMessage(`{"roles": {"user-001": ["viewer"]}}`)
	if got, err := Registered.(engine.WriteResolver).ResolveWrite(w, links, dir); err != nil || string(got) != string(links) {
		t.Errorf("role links resolved to %s, %v", got, err)
	}
}

// rbac's built-in policy stream in Casbin's form (engine.PolicyWriter), in process: each change
// is the whole policy, reloaded, and once acknowledged every input is decided as the stream
// expects at that version, on a worker made before the first write. A workload that is not
// rbac's is refused before any load.
func TestBuiltinPolicyStreamSeenOnceAcknowledged(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	made, err := workload.BuiltinPolicyChanges(w, 6)
	if err != nil {
		t.Fatal(err)
	}
	stream := changetest.Stream(t, w, made, func(c workload.Change) (json.RawMessage, error) {
		form, err := engine.WriteFor(Name, w, c)
		if err == nil {
			err = Registered.(engine.WriteChecker).CheckWrite(form)
		}
		return form, err
	})
	tg, err := kinds.New("casbin/inproc", kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	applier, err := kinds.WriterOf(tg)
	if err != nil {
		t.Fatal(err)
	}
	changetest.DecidesByEachVersion(t, applier, tg.Worker(), stream)
	api, err := workload.Builtin("api")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Registered.(engine.PolicyWriter).WritePolicy(api, workload.Change{Policy: &workload.RBACPolicy{}}); err == nil {
		t.Error("a policy change of a workload that is not rbac's was written")
	}
}
