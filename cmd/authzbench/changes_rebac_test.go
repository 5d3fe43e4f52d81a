package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// OpenFGA and SpiceDB, in every mode, run a relationship family's own stream (shares, unshares,
// group memberships, folder moves; rbac's revocations) beside the load: every answer is judged,
// none is wrong, and under a consistency that promises fresh answers none is stale. The
// consistency asked, or the engine's default, is recorded and said in the notes.
func TestChangesRelationshipEngines(t *testing.T) {
	for _, c := range []struct {
		name, targets, workload, consistency string
		want                                 string // the consistency recorded
		defaulted                            bool
		named                                bool // the answers name their version (SpiceDB's checked_at)
	}{
		{"openfga", "openfga/inproc,openfga/server", "gdrive-50", "HIGHER_CONSISTENCY", "HIGHER_CONSISTENCY", false, false},
		{"spicedb server", "spicedb/server", "github-50", "at_least_as_fresh", "at_least_as_fresh", false, true},
		{"spicedb server fully consistent", "spicedb/server", "gdrive-50", "fully_consistent", "fully_consistent", false, true},
		{"spicedb inproc", "spicedb/inproc", "rbac", "", "fully_consistent", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"run", "--target", c.targets, "--workload", c.workload, "--changes", "builtin",
				"--change-rate", "20/s", "--workers", "2", "--duration", "2s", "--warmup", "0s", "--no-progress"}
			if c.consistency != "" {
				args = append(args, "--consistency", c.consistency)
			}
			doc, stdout := runOK(t, filepath.Join(t.TempDir(), "r.json"), args...)
			if len(doc.Runs) != len(strings.Split(c.targets, ",")) {
				t.Fatalf("%d runs", len(doc.Runs))
			}
			for _, r := range doc.Runs {
				ch := r.Changes
				if ch == nil || ch.Applied < 10 {
					t.Fatalf("%s: changes %+v: want at least 10 applied in 2s at 20/s", r.Target, ch)
				}
				if ch.Answers["wrong"] != 0 || ch.Answers["stale"] != 0 || ch.Answers["stale_beyond_promise"] != 0 {
					t.Errorf("%s: answers %v: under %s none may be stale or wrong", r.Target, ch.Answers, c.want)
				}
				if ch.Answers["fresh"] != r.Summary.OK || r.Summary.OK == 0 || r.Summary.WrongDecision != 0 {
					t.Errorf("%s: %d fresh of %d ok decisions, %d wrong", r.Target, ch.Answers["fresh"], r.Summary.OK, r.Summary.WrongDecision)
				}
				if ch.Visible == 0 {
					t.Errorf("%s: no change seen", r.Target)
				}
				t.Logf("%s: answers %v, %d of %d named their version", r.Target, ch.Answers, ch.AnswersNamed, r.Summary.OK)
				// Named, most answers are (those asked while a write was in flight, whose
				// revision may hold it, are judged by their decisions).
				if ch.VersionNamed != c.named || c.named && ch.AnswersNamed < r.Summary.OK/2 {
					t.Errorf("%s: version named %t, %d answers of %d: want named %t", r.Target, ch.VersionNamed, ch.AnswersNamed, r.Summary.OK, c.named)
				}
				if w := r.Operations[0]; w.OK != uint64(ch.Applied) || w.Errors != 0 {
					t.Errorf("%s: writes %+v", r.Target, w)
				}
				p := r.SUT.Consistency
				if p == nil || p.Name != c.want || p.Default != c.defaulted || ch.Consistency != c.want || ch.AllowedStaleMS != 0 {
					t.Errorf("%s: consistency %+v, changes' %q, allowed %gms", r.Target, p, ch.Consistency, ch.AllowedStaleMS)
				}
			}
			note := "the checks asked consistency " + c.want
			if c.defaulted {
				note += " (the default: no --consistency given)"
			}
			if !strings.Contains(stdout, note) {
				t.Errorf("the notes do not say %q:\n%s", note, stdout)
			}
		})
	}
}

// Without --stale-allowed, a stale answer is judged against the engine's promise: SpiceDB's
// server asked no consistency may answer from a snapshot up to 5.5 s old.
func TestChangesStaleAllowedByConsistency(t *testing.T) {
	doc, _ := runOK(t, filepath.Join(t.TempDir(), "r.json"), "run", "--target", "spicedb/server", "--workload", "rbac",
		"--changes", "builtin", "--change-rate", "10/s", "--workers", "2", "--duration", "1s", "--warmup", "0s", "--no-progress")
	r := doc.Runs[0]
	if p := r.SUT.Consistency; p == nil || !p.Default || p.PromiseMS != 5500 || r.Changes.AllowedStaleMS != 5500 || r.Changes.Answers["wrong"] != 0 {
		t.Errorf("consistency %+v, changes %+v", p, r.Changes)
	}
}

// SpiceDB's server asked minimize_latency answers from its quantized snapshot (every 300 ms
// here, 5 s by default), so most answers are stale within its promise; each names its version
// by its checked_at and is judged by it: none wrong, the stale ones no older than the promise.
func TestChangesSpiceDBMinimizeLatencyByVersion(t *testing.T) {
	doc, _ := runOK(t, filepath.Join(t.TempDir(), "r.json"), "run", "--target", "spicedb/server", "--workload", "gdrive-50",
		"--consistency", "minimize_latency", "--sut-arg=--datastore-revision-quantization-interval=300ms",
		"--changes", "builtin", "--change-rate", "20/s", "--workers", "2", "--duration", "2s", "--warmup", "0s", "--no-progress")
	r := doc.Runs[0]
	ch := r.Changes
	if ch == nil || ch.Applied < 10 || !ch.VersionNamed || ch.AnswersNamed < r.Summary.OK/2 {
		t.Fatalf("changes %+v: want at least 10 applied and most of the %d answers naming their version", ch, r.Summary.OK)
	}
	if ch.Answers["wrong"] != 0 || r.Summary.WrongDecision != 0 || ch.Answers["stale_beyond_promise"] != 0 {
		t.Errorf("answers %v, %d wrong decisions", ch.Answers, r.Summary.WrongDecision)
	}
	t.Logf("answers %v, %d of %d named their version", ch.Answers, ch.AnswersNamed, r.Summary.OK)
	if ch.Answers["stale"] == 0 || ch.Answers["fresh"] == 0 {
		t.Errorf("answers %v: from snapshots 300 ms apart, under changes 50 ms apart, some are stale and some fresh", ch.Answers)
	}
}

// A changes file in OpenFGA's own write form is applied as written; a write OpenFGA refuses (a
// tuple that is not there cannot be deleted) stops the stream and the run: exit 1, the result
// kept and marked partial, the refusal counted with OpenFGA's reason, never as applied.
func TestChangesOpenFGAFileRefusedWrite(t *testing.T) {
	dir := t.TempDir()
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := workload.BuiltinChanges(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	form, err := engine.WriteFor("openfga", w, cs[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := fmt.Sprintf(`{"write": %s, "expect": %s}`+"\n", form, expectJSON(cs[0].Sets)) +
		`{"write": {"deletes": {"tuple_keys": [{"user": "user:nobody", "relation": "assignee", "object": "role:admin"}]}}, "expect": {}}` + "\n"
	file := filepath.Join(dir, "changes.jsonl")
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := run(t, "run", "--target", "openfga/inproc", "--workload", "rbac", "--changes", file,
		"--change-rate", "5/s", "--workers", "2", "--duration", "3s", "--warmup", "0s", "--no-progress", "-o", out)
	if code != 1 || !strings.Contains(stderr, "changes.jsonl:2) not applied (refused)") {
		t.Fatalf("exit %d, want 1 naming the refused change\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	r := readResult(t, out).Runs[0]
	if !r.Partial || r.Changes == nil || r.Changes.Applied != 1 || r.Changes.Answers["wrong"] != 0 {
		t.Fatalf("partial %v, changes %+v", r.Partial, r.Changes)
	}
	if op := r.Operations[0]; op.OK != 1 || op.Errors != 1 || op.ErrorClasses["refused"] != 1 || !strings.Contains(op.ErrorMessages["refused"], "tuple") {
		t.Errorf("writes %+v", op)
	}
}

// expectJSON writes a change's decisions as a changes file's "expect", inputs from 1.
func expectJSON(sets map[int]bool) string {
	var keys []int
	for i := range sets {
		keys = append(keys, i)
	}
	sort.Ints(keys)
	var parts []string
	for _, i := range keys {
		d := "deny"
		if sets[i] {
			d = "allow"
		}
		parts = append(parts, fmt.Sprintf(`"%d": %q`, i+1, d))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// A consistency an engine does not name, or one given to a target that asks none, and a
// changes file whose write is not the target's form: exit 2 before any load, naming the flag or
// the file and line.
func TestChangesRelationshipRefusedBeforeLoad(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	requests := write("requests.jsonl", `{"request": {"path": "/revoke"}, "expect": {}}`+"\n")
	badWrite := write("bad.jsonl", `{"write": {"deletes": {"tuple_keys": []}}, "expect": {}}`+"\n"+`{"write": {"writes": {"tuples": []}}, "expect": {}}`+"\n")
	spiceBad := write("spice.jsonl", `{"write": {"updates": [{"operation": "OPERATION_TOUCH"}]}, "expect": {}}`+"\n")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"an OpenFGA word unknown", []string{"--target", "openfga/inproc", "--workload", "rbac", "--consistency", "STRONG"},
			`--consistency "STRONG": openfga/inproc takes OpenFGA's MINIMIZE_LATENCY or HIGHER_CONSISTENCY`},
		{"SpiceDB's word for OpenFGA", []string{"--target", "openfga/server", "--workload", "rbac", "--consistency", "fully_consistent"},
			`--consistency "fully_consistent": openfga/server takes OpenFGA's`},
		{"a consistency spicedb/inproc cannot ask", []string{"--target", "spicedb/inproc", "--workload", "rbac", "--consistency", "minimize_latency"},
			"always checks at the datastore's head revision"},
		{"a target that asks none", []string{"--target", "opa/inproc,openfga/inproc", "--workload", "rbac", "--consistency", "HIGHER_CONSISTENCY"},
			"--consistency"},
		{"requests for OpenFGA", []string{"--target", "openfga/inproc", "--workload", "rbac", "--changes", requests},
			`requests.jsonl:1: target openfga/inproc takes its engine's own writes, not requests: give "write"`},
		{"a bad OpenFGA write", []string{"--target", "openfga/inproc", "--workload", "rbac", "--changes", badWrite},
			`bad.jsonl:2: "write" for target openfga/inproc: not an OpenFGA Write body`},
		{"an empty OpenFGA write", []string{"--target", "openfga/inproc", "--workload", "rbac", "--changes", badWrite},
			`bad.jsonl:1: "write" for target openfga/inproc: an OpenFGA Write with no tuple`},
		{"a bad SpiceDB write", []string{"--target", "spicedb/inproc", "--workload", "rbac", "--changes", spiceBad},
			`spice.jsonl:1: "write" for target spicedb/inproc: SpiceDB would refuse it`},
		{"docshare has no stream", []string{"--target", "openfga/inproc", "--workload", "docshare-5", "--changes", "builtin"},
			"workload docshare-5 has no built-in change stream"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, append(append([]string{"run"}, c.args...), "--duration", "1s", "--no-progress", "-o", out)...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %s; want 2 and %q", code, stderr, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a result was written")
			}
		})
	}
}
