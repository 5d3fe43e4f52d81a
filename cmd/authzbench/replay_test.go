package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/workload"
)

// recordDecisionLog starts the linked OPA server ("<self> opa run --server") with OPA's console
// decision logger on a free loopback port, asks it the first n inputs of the rbac workload, and
// returns the log it printed, with the workload's exported files in dir.
func recordDecisionLog(t *testing.T, dir string, n int) (logPath string) {
	t.Helper()
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	if err := workload.Export(w, dir); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	logPath = filepath.Join(dir, "decisions.jsonl")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	// The console decision logger writes to stderr, beside OPA's own log lines (those are
	// counted as skipped by the replay, not taken for decisions).
	cmd := exec.Command(os.Args[0], "opa", "run", "--server", "--addr", addr, "--log-level", "error",
		"--set", "decision_logs.console=true", filepath.Join(dir, "rbac.rego"), filepath.Join(dir, "data.json"))
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	defer stop()
	url := "http://" + addr + "/v1/data/authzbench/rbac/allow"
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < n; i++ {
		body := append(append([]byte(`{"input":`), w.Inputs[i].JSON...), '}')
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil && i == 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond) // the server is starting
			i--
			continue
		}
		if err != nil {
			t.Fatalf("ask the OPA server input %d: %v", i+1, err)
		}
		resp.Body.Close()
	}
	// The console logger writes after it answers; wait for the last decision to be logged.
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(logPath)
		if bytes.Count(b, []byte(`"msg":"Decision Log"`)) >= n {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	b, _ := os.ReadFile(logPath)
	if got := bytes.Count(b, []byte(`"msg":"Decision Log"`)); got != n {
		t.Fatalf("OPA's console logger logged %d decisions, want %d:\n%.2000s", got, n, b)
	}
	return logPath
}

// expectedFlips are the decision ids of the logged events that denying the delete of a
// confidential resource flips: deletes of confidential resources that were allowed. Worked out
// from the log and the data, not from either policy.
func expectedFlips(t *testing.T, logPath, dataPath string) []string {
	t.Helper()
	var data struct {
		RBAC struct {
			Resources map[string]map[string]struct {
				Confidential bool `json:"confidential"`
			} `json:"resources"`
		} `json:"rbac"`
	}
	raw, err := os.ReadFile(dataPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range strings.Split(string(b), "\n") {
		var ev struct {
			DecisionID string `json:"decision_id"`
			Result     bool   `json:"result"`
			Input      struct {
				Action   string `json:"action"`
				Resource struct{ Type, ID string }
			} `json:"input"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.DecisionID == "" {
			continue
		}
		if ev.Result && ev.Input.Action == "delete" && data.RBAC.Resources[ev.Input.Resource.Type][ev.Input.Resource.ID].Confidential {
			ids = append(ids, ev.DecisionID)
		}
	}
	slices.Sort(ids)
	return ids
}

func TestReplayOPAConsoleLog(t *testing.T) {
	dir := t.TempDir()
	const events = 200
	logPath := recordDecisionLog(t, dir, events)
	policy, data := filepath.Join(dir, "rbac.rego"), filepath.Join(dir, "data.json")
	replay := func(t *testing.T, out string, extra ...string) (int, string, string, *result.Document) {
		args := append([]string{"run", "--target", "opa/inproc", "--decision-log", logPath, "--data", data,
			"--requests", "50", "--workers", "1", "--no-progress", "-o", out}, extra...)
		code, stdout, stderr := run(t, args...)
		doc, err := result.Read(out)
		if err != nil {
			t.Fatalf("exit %d, no result: %v\n%s", code, err, stderr)
		}
		if len(doc.Replays) != 1 {
			t.Fatalf("want one replay in the result, got %+v", doc.Replays)
		}
		return code, stdout, stderr, doc
	}

	t.Run("the same policy reproduces every decision", func(t *testing.T) {
		code, stdout, stderr, doc := replay(t, filepath.Join(dir, "same.json"), "--policy", policy)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		r := doc.Replays[0]
		if r.Events != events || r.Reproduced != events || len(r.Flipped) != 0 {
			t.Errorf("replay: %d events, %d reproduced, %d flipped; want %d, %d, 0", r.Events, r.Reproduced, len(r.Flipped), events, events)
		}
		if r.Path != "authzbench/rbac/allow" || r.Query != "data.authzbench.rbac.allow" {
			t.Errorf("path %q query %q", r.Path, r.Query)
		}
		if want := fmt.Sprintf("reproduced %d of %d; flipped 0", events, events); !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
		if s := doc.Runs[0].Summary; s.WrongDecision != 0 || s.OK != 50 {
			t.Errorf("run: ok %d, wrong %d; want 50, 0", s.OK, s.WrongDecision)
		}
	})

	// One rule changed: a confidential resource can no longer be deleted either.
	changed := filepath.Join(dir, "changed", "rbac.rego")
	src, err := os.ReadFile(policy)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), `input.action == "share"`, `input.action in {"share", "delete"}`, 1)
	if edited == string(src) {
		t.Fatal("the rbac policy no longer has the rule this test changes")
	}
	if err := os.MkdirAll(filepath.Dir(changed), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(changed, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	want := expectedFlips(t, logPath, data)
	if len(want) == 0 {
		t.Fatal("no recorded event is an allowed delete of a confidential resource: record more events")
	}

	t.Run("one rule changed flips exactly the events it affects", func(t *testing.T) {
		code, stdout, stderr, doc := replay(t, filepath.Join(dir, "changed.json"), "--policy", changed, "--requests", fmt.Sprint(events))
		if code != exitFailed {
			t.Errorf("exit %d, want %d: a flipped decision is a wrong decision\n%s", code, exitFailed, stderr)
		}
		var got []string
		for _, f := range doc.Replays[0].Flipped {
			got = append(got, f.DecisionID)
			if f.Old != "allow" || f.New != "deny" || f.Intended {
				t.Errorf("flip %+v: want allow → deny, not intended", f)
			}
			if !strings.Contains(stdout, f.DecisionID) {
				t.Errorf("terminal does not list flipped decision %s", f.DecisionID)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("flipped %v\nwant      %v", got, want)
		}
		if r := doc.Replays[0]; r.Reproduced != events-len(want) {
			t.Errorf("reproduced %d, want %d", r.Reproduced, events-len(want))
		}
		// The impact comes before any timing: printed before the table.
		if i, j := strings.Index(stdout, "flipped "+want[0]), strings.Index(stdout, "Workload"); i < 0 || j < 0 || i > j {
			t.Errorf("the flips are not listed before the table:\n%s", stdout)
		}
		if s := doc.Runs[0].Summary; s.WrongDecision != uint64(len(want)) {
			t.Errorf("run of all %d events: %d wrong decisions, want %d", events, s.WrongDecision, len(want))
		}
		// Any report rebuilt from the result says it too.
		_, report, _ := run(t, "report", filepath.Join(dir, "changed.json"))
		if w := fmt.Sprintf("the policy reproduced %d and flipped %d (0 intended): %s allow → deny", events-len(want), len(want), doc.Replays[0].Flipped[0].DecisionID); !strings.Contains(unwrapped(report), w) {
			t.Errorf("report lacks %q:\n%s", w, report)
		}
	})

	t.Run("reviewed flips are expected", func(t *testing.T) {
		reviewed := filepath.Join(dir, "reviewed.txt")
		if err := os.WriteFile(reviewed, []byte("# reviewed\n"+strings.Join(want, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr, doc := replay(t, filepath.Join(dir, "reviewed.json"), "--policy", changed, "--requests", fmt.Sprint(events), "--expect-changes", reviewed)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		if r := doc.Replays[0]; r.Intended != len(want) || len(r.Flipped) != len(want) || len(r.Unmet) != 0 {
			t.Errorf("intended %d of %d flipped, unmet %v; want %d", r.Intended, len(r.Flipped), r.Unmet, len(want))
		}
		if s := doc.Runs[0].Summary; s.WrongDecision != 0 {
			t.Errorf("%d wrong decisions with every flip reviewed", s.WrongDecision)
		}
	})
}

func TestReplayBadLogs(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "authz.rego")
	if err := os.WriteFile(policy, []byte("package authz\n\ndefault allow := false\n\nallow if input.user == \"alice\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	event := func(id string, allow bool) string {
		return fmt.Sprintf(`{"decision_id":%q,"path":"authz/allow","input":{"user":"alice"},"result":%t,"timestamp":"2026-01-01T00:00:00Z"}`, id, allow)
	}
	good := event("a", true) + "\n" + event("b", true) + "\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Repeat(good, 200)))
	zw.Close()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"a line that is not JSON", write("notjson.jsonl", []byte(good+"time=now level=info msg=hello\n")), []string{"notjson.jsonl:3", "not JSON"}},
		{"a gzip stream cut short", write("cut.jsonl.gz", gz.Bytes()[:gz.Len()/2]), []string{"cut.jsonl.gz", "cut short"}},
		{"no event with an input", write("noinput.jsonl", []byte(`{"decision_id":"x","path":"authz/allow","result":true}`+"\n")), []string{"noinput.jsonl: no decision to replay", "1 skipped: no input, first at", "noinput.jsonl:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "run", "--target", "opa/inproc", "--decision-log", tc.file, "--policy", policy, "--requests", "5", "--check-only")
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}

	t.Run("events that cannot be replayed are counted and said", func(t *testing.T) {
		log := write("mixed.jsonl", []byte(good+
			`{"decision_id":"e","path":"authz/allow","input":{"user":"bob"},"error":{"code":"internal_error"}}`+"\n"+
			`{"decision_id":"m","path":"authz/allow","erased":["/input/password"],"input":{"user":"bob"},"result":false}`+"\n"+
			`{"decision_id":"r","path":"authz/allow","input":{"user":"bob"}}`+"\n"+
			`{"level":"info","msg":"Server initialized"}`+"\n"))
		code, stdout, stderr := run(t, "run", "--target", "opa/inproc", "--decision-log", log, "--policy", policy, "--check-only")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		for _, w := range []string{"2 decisions", "1 error", "1 input erased or masked", "1 no result", "1 log line that is no decision", "reproduced 2 of 2"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("stdout lacks %q:\n%s", w, stdout)
			}
		}
		if strings.Contains(stderr, "repeat") {
			t.Errorf("a log of distinct ids said to repeat one:\n%s", stderr)
		}
	})

	t.Run("events that repeat a decision id are said, and replayed", func(t *testing.T) {
		log := write("twice.jsonl", []byte(good+good+event("c", false)+"\n"))
		code, stdout, stderr := run(t, "run", "--target", "opa/inproc", "--decision-log", log, "--policy", policy, "--check-only")
		if code != 0 || !strings.Contains(stdout, "5 decisions") {
			t.Fatalf("exit %d; want the 5 events replayed\n%s\n%s", code, stdout, stderr)
		}
		if want := "warning: " + log + ": 2 events repeat a decision_id an earlier event had (first at " + log + ":3)"; !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	})
}

func TestReplayAtRecordedPace(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "authz.rego")
	if err := os.WriteFile(policy, []byte("package authz\n\ndefault allow := false\n\nallow if input.n % 2 == 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// 40 events 1 ms apart, then a pause of 5 s and one more; events 3 and 4 logged in the
	// wrong order.
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var lines []string
	order := []int{}
	for k := range 40 {
		order = append(order, k)
	}
	order[3], order[4] = order[4], order[3]
	at := func(k int) time.Time {
		if k == 40 {
			return start.Add(39*time.Millisecond + 5*time.Second)
		}
		return start.Add(time.Duration(k) * time.Millisecond)
	}
	for _, k := range append(order, 40) {
		lines = append(lines, fmt.Sprintf(`{"decision_id":"d%d","path":"authz/allow","input":{"n":%d},"result":%t,"timestamp":%q}`,
			k, k, k%2 == 0, at(k).Format(time.RFC3339Nano)))
	}
	logPath := filepath.Join(dir, "paced.jsonl")
	if err := os.WriteFile(logPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "paced.json")
	code, stdout, stderr := run(t, "run", "--target", "opa/inproc", "--decision-log", logPath, "--policy", policy,
		"--speed", "1", "--max-gap", "10ms", "--no-progress", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	r := doc.Runs[0]
	want := result.LoadReplay{Events: 41, SpanS: (39*time.Millisecond + 5*time.Second).Seconds(), Speed: 1, MaxGapS: 0.01, GapsShortened: 1}
	if r.Load.Replay == nil || *r.Load.Replay != want {
		t.Fatalf("load.replay %+v, want %+v", r.Load.Replay, want)
	}
	// The window holds every event once: the last is due 39 ms + the 10 ms gap kept.
	if w := (49*time.Millisecond + time.Nanosecond).Seconds(); r.Load.DurationS != w || r.Load.WarmupS != 0 || !r.Load.Open() {
		t.Errorf("load %+v: want open, duration %g s, no warm-up", r.Load, w)
	}
	rep := r.Repetitions[0]
	if rep.Intended != 41 || rep.Requests != 41 {
		t.Errorf("repetition: %d intended, %d requests; want every event once, 41", rep.Intended, rep.Requests)
	}
	if o := r.Summary.Open; o == nil || o.Intended != 41 || o.Sent+o.Unsent != o.Intended {
		t.Errorf("open summary %+v: want 41 due = sent + unsent", o)
	}
	if r.Summary.WrongDecision != 0 || r.Summary.OK+r.Summary.Errors != 41 {
		t.Errorf("summary: ok %d errors %d wrong %d", r.Summary.OK, r.Summary.Errors, r.Summary.WrongDecision)
	}
	if doc.Replays[0].OutOfOrder != 1 || !strings.Contains(stdout, "out of timestamp order in the log: 1 events") {
		t.Errorf("out of order %d; stdout:\n%s", doc.Replays[0].OutOfOrder, stdout)
	}
	if !strings.Contains(stdout, "replay 41 events") {
		t.Errorf("the table does not name the replay schedule:\n%s", stdout)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--speed", "1", "--rate", "100"}, "--speed and --rate"},
		{[]string{"--speed", "0"}, "speed must be a positive number"},
		{[]string{"--max-gap", "1s"}, "--max-gap applies to a paced replay"},
	} {
		code, _, stderr := run(t, append([]string{"run", "--target", "opa/inproc", "--decision-log", logPath, "--policy", policy, "--check-only"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// The example of docs/replay.md runs as the page says: every decision of the shipped log
// reproduced by the policy it was recorded with, and the changed rule flipping exactly the
// allowed deletes of confidential resources.
func TestReplayDocumentedExample(t *testing.T) {
	ex := filepath.Join("..", "..", "docs", "replay")
	log, data := filepath.Join(ex, "rbac-decisions.jsonl"), filepath.Join(ex, "data.json")
	for _, tc := range []struct {
		policy string
		flips  []string
	}{
		{"rbac.rego", nil},
		{"rbac-changed.rego", expectedFlips(t, log, data)},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			code, stdout, stderr := run(t, "run", "--target", "opa/inproc", "--decision-log", log, "--policy", filepath.Join(ex, tc.policy),
				"--data", data, "--check-only", "-o", out)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			want := fmt.Sprintf("reproduced %d of 300; flipped %d", 300-len(tc.flips), len(tc.flips))
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
			for _, id := range tc.flips {
				if !strings.Contains(stdout, "flipped "+id) {
					t.Errorf("flip %s not listed:\n%s", id, stdout)
				}
			}
		})
	}
	if len(expectedFlips(t, log, data)) == 0 {
		t.Error("the example log has no decision the changed rule flips")
	}
}

// A log given with --inputs is replayed as the decision log it is, and said so; a file that is
// both a log and inputs is refused before any load, naming a line of each and the flags.
func TestReplayLogGivenAsInputs(t *testing.T) {
	ex := filepath.Join("..", "..", "docs", "replay")
	log, data := filepath.Join(ex, "rbac-decisions.jsonl"), filepath.Join(ex, "data.json")
	code, stdout, stderr := run(t, "run", "--target", "opa/inproc", "--inputs", log, "--policy", filepath.Join(ex, "rbac.rego"),
		"--data", data, "--check-only")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if want := "inputs file " + log + " is an OPA decision log (line 2 is a decision-log event"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if !strings.Contains(stdout, "reproduced 300 of 300; flipped 0") {
		t.Errorf("the log given as inputs was not replayed:\n%s", stdout)
	}

	// The log is an input like any other, under the flag that gave it.
	code, _, stderr = run(t, "run", "--target", "opa/inproc", "--inputs", log, "--policy", filepath.Join(ex, "rbac.rego"),
		"--data", data, "--check-only", "-o", log, "--force")
	if want := "-o " + log + " is " + log + ", which this command reads (--inputs)"; code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("-o the log given as inputs: exit %d, stderr:\n%s\nwant %d and %q", code, stderr, exitUsage, want)
	}

	dir := t.TempDir()
	mixed := filepath.Join(dir, "mixed.jsonl")
	if err := os.WriteFile(mixed, []byte(`{"input":{"user":"alice"},"expect":true}`+"\n"+
		`{"decision_id":"1","path":"authz/allow","input":{"user":"alice"},"result":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(t, "run", "--target", "opa/inproc", "--inputs", mixed, "--policy", filepath.Join(ex, "rbac.rego"), "--check-only")
	want := "--inputs " + mixed + ": " + mixed + ":2 is a decision-log event (it has a \"decision_id\") and " + mixed + ":1 an inputs line"
	if code != exitUsage || strings.Count(stderr, want) != 1 || !strings.Contains(stderr, "give a decision log with --decision-log FILE, and inputs with --inputs FILE") {
		t.Errorf("exit %d, stderr:\n%s\nwant %d and %q", code, stderr, exitUsage, want)
	}
}

// A log of several paths runs as one workload per path: a row and an impact each, whether the
// log is named by flags or in a scenario file.
func TestReplaySeveralPaths(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "authz.rego")
	if err := os.WriteFile(policy, []byte("package authz\n\ndefault allow := false\n\nallow if input.user == \"alice\"\n\n"+
		"default ext := {\"allowed\": false}\n\next := {\"allowed\": true, \"headers\": {\"x\": \"y\"}} if input.user == \"bob\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "two.jsonl")
	if err := os.WriteFile(log, []byte(`[{"decision_id":"1","path":"authz/allow","input":{"user":"alice"},"result":true},
{"decision_id":"2","path":"authz/ext","input":{"user":"bob"},"result":{"allowed":true,"headers":{"x":"y"}}},
{"decision_id":"3","path":"authz/ext","input":{"user":"carol"},"result":{"allowed":true}}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	scenarioFile := filepath.Join(dir, "replay.yaml")
	if err := os.WriteFile(scenarioFile, []byte(`floor: false
pin: none
load: {workers: 1, requests: 6}
workloads:
  - {decision_log: two.jsonl, policy: [authz.rego]}
targets: [opa/inproc]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"flags", []string{"--target", "opa/inproc", "--decision-log", log, "--policy", policy, "--requests", "6", "--workers", "1"}},
		{"scenario", []string{"-f", scenarioFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".json")
			code, stdout, stderr := run(t, append(append([]string{"run"}, tc.args...), "--no-progress", "-o", out)...)
			if code != exitFailed {
				t.Fatalf("exit %d, want %d (event 3 flips)\n%s\n%s", code, exitFailed, stdout, stderr)
			}
			doc, err := result.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Runs) != 2 || doc.Runs[0].Workload != "two:authz/allow" || doc.Runs[1].Workload != "two:authz/ext" {
				t.Fatalf("runs %d: %v", len(doc.Runs), doc.Runs)
			}
			// Each row holds its path's events alone: 1 of authz/allow, 2 of authz/ext, the 6
			// requests cycling through them; event 3, flipped, is wrong each of its 3 times.
			for i, want := range []struct{ inputs, allow, wrong int }{{1, 1, 0}, {2, 2, 3}} {
				r := doc.Runs[i]
				if r.WorkloadDoc.Inputs != want.inputs || r.WorkloadDoc.ExpectAllow != want.allow || r.Summary.Requests != 6 || r.Summary.WrongDecision != uint64(want.wrong) {
					t.Errorf("row %s: %d inputs (%d allow), %d requests, %d wrong; want %d (%d), 6, %d",
						r.Workload, r.WorkloadDoc.Inputs, r.WorkloadDoc.ExpectAllow, r.Summary.Requests, r.Summary.WrongDecision, want.inputs, want.allow, want.wrong)
				}
				if !strings.Contains(stdout, r.Workload) {
					t.Errorf("the table does not name row %s:\n%s", r.Workload, stdout)
				}
			}
			if len(doc.Replays) != 2 {
				t.Fatalf("replays %+v", doc.Replays)
			}
			allow, ext := doc.Replays[0], doc.Replays[1]
			if allow.Query != "data.authz.allow" || allow.Events != 1 || allow.Reproduced != 1 || len(allow.Flipped) != 0 {
				t.Errorf("authz/allow: %+v", allow)
			}
			if ext.Query != "data.authz.ext.allowed" || ext.Field != "allowed" || ext.Events != 2 || ext.Reproduced != 1 || len(ext.Flipped) != 1 || ext.Flipped[0].DecisionID != "3" {
				t.Errorf("authz/ext: %+v", ext)
			}
			if !strings.Contains(stdout, `comparing the results' "allowed" field`) {
				t.Errorf("the compared field is not said:\n%s", stdout)
			}
		})
	}
}

// A replay reproduces every logged decision in each deployment mode besides in-process OPA: the
// policy compiled to Wasm, OPA behind Envoy's ext_authz (an OPA-Envoy event, its result an
// object compared by "allowed"), and any HTTP endpoint (--target http --url, a fake server here
// that decides by the same rule). Each log holds allows and denies, so a mode that answered the
// same whatever it was asked would show wrong decisions; each is replayed at its recorded pace,
// every event sent once.
func TestReplayInEveryMode(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stamp := func(k int) string {
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(k) * time.Millisecond).Format(time.RFC3339Nano)
	}
	users := []string{"alice", "bob", "alice", "carol", "alice", "bob"}
	var userLog []string
	for k, u := range users {
		userLog = append(userLog, fmt.Sprintf(`{"decision_id":"u%d","path":"authz/allow","input":{"user":%q},"result":%t,"timestamp":%q}`,
			k, u, u == "alice", stamp(k)))
	}
	usersPath := write("users.jsonl", strings.Join(userLog, "\n")+"\n")
	authz := write("authz.rego", "package authz\n\ndefault allow := false\n\nallow if input.user == \"alice\"\n")

	envoyPath, envoyEvents := writeEnvoyLog(t, dir)
	envoy := write("envoy.rego", envoyPolicy)

	// The fake endpoint decides by the policy's rule and keeps every body it was sent.
	var mu sync.Mutex
	var bodies []string
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var in struct{ User string }
		json.Unmarshal(b, &in)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		fmt.Fprintf(w, `{"allowed": %t}`, in.User == "alice")
	}))
	defer fake.Close()

	for _, tc := range []struct {
		target, log string
		events      int
		args        []string
	}{
		{"opa/wasm", usersPath, len(users), []string{"--policy", authz}},
		{"opa/extauthz", envoyPath, envoyEvents, []string{"--policy", envoy}},
		{"http", usersPath, len(users), []string{"--policy", authz, "--url", fake.URL + "/v1/authorize", "--decision-path", "/allowed"}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.target, "/", "-")+".json")
			code, stdout, stderr := run(t, append([]string{"run", "--target", tc.target, "--decision-log", tc.log, "--speed", "1",
				"--no-progress", "-o", out}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			doc, err := result.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			s := doc.Runs[0].Summary
			if s.OK != uint64(tc.events) || s.WrongDecision != 0 || s.Errors != 0 {
				t.Errorf("ok %d, wrong %d, errors %d; want every one of %d events reproduced", s.OK, s.WrongDecision, s.Errors, tc.events)
			}
			if r := doc.Replays; len(r) != 1 || r[0].Reproduced != tc.events || len(r[0].Flipped) != 0 {
				t.Errorf("impact %+v: want %d reproduced", r, tc.events)
			}
			if l := doc.Runs[0].Load.Replay; l == nil || l.Events != tc.events {
				t.Errorf("load.replay %+v: want the replay of %d events", l, tc.events)
			}
		})
	}
	// The endpoint was sent each logged input as it was logged: the probe's (the first
	// input) and then every event's once.
	mu.Lock()
	defer mu.Unlock()
	want := []string{`{"user":"alice"}`}
	for _, u := range users {
		want = append(want, fmt.Sprintf(`{"user":%q}`, u))
	}
	slices.Sort(bodies)
	slices.Sort(want)
	if !slices.Equal(bodies, want) {
		t.Errorf("the endpoint was sent %q\nwant %q", bodies, want)
	}
}

// envoyPolicy is OPA-Envoy's kind of policy: an object decision, allowed for GET under /public.
const envoyPolicy = `package envoy.authz

default allow := {"allowed": false}

allow := {"allowed": true, "headers": {"x-ext-auth-allow": "yes"}} if {
	input.attributes.request.http.method == "GET"
	input.parsed_path[0] == "public"
}
`

// writeEnvoyLog writes OPA-Envoy's decision-log events for envoyPolicy into dir: the input it
// builds from a CheckRequest, the result an object, allows and denies.
func writeEnvoyLog(t *testing.T, dir string) (path string, events int) {
	t.Helper()
	type check struct {
		method, path string
		allowed      bool
	}
	checks := []check{{"GET", "/public/a", true}, {"POST", "/public/a", false}, {"GET", "/private/b", false}, {"GET", "/public/c", true}}
	var lines []string
	for k, c := range checks {
		input := map[string]any{
			"attributes": map[string]any{"request": map[string]any{"http": map[string]any{"id": fmt.Sprint(k), "method": c.method, "path": c.path,
				"host": "example.com", "protocol": "HTTP/1.1", "headers": map[string]string{":authority": "example.com", ":method": c.method, ":path": c.path}}}},
			"parsed_path": strings.Split(strings.TrimPrefix(c.path, "/"), "/"), "parsed_query": map[string]any{}, "parsed_body": nil,
			"version": map[string]string{"encoding": "protojson", "ext_authz": "v3"},
		}
		result := map[string]any{"allowed": c.allowed}
		if c.allowed {
			result["headers"] = map[string]string{"x-ext-auth-allow": "yes"}
		}
		b, err := json.Marshal(map[string]any{"decision_id": fmt.Sprintf("e%d", k), "path": "envoy/authz/allow", "input": input,
			"result": result, "timestamp": time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(k) * time.Millisecond).Format(time.RFC3339Nano)})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	path = filepath.Join(dir, "envoy.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, len(checks)
}

// A bundle directory (OPA's layout: .rego files and data.json files in nested directories, a
// .manifest with roots) given as --policy DIR is read as `opa run --bundle DIR` reads it, by
// every OPA target: each reproduces every logged decision, which depends on the nested
// data.json. A JSON file not named data.json sits in the bundle too, contradicting it: OPA's
// bundle reader ignores it, its plain loader would merge it and fail. The same layout without a
// .manifest is read by OPA's plain loader, with --data beside it as before. Bad bundles are
// refused before any load, exit 2, naming the directory.
func TestReplayBundle(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bundle/.manifest", `{"revision": "r7", "roots": ["authz", "envoy"]}`)
	write("bundle/authz/policy.rego", "package authz\n\nimport data.authz.lib.admin\n\ndefault allow := false\n\nallow if admin\n\n"+
		"allow if data.authz.users[input.user].role == data.authz.allowed_role\n")
	write("bundle/authz/lib/admin.rego", "package authz.lib\n\nadmin if input.user == \"root\"\n")
	write("bundle/authz/data.json", `{"allowed_role": "editor"}`)
	write("bundle/authz/users/data.json", `{"alice": {"role": "editor"}, "bob": {"role": "viewer"}}`)
	write("bundle/authz/notes.json", `{"allowed_role": "viewer"}`)
	write("bundle/envoy/authz/policy.rego", envoyPolicy)
	bundle := filepath.Join(dir, "bundle")
	write("plain/authz/policy.rego", "package authz\n\nimport data.authz.lib.admin\n\ndefault allow := false\n\nallow if admin\n\n"+
		"allow if data.authz.users[input.user].role == data.authz.allowed_role\n")
	write("plain/authz/lib/admin.rego", "package authz.lib\n\nadmin if input.user == \"root\"\n")
	write("plain/authz/users/data.json", `{"alice": {"role": "editor"}, "bob": {"role": "viewer"}}`)
	write("role.json", `{"authz": {"allowed_role": "editor"}}`)
	users := map[string]bool{"alice": true, "bob": false, "root": true, "carol": false}
	var lines []string
	for k, u := range []string{"alice", "bob", "root", "carol", "alice"} {
		lines = append(lines, fmt.Sprintf(`{"decision_id":"b%d","path":"authz/allow","input":{"user":%q},"result":%t,"timestamp":"2026-01-01T00:00:00.00%dZ"}`,
			k, u, users[u], k))
	}
	write("users.jsonl", strings.Join(lines, "\n")+"\n")
	usersLog := filepath.Join(dir, "users.jsonl")
	envoyLog, envoyEvents := writeEnvoyLog(t, dir)

	for _, tc := range []struct {
		target, log string
		events      int
		args        []string
	}{
		{"opa/inproc", usersLog, 5, nil},
		{"opa/server", usersLog, 5, nil},
		// OPA's authorization policy in front, then a bundle of its own beside the user's.
		{"opa/server", usersLog, 5, []string{"--mtls-authz"}},
		{"opa/wasm", usersLog, 5, nil},
		{"opa/cli", usersLog, 5, nil},
		{"opa/extauthz", envoyLog, envoyEvents, nil},
		// No .manifest: loose files, the role from --data beside the directory.
		{"opa/server", usersLog, 5, []string{"--policy", filepath.Join(dir, "plain"), "--data", filepath.Join(dir, "role.json")}},
		{"opa/wasm", usersLog, 5, []string{"--policy", filepath.Join(dir, "plain"), "--data", filepath.Join(dir, "role.json")}},
	} {
		name := tc.target
		for _, a := range tc.args {
			name += " " + filepath.Base(a)
		}
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			args := []string{"run", "--target", tc.target, "--decision-log", tc.log, "--speed", "1", "--no-progress", "-o", out}
			if !slices.Contains(tc.args, "--policy") {
				args = append(args, "--policy", bundle)
			}
			code, stdout, stderr := run(t, append(args, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			doc, err := result.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			if s := doc.Runs[0].Summary; s.OK != uint64(tc.events) || s.WrongDecision != 0 || s.Errors != 0 {
				t.Errorf("ok %d, wrong %d, errors %d; want every one of %d events reproduced", s.OK, s.WrongDecision, s.Errors, tc.events)
			}
			if r := doc.Replays; len(r) != 1 || r[0].Reproduced != tc.events {
				t.Errorf("impact %+v: want %d reproduced", r, tc.events)
			}
		})
	}

	write("norego/authz/data.json", `{}`)
	write("noregobundle/.manifest", `{}`)
	write("noregobundle/authz/data.json", `{}`)
	write("badmanifest/.manifest", `{"revision": `)
	write("badmanifest/authz/policy.rego", "package authz\n\nallow := true\n")
	write("outside/.manifest", `{"roots": ["other"]}`)
	write("outside/authz/policy.rego", "package authz\n\nallow := true\n")
	write("data.json", `{}`)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no .rego", []string{"--policy", filepath.Join(dir, "norego")}, "--policy " + filepath.Join(dir, "norego") + ": a policy directory with no .rego file"},
		{"no .rego in a bundle", []string{"--policy", filepath.Join(dir, "noregobundle")}, "--policy " + filepath.Join(dir, "noregobundle") + ": a policy directory with no .rego file"},
		{"broken .manifest", []string{"--policy", filepath.Join(dir, "badmanifest")}, "--policy " + filepath.Join(dir, "badmanifest") + ": read as an OPA bundle (it has a .manifest): "},
		{"a policy outside the roots", []string{"--policy", filepath.Join(dir, "outside")}, "manifest roots [other] do not permit 'package authz'"},
		{"data beside a bundle", []string{"--policy", bundle, "--data", filepath.Join(dir, "data.json")}, "--policy " + bundle + " is an OPA bundle (it has a .manifest)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			code, _, stderr := run(t, append([]string{"run", "--target", "opa/server", "--decision-log", usersLog, "--speed", "1", "--no-progress", "-o", out}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %d and %q", code, stderr, exitUsage, tc.want)
			}
			if _, err := os.Stat(out); err == nil || strings.Contains(stderr, "scenario ad-hoc") {
				t.Errorf("a load started or a result was written:\n%s", stderr)
			}
		})
	}
}

// A paced replay whose schedule Go's durations cannot hold is refused before any load, naming
// the line or the flag, and a long one is said before it starts: events with no timestamp, or a
// stray one from 1700, ran nothing and exited 0 with no table and no result; a speed of 1e-300
// sent every event at once under that label; a ten-year replay started with no word.
func TestReplayPaceBeyondWhatCanBeScheduled(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "authz.rego")
	if err := os.WriteFile(policy, []byte("package authz\n\ndefault allow := false\n\nallow if input.n % 2 == 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// writeLog writes 10 events 1 ms apart; stamps replaces event k's timestamp member.
	writeLog := func(name string, stamps map[int]string) string {
		var lines []string
		for k := range 10 {
			ts, ok := stamps[k]
			if !ok {
				ts = fmt.Sprintf(`,"timestamp":%q`, start.Add(time.Duration(k)*time.Millisecond).Format(time.RFC3339Nano))
			}
			lines = append(lines, fmt.Sprintf(`{"decision_id":"d%d","path":"authz/allow","input":{"n":%d},"result":%t%s}`, k, k, k%2 == 0, ts))
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noStamp := writeLog("nots.jsonl", map[int]string{6: "", 8: ""})
	y1700 := writeLog("y1700.jsonl", map[int]string{0: `,"timestamp":"1700-01-01T00:00:00Z"`})
	tenYears := writeLog("longspan.jsonl", map[int]string{0: fmt.Sprintf(`,"timestamp":%q`, start.AddDate(-10, 0, 0).Format(time.RFC3339))})
	plain := writeLog("plain.jsonl", nil)

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"events with no timestamp", []string{"--decision-log", noStamp, "--speed", "1"},
			[]string{"nots.jsonl:7: no timestamp", "nots.jsonl:9: no timestamp"}},
		{"a timestamp from 1700", []string{"--decision-log", y1700, "--speed", "1"},
			[]string{"y1700.jsonl:1 (1700-01-01T00:00:00Z) and ", "y1700.jsonl:10 (2026-01-01T00:00:00.009Z) are some 326 years apart, more than a paced replay can schedule"}},
		{"a timestamp from 1700, long gaps shortened", []string{"--decision-log", y1700, "--speed", "1", "--max-gap", "10ms"},
			[]string{"y1700.jsonl:1 (1700-01-01T00:00:00Z)"}},
		{"a speed of 1e-300", []string{"--decision-log", plain, "--speed", "1e-300"},
			[]string{"--speed: plain: replay of 10 events over 9ms at 1e-300× would last", "more than a run may (100 years)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "r.json")
			code, stdout, stderr := run(t, append([]string{"run", "--target", "opa/inproc", "--policy", policy, "--no-progress", "-o", out}, tc.args...)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d\nstdout %s", code, exitUsage, stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "scenario ad-hoc") {
				t.Errorf("the load started:\n%s", stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused replay wrote %s (%v)", out, err)
			}
		})
	}

	t.Run("in a scenario file, the speed's line", func(t *testing.T) {
		file := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(file, []byte("floor: false\nworkloads:\n  - decision_log: plain.jsonl\n    policy: [authz.rego]\n    speed: 1e-300\ntargets: [opa/inproc]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := run(t, "run", "-f", file, "--check-only")
		if code != exitUsage || !strings.Contains(stderr, "s.yaml:5: speed: plain: replay of 10 events") {
			t.Errorf("exit %d, stderr %s; want %d naming s.yaml:5", code, stderr, exitUsage)
		}
	})

	t.Run("a ten-year replay is said before it starts", func(t *testing.T) {
		code, _, stderr := run(t, "run", "--target", "opa/inproc", "--policy", policy, "--decision-log", tenYears, "--speed", "1", "--repeat", "2", "--check-only")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		for _, w := range []string{"warning: replay longspan at 1× lasts 10.0 years a turn, 20.0 years for its 2 turns (its 10 events span 10.0 years)", "--max-gap shortens"} {
			if !strings.Contains(stderr, w) {
				t.Errorf("stderr lacks %q:\n%s", w, stderr)
			}
		}
		code, _, stderr = run(t, "run", "--target", "opa/inproc", "--policy", policy, "--decision-log", tenYears, "--speed", "1", "--max-gap", "1ms", "--check-only")
		if code != 0 || strings.Contains(stderr, "warning: replay") {
			t.Errorf("a replay its gaps shorten to 9 ms is warned about (exit %d):\n%s", code, stderr)
		}
	})
}
