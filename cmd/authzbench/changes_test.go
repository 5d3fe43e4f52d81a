package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/change/changetest"
	"github.com/authzbench/authzbench/internal/workload"
)

// changesFiles writes 4 inputs (0 and 2 allowed, 1 and 3 denied) and n changes, change k
// flipping input k%4 and telling the service which version it makes; it returns the stream the
// service answers by.
func changesFiles(t *testing.T, dir string, n int) (inputs, changes string, s *change.Stream) {
	t.Helper()
	var in, ch strings.Builder
	exp := make([]workload.Expect, 4)
	now := make([]bool, 4)
	for i := range 4 {
		now[i] = i%2 == 0
		exp[i] = workload.ExpectDeny
		if now[i] {
			exp[i] = workload.ExpectAllow
		}
		fmt.Fprintf(&in, `{"input": {"input": %d}, "expect": %t}`+"\n", i, now[i])
	}
	var cs []change.Change
	for k := 1; k <= n; k++ {
		i := k % 4
		now[i] = !now[i]
		fmt.Fprintf(&ch, `{"request": {"method": "POST", "path": "/write", "body": {"version": %d}}, "expect": {"%d": %t}}`+"\n", k, i+1, now[i])
		cs = append(cs, change.Change{Sets: map[int]bool{i: now[i]}})
	}
	inputs, changes = filepath.Join(dir, "inputs.jsonl"), filepath.Join(dir, "changes.jsonl")
	if err := os.WriteFile(inputs, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(changes, []byte(ch.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := change.NewStream(exp, cs)
	if err != nil {
		t.Fatal(err)
	}
	return inputs, changes, s
}

// The http target against the project's own service whose writes become visible a known lag
// after they are acknowledged, its answers naming their version: the run reads the lag as the
// time to visible (within 10 % in an open loop), counts the stale answers the service logged, and counts the
// answers of versions the service never had as wrong decisions, exactly, failing the run.
func TestChangesOverHTTPAgainstGroundTruth(t *testing.T) {
	for _, c := range []struct {
		name   string
		load   []string
		sender string // the open loop's: its event loop judges as its goroutines do
		// hold: see changesOverHTTP. An open loop's requests do not wait for answers, so its hold
		// can be long; a closed loop's must stay under the service's pace. The open loop has the
		// connections for the requests held up to a lag.
		hold time.Duration
	}{
		{"closed loop", []string{"--workers", "8"}, "", 15 * time.Millisecond},
		{"open loop", []string{"--rate", "250", "--connections", "128"}, "event_loop", 100 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) { changesOverHTTP(t, c.load, c.sender, c.hold) })
	}
}

func changesOverHTTP(t *testing.T, load []string, sender string, hold time.Duration) {
	dir := t.TempDir()
	inputs, changes, s := changesFiles(t, dir, 40)
	// The lag is long beside what the run can resolve: a first answer reflecting a change comes
	// back up to a pace after the change is visible, later still on a busy machine (CI saw 37 ms
	// of overshoot at 300 ms), so 10 % of the lag must outlast that. It is no whole number of
	// the changes' 500 ms apart: a held answer is released as its change becomes visible, and
	// were that the moment of a later change's acknowledgement, the workers' next requests would
	// be held again, every one, and the closed loop would hardly send.
	const lag = 1250 * time.Millisecond
	// The hold outlasts the time from a client's clock read to its request's arrival, even on a
	// busy machine (else the service logs as stale an answer no judge can call so); the pace
	// outlasts a closed loop's hold, so that some answers come after it, stale.
	svc := &changetest.Service{Stream: s, Lag: lag, Hold: hold, WrongEvery: 101, Pace: 30 * time.Millisecond}
	srv := httptest.NewServer(svc.Handler())
	defer srv.Close()
	out := filepath.Join(dir, "r.json")
	args := append([]string{"run", "--target", "http", "--url", srv.URL + "/check", "--decision-path", "/allow", "--version-path", "/version",
		"--body", `{"input": {{input.input}}}`, "--inputs", inputs, "--changes", changes, "--change-rate", "2/s", "--stale-allowed", "1s",
		"--duration", "6s", "--warmup", "0s", "--no-progress", "-o", out}, load...)
	code, stdout, stderr := run(t, args...)
	logged := svc.Logged()
	if code != 1 || !strings.Contains(stderr, "not served decisions") {
		t.Fatalf("exit %d, want 1 for the wrong answers\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	doc := readResult(t, out)
	r := doc.Runs[0]
	c := r.Changes
	if c == nil || len(r.Operations) != 1 || r.Operations[0].Name != "write" {
		t.Fatalf("changes %+v, operations %+v", c, r.Operations)
	}
	if c.Answers["stale"]+c.Answers["stale_beyond_promise"] != uint64(logged.Stale) || logged.Stale == 0 {
		t.Errorf("stale %d + %d, the service logged %d", c.Answers["stale"], c.Answers["stale_beyond_promise"], logged.Stale)
	}
	if c.Answers["wrong"] != uint64(logged.Wrong) || r.Summary.WrongDecision != uint64(logged.Wrong) || logged.Wrong == 0 {
		t.Errorf("wrong %d (wrong decisions %d), the service logged %d", c.Answers["wrong"], r.Summary.WrongDecision, logged.Wrong)
	}
	total := c.Answers["fresh"] + c.Answers["stale"] + c.Answers["stale_beyond_promise"] + c.Answers["wrong"]
	// The service also answered the target's probe, before the run.
	if total != uint64(logged.Answers-1) || !c.VersionNamed {
		t.Errorf("%d answers judged (named %v), the service gave %d and the probe", total, c.VersionNamed, logged.Answers-1)
	}
	if c.Visible < 5 || c.TimeToVisibleUS == nil {
		t.Fatalf("%d changes seen of %d applied", c.Visible, c.Applied)
	}
	p50 := time.Duration(c.TimeToVisibleUS.P50 * 1e3)
	t.Logf("time to visible p50 %s of %d changes seen; %d answers", p50, c.Visible, logged.Answers)
	// The open loop reads the lag to 10 %. A closed loop reads it coarser: the service holds
	// whichever workers ask just after an acknowledgement until that change is visible, and
	// while they wait, nobody asks about the inputs a change flips; it is still never early.
	slack := lag / 10
	if sender == "" {
		slack = lag
	}
	if p50 < lag*9/10 || p50 > lag+slack {
		t.Errorf("time to visible p50 %s, want %s, at most %s later", p50, lag, slack)
	}
	if w := r.Operations[0]; w.OK != uint64(c.Applied) || w.Errors != 0 {
		t.Errorf("writes %+v, %d applied", w, c.Applied)
	}
	if o := r.Summary.Open; sender != "" && (o == nil || o.Sender != sender) {
		t.Errorf("open loop %+v: want it sent by the %s", o, sender)
	}
	if sender != "" && (len(c.Timeline) < 50 || len(c.Writes) != c.Applied) {
		t.Errorf("%d timeline steps and %d writes of %d applied: want the window step by step and every write", len(c.Timeline), len(c.Writes), c.Applied)
	}
	wants := []string{"write", "time to visible", "fresh"}
	if sender == "" {
		wants = append(wants, "closed loop")
	}
	for _, want := range wants {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table does not say %q:\n%s", want, stdout)
		}
	}
}

// A run with changes that cannot be carried out is refused before any load, exit 2, naming the
// file and line or the flag.
func TestChangesRefusedBeforeLoad(t *testing.T) {
	dir := t.TempDir()
	inputs, changes, _ := changesFiles(t, dir, 3)
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"request": {"path": "/w"}, "expect": {}}`+"\n"+`{"request": {"path": "/w"}, "expect": {"9": "deny"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Nothing listens here: a run that got as far as its load would fail otherwise.
	httpArgs := []string{"run", "--target", "http", "--url", "http://127.0.0.1:1/check", "--decision-path", "/allow", "--inputs", inputs, "--no-progress", "-o", filepath.Join(dir, "r.json")}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"a bad line", append(httpArgs, "--changes", bad), "bad.jsonl:2: \"expect\": \"9\": want an input number from 1 to 4"},
		{"a missing file", append(httpArgs, "--changes", filepath.Join(dir, "none.jsonl")), "none.jsonl"},
		{"a bad rate", append(httpArgs, "--changes", changes, "--change-rate", "fast"), `--change-rate "fast"`},
		{"a rate without changes", append(httpArgs, "--change-rate", "5/s"), "--change-rate applies to a run with --changes"},
		{"repetitions", append(httpArgs, "--changes", changes, "--repeat", "2"), "--changes with --repeat 2"},
		// One writer applies the stream: a shard on another machine could not judge by its log.
		{"a shard", append(httpArgs, "--changes", changes, "--shard", "1/2", "--rate", "100"), "--changes with --shard"},
		// Each replica holds its own world: a write would reach one, and the others' answers
		// would be judged stale against it.
		{"replicas", []string{"run", "--target", "opa/server", "--replicas", "2", "--workload", "rbac", "--changes", "builtin", "--no-progress", "-o", filepath.Join(dir, "r.json")},
			"opa/server with 2 replicas: each holds its own copy of the world"},
		{"two workloads", []string{"run", "--target", "opa/server", "--workload", "rbac,api", "--changes", "builtin", "--no-progress", "-o", filepath.Join(dir, "r.json")},
			"give one"},
		{"a target without writes", []string{"run", "--target", "opa/cli", "--workload", "rbac", "--changes", changes, "--no-progress", "-o", filepath.Join(dir, "r.json")},
			"target opa/cli takes no writes yet; those that do: "},
		// OPA's optimizer folded the data into the policy: no revision of the data can be
		// published without optimizing it again.
		{"an optimized bundle", []string{"run", "--target", "opa/server", "--optimize", "1", "--workload", "rbac", "--changes", "builtin", "--no-progress", "-o", filepath.Join(dir, "r.json")},
			"opa/server with a bundle optimized by opa build -O=1"},
		// A delta bundle carries data alone.
		{"a policy replacement as a delta bundle", []string{"run", "--target", "opa/server", "--bundle-server", "--bundle-changes", "delta", "--workload", "rbac",
			"--changes", filepath.Join("..", "..", "experiments", "changes-opa", "policy-put.jsonl"), "--no-progress", "-o", filepath.Join(dir, "r.json")},
			"policy-put.jsonl:1: \"write\" for target opa/server: a policy replacement cannot be published as a delta bundle"},
		// It says how changes are published, and there are none.
		{"bundle changes without changes", []string{"run", "--target", "opa/server", "--bundle-server", "--bundle-changes", "delta", "--workload", "rbac",
			"--no-progress", "-o", filepath.Join(dir, "r.json")},
			"target opa/server: --bundle-changes says how a run's changes are published as bundle revisions: give it with --changes"},
		{"the built-in policy stream as delta bundles", []string{"run", "--target", "opa/server", "--bundle-server", "--bundle-changes", "delta", "--workload", "rbac",
			"--changes", "builtin-policy", "--no-progress", "-o", filepath.Join(dir, "r.json")},
			"--changes builtin-policy: target opa/server: change 1 (withdraw "},
		{"provenance without a bundle", []string{"run", "--target", "opa/server", "--provenance", "--workload", "rbac", "--changes", "builtin", "--no-progress", "-o", filepath.Join(dir, "r.json")},
			"--provenance names the bundle revision behind each decision: give it with --bundle-server"},
		{"a version path beside a status decision", []string{"run", "--target", "http", "--url", "http://127.0.0.1:1/check", "--decision-status", "200=allow,403=deny",
			"--version-path", "/v", "--inputs", inputs, "--changes", changes, "--no-progress", "-o", filepath.Join(dir, "r.json")}, "--version-path reads the version"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %s; want 2 and %q", code, stderr, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "r.json")); err == nil {
				t.Errorf("a result was written")
			}
		})
	}
}

// OPA's server with rbac's own stream (grants and revokes of roles, from its reference model)
// applied by Data API PATCH: OPA commits a patch before it answers it, so a check sent after
// the acknowledgement is never stale, and none is wrong.
func TestChangesOPAServerNeverStaleAfterAck(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	doc, stdout := runOK(t, out, "run", "--target", "opa/server", "--workload", "rbac", "--changes", "builtin", "--change-rate", "20/s",
		"--workers", "4", "--duration", "2s", "--warmup", "0s", "--no-progress")
	r := doc.Runs[0]
	c := r.Changes
	if c == nil || c.Applied < 10 {
		t.Fatalf("changes %+v: want at least 10 applied in 2s at 20/s", c)
	}
	if c.Answers["stale"] != 0 || c.Answers["stale_beyond_promise"] != 0 || c.Answers["wrong"] != 0 {
		t.Errorf("answers %v: a check sent after OPA acknowledged a patch must see it", c.Answers)
	}
	if c.Answers["fresh"] != r.Summary.OK || r.Summary.OK == 0 {
		t.Errorf("%d fresh of %d ok decisions", c.Answers["fresh"], r.Summary.OK)
	}
	if c.Visible == 0 || c.NewEnemyWindowUS == nil || c.NewEnemyWindowUS.Max != 0 {
		t.Errorf("visible %d, new-enemy window %+v: want changes seen and none missed after its acknowledgement", c.Visible, c.NewEnemyWindowUS)
	}
	if w := r.Operations[0]; w.OK != uint64(c.Applied) || w.Errors != 0 {
		t.Errorf("writes %+v", w)
	}
	if !strings.Contains(stdout, "rbac's built-in stream") {
		t.Errorf("the table does not name the stream:\n%s", stdout)
	}
}

// OPA's server given rbac as a bundle takes rbac's own stream as bundle revisions, downloaded by
// long polling and activated; every answer names its revision (provenance) and is judged by it
// exactly: none wrong, none stale after the acknowledgement (OPA's store holding the revision),
// so no revoked user gets in once a revocation is acknowledged.
func TestChangesOPAServerBundleRevisions(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	doc, _ := runOK(t, out, "run", "--target", "opa/server", "--bundle-server", "--provenance", "--workload", "rbac", "--changes", "builtin",
		"--change-rate", "4/s", "--rate", "200", "--duration", "3s", "--warmup", "0s", "--no-progress")
	r := doc.Runs[0]
	c := r.Changes
	if c == nil || c.Applied < 5 {
		t.Fatalf("changes %+v: want at least 5 revisions applied in 3s at 4/s", c)
	}
	if !c.VersionNamed {
		t.Error("no answer named its revision: provenance was not read")
	}
	if c.Answers["stale"] != 0 || c.Answers["stale_beyond_promise"] != 0 || c.Answers["wrong"] != 0 {
		t.Errorf("answers %v: a check sent after OPA activated a revision must see it", c.Answers)
	}
	if c.Answers["fresh"] != r.Summary.OK || r.Summary.OK == 0 {
		t.Errorf("%d fresh of %d ok decisions", c.Answers["fresh"], r.Summary.OK)
	}
	if c.Visible == 0 || c.NewEnemyWindowUS == nil || c.NewEnemyWindowUS.Max != 0 {
		t.Errorf("visible %d, new-enemy window %+v: want revisions seen and none missed after its acknowledgement", c.Visible, c.NewEnemyWindowUS)
	}
	if w := r.Operations[0]; w.OK != uint64(c.Applied) || w.Errors != 0 {
		t.Errorf("writes %+v", w)
	}
	if sut := r.SUT; sut.Consistency == nil || sut.Consistency.Name != "bundle revision active" || sut.Bundle == nil || sut.Bundle.Polling == "" {
		t.Errorf("sut consistency %+v, bundle %+v: want the bundle's promise and its polling recorded", sut.Consistency, sut.Bundle)
	}
}

// A change the service refuses stops the stream and the run: exit 1, the result kept and
// marked partial, the refused write counted as an error of its class, never as applied.
func TestChangesRefusedWriteStopsTheRun(t *testing.T) {
	dir := t.TempDir()
	inputs, _, s := changesFiles(t, dir, 3)
	// The third change names version 5: the service refuses it, out of order (409).
	changes := filepath.Join(dir, "gap.jsonl")
	lines := `{"request": {"path": "/write", "body": {"version": 1}}, "expect": {"2": true}}
{"request": {"path": "/write", "body": {"version": 2}}, "expect": {"3": true}}
{"request": {"path": "/write", "body": {"version": 5}}, "expect": {"4": true}}
{"request": {"path": "/write", "body": {"version": 4}}, "expect": {"1": false}}
`
	if err := os.WriteFile(changes, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := &changetest.Service{Stream: s, Lag: 0}
	srv := httptest.NewServer(svc.Handler())
	defer srv.Close()
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := run(t, "run", "--target", "http", "--url", srv.URL+"/check", "--decision-path", "/allow",
		"--body", `{"input": {{input.input}}}`, "--inputs", inputs, "--changes", changes, "--change-rate", "20/s",
		"--workers", "2", "--duration", "3s", "--warmup", "0s", "--no-progress", "-o", out)
	if code != 1 || !strings.Contains(stderr, "change 3 (") || !strings.Contains(stderr, "gap.jsonl:3) not applied (http_409)") {
		t.Fatalf("exit %d, want 1 naming the refused change\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	r := readResult(t, out).Runs[0]
	if !r.Partial || r.Changes == nil || r.Changes.Applied != 2 || r.Changes.WriteError == "" {
		t.Fatalf("partial %v, changes %+v", r.Partial, r.Changes)
	}
	if w := r.Operations[0]; w.OK != 2 || w.Errors != 1 || w.ErrorClasses["http_409"] != 1 || !strings.Contains(w.ErrorMessages["http_409"], "out of order") {
		t.Errorf("writes %+v", w)
	}
	if r.Load.DurationS > 0 && r.Repetitions[0].ElapsedS > 2.5 {
		t.Errorf("the run went on %gs after the refused write", r.Repetitions[0].ElapsedS)
	}
}
