package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/workload"
)

// replayFiles writes a policy, a decision log of two paths with recorded times, and a reviewed
// list of one intended flip, into dir.
func replayFiles(t *testing.T, dir string) (policy, log, reviewed string) {
	t.Helper()
	policy, log, reviewed = filepath.Join(dir, "authz.rego"), filepath.Join(dir, "two.jsonl"), filepath.Join(dir, "reviewed.txt")
	for p, content := range map[string]string{
		policy: "package authz\n\ndefault allow := false\n\nallow if input.user == \"alice\"\n\ndefault ext := {\"allowed\": false}\n",
		log: `{"decision_id":"1","path":"authz/allow","input":{"user":"alice"},"result":true,"timestamp":"2026-01-01T00:00:00Z"}
{"decision_id":"2","path":"authz/ext","input":{"user":"bob"},"result":{"ok":false},"timestamp":"2026-01-01T00:00:00.002Z"}
{"decision_id":"3","path":"authz/ext","input":{"user":"carol"},"result":{"ok":true},"timestamp":"2026-01-01T00:00:01Z"}
`,
		reviewed: "# carol loses access\n3\n",
	} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return policy, log, reviewed
}

// The same replay named by flags and by a scenario file's workload entry is the same: the
// same workloads (one per path), inputs, expected decisions, intended flips, queries, and the
// same paced load for each target.
func TestReplayFromFlagsAndFileAlike(t *testing.T) {
	dir := t.TempDir()
	policy, log, reviewed := replayFiles(t, dir)
	fromFlags, err := FromFlags(AdHoc{Targets: []string{"opa/inproc", "opa/server"}, User: &workload.UserSpec{
		Policies: []string{policy}, DecisionLog: log, DecisionField: "ok", ExpectChanges: reviewed, Speed: 2, MaxGap: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "replay.yaml")
	if err := os.WriteFile(file, []byte(`floor: false
workloads:
  - decision_log: two.jsonl
    policy: [authz.rego]
    decision_field: ok
    expect_changes: reviewed.txt
    speed: 2
    max_gap: 10ms
targets: [opa/inproc, opa/server]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromFlags.Workloads) != 2 || len(fromFile.Workloads) != 2 {
		t.Fatalf("workloads: %d from flags, %d from the file; want one per path, 2", len(fromFlags.Workloads), len(fromFile.Workloads))
	}
	for i, path := range []string{"authz/allow", "authz/ext"} {
		a, b := fromFlags.Workloads[i], fromFile.Workloads[i]
		if a.Name != "two:"+path || b.Name != a.Name || !reflect.DeepEqual(a.User, b.User) {
			t.Errorf("workload %d: %s %+v from flags, %s %+v from the file", i, a.Name, a.User, b.Name, b.User)
		}
		wa, wb := a.Built, b.Built
		if wa.Query != wb.Query || !reflect.DeepEqual(wa.Inputs, wb.Inputs) || !reflect.DeepEqual(wa.Replay, wb.Replay) {
			t.Errorf("%s: built differently:\nflags %s %+v %+v\nfile  %s %+v %+v", path, wa.Query, wa.Inputs, wa.Replay, wb.Query, wb.Inputs, wb.Replay)
		}
		if wa.Replay.Speed != 2 || wa.Replay.MaxGap != 10*time.Millisecond {
			t.Errorf("%s: replay %+v, want speed 2, max gap 10ms", path, wa.Replay)
		}
		for j := range fromFlags.Targets {
			la, lb := Paced(fromFlags.Targets[j].Load, wa), Paced(fromFile.Targets[j].Load, wb)
			if !reflect.DeepEqual(la, lb) || la.Replay == nil || la.Replay.Speed != 2 || la.Workers != 0 || la.Warmup != 0 || !la.Open() {
				t.Errorf("%s on %s: load %+v from flags, %+v from the file; want the same paced replay", path, fromFlags.Targets[j].Name, la, lb)
			}
		}
	}
	// The reviewed flip expects the new decision: carol, logged allowed, is now expected denied.
	ext := fromFile.Workloads[1].Built
	if in := ext.Inputs[1]; in.DecisionID != "3" || in.Expect != workload.ExpectDeny || !ext.Replay.Intended["3"] {
		t.Errorf("intended flip: %+v", in)
	}
	if off := ext.Inputs[1].Offset; off != 998*time.Millisecond {
		t.Errorf("offset of event 3 %s, want 998ms after its path's first", off)
	}
}

// A replay's settings in a scenario file are checked as strictly as the rest of it, each
// problem naming the file and its line.
func TestReplayScenarioErrors(t *testing.T) {
	dir := t.TempDir()
	replayFiles(t, dir)
	inputs := filepath.Join(dir, "inputs.jsonl")
	if err := os.WriteFile(inputs, []byte(`{"input":{"user":"alice"},"expect":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Compared by the default field, allowed, the log's authz/ext events are skipped: one path.
	entry := "workloads:\n  - decision_log: two.jsonl\n    policy: [authz.rego]\n"
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"a misspelt key", entry + "    decision_feld: ok\ntargets: [opa/inproc]\n",
			`s.yaml:4: unknown field "decision_feld"`},
		{"speed 0", entry + "    speed: 0\ntargets: [opa/inproc]\n",
			"s.yaml:4: speed must be a positive number, got 0"},
		{"a negative speed", entry + "    max_gap: 1s\n    speed: -1\ntargets: [opa/inproc]\n",
			"s.yaml:5: speed/max_gap: speed must be a positive number, got -1"},
		{"max_gap without speed", entry + "    max_gap: 1s\ntargets: [opa/inproc]\n",
			"s.yaml:4: max_gap applies to a paced replay: give speed with it"},
		{"a replay setting on a built-in workload", "workloads:\n  - {name: rbac, speed: 1}\ntargets: [opa/inproc]\n",
			"s.yaml:2: speed applies to a replayed decision log: give decision_log FILE with it"},
		{"a replay setting with inputs that are not a log", "workloads:\n  - {inputs: inputs.jsonl, policy: [authz.rego], decision_field: ok}\ntargets: [opa/inproc]\n",
			"s.yaml:2: decision_field applies to a replayed decision log, and inputs " + inputs + " is inputs, not a log"},
		{"a log and inputs", entry + "    inputs: inputs.jsonl\ntargets: [opa/inproc]\n",
			"s.yaml:2: inputs and decision_log: a replay asks each logged event's path of its logged input; drop inputs"},
		{"a reviewed id the log lacks", entry + "    expect_changes: bad.txt\ntargets: [opa/inproc]\n",
			`bad.txt:1: decision "9" is not a replayed event`},
		{"a paced replay swept", entry + "    speed: 1\ntargets:\n  - target: opa/inproc\n    load: {workers_sweep: [1, 2]}\n",
			"s.yaml:4: workload two replays its log at the recorded pace (speed), and target opa/inproc sweeps its load (line 7)"},
		// H30: one log replayed through two policies under one name read as one workload in
		// every table, compare paired the first only, and a history mixed the two.
		{"two workloads of one name", "workloads:\n  - {name: prod, decision_log: two.jsonl, policy: [authz.rego]}\n  - {name: prod, decision_log: two.jsonl, policy: [other.rego]}\ntargets: [opa/inproc]\n",
			`s.yaml:3: workload "prod" is named twice (line 2 too), as two different workloads`},
		{"your workload named as a built-in", "workloads:\n  - rbac\n  - {name: rbac, inputs: inputs.jsonl, policy: [authz.rego], query: data.authz.allow}\ntargets: [opa/inproc]\n",
			`s.yaml:3: workload "rbac" is named twice (line 2 too)`},
		{"a testbed that cannot go in a URL", "testbed: ci/runner 1\nworkloads: [rbac]\ntargets: [opa/inproc]\n",
			`s.yaml:1: testbed: testbed name "ci/runner 1": want 1 to 64 letters`},
		{"an empty testbed", "testbed: ''\nworkloads: [rbac]\ntargets: [opa/inproc]\n",
			"s.yaml:1: testbed: testbed name is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "bad.txt"), []byte("9\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "other.rego"), []byte("package authz\n\ndefault allow := true\n\ndefault ext := {\"allowed\": true}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Parse("s.yaml", []byte(tc.yaml), dir)
			if err == nil {
				t.Fatalf("accepted: %+v", s)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error\n%s\nwant it to contain\n%s", err, tc.want)
			}
		})
	}
}
