package main

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

// goWords are words of Go, of its YAML and JSON libraries and of its parsers, none of which a
// user wrote or can act on: a message that holds one has let the program's insides through.
var goWords = []string{"!!", "unmarshal", "struct", "Go value", "main.", "[]", "int64", "uint64", "float64",
	"time.Duration", "bufio", "strconv", "parsing \"", "invalid syntax", "token too long", "2006-01-02", "cannot parse",
	"workload :", "stat ", "open ", "*"}

// libraryPrefix is the prefix encoding/json and yaml.v3 put before their messages (not the end
// of a file's name, r.json: ...).
var libraryPrefix = regexp.MustCompile(`(^|[\s:])(json|yaml): `)

// TestMessagesInTheUsersWords: bad input of every kind (a file's value of the wrong kind, a
// line that is not the object it must be, a line too long, a file that is not there, a flag
// whose value does not parse, a count of 0) is refused before anything runs (exit 2, nothing
// written) with the file and line, key or flag the user wrote and the kind of value it
// wants, never Go's types, fields or library wording.
func TestMessagesInTheUsersWords(t *testing.T) {
	policy := "package authz\ndefault allow := false\nallow if input.a == 1\n"
	good := `{"input": {"a": 1}, "expect": true}` + "\n"
	event := `{"decision_id": "d1", "path": "authz/allow", "input": {"a": 1}, "result": true, "timestamp": "2026-01-01T00:00:00Z"}` + "\n"
	// brief bounds a run the rule under test should refuse, so that without the rule the test
	// fails in seconds rather than running the default load.
	brief := []string{"--workload", "nop", "--duration", "100ms", "--warmup", "0s", "--no-progress", "-o", "out.json"}
	noRuns := `{"schema": "authzbench/result/v1", "env": {"cores": 2}, "runs": [], "stop_reason": "rbac on opa/server: exited"}`
	cedarReq := `{"principal": {"type": "User", "id": "a"}, "action": {"type": "Action", "id": "view"}, "resource": {"type": "Doc", "id": "d"}}` + "\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		// long, when set, is a file whose second line is one byte longer than a line may be,
		// made sparse so that nothing that long is written; its first line is longFirst, or an
		// inputs line.
		long, longFirst string
		args            []string
		want            []string
		// ran is set for the one case found while the load runs, not before: it exits 1 and
		// keeps what it measured in this result file.
		ran string
		// renders is set for a result that is no bad input but holds no runs: it renders (exit
		// 0), and want is looked for in what it printed, stdout and stderr.
		renders bool
	}{
		{name: "scenario: a word for a number",
			files: map[string]string{"s.yaml": "workloads: [rbac]\ntargets: [opa/inproc]\nload:\n  workers: four\n"},
			args:  []string{"run", "-f", "s.yaml"},
			want:  []string{"s.yaml:4: key `load.workers`: want a whole number, got \"four\""}},
		{name: "scenario: a word for a duration",
			files: map[string]string{"s.yaml": "workloads: [rbac]\ntargets: [opa/inproc]\nload:\n  timeout: four\n  duration: 5\n"},
			args:  []string{"run", "-f", "s.yaml"},
			want:  []string{"s.yaml:4: key `load.timeout`: want a duration such as 2s, got \"four\"", "s.yaml:5: key `load.duration`: want a duration such as 2s, got 5"}},
		{name: "scenario: a mapping for a number, a word in a list",
			files: map[string]string{"s.yaml": "workloads: [rbac]\ntargets:\n  - target: opa/inproc\n    load:\n      workers_sweep: [1, x]\nrepeat: {a: 1}\n"},
			args:  []string{"run", "-f", "s.yaml"},
			want:  []string{"s.yaml:5: key `targets.load.workers_sweep`, item 2: want a whole number, got \"x\"", "s.yaml:6: key `repeat`: want a whole number, got a mapping"}},
		{name: "scenario: an option of the wrong kind",
			files: map[string]string{"s.yaml": "workloads: [rbac]\ntargets:\n  - target: opa/server\n    options:\n      port: eighty\n"},
			args:  []string{"run", "-f", "s.yaml"},
			want:  []string{"s.yaml:5: target opa/server: options: key `port`: want a whole number, got \"eighty\""}},
		{name: "scenario: a count of 0",
			files: map[string]string{"s.yaml": "workloads: [rbac]\ntargets:\n  - target: opa/server\n    options:\n      http2: true\n      http2_connections: 0\n  - target: opa/inproc\n    load: {requests: 0}\n"},
			args:  []string{"run", "-f", "s.yaml"},
			want:  []string{"s.yaml:6: target opa/server: options: http2_connections 0: want 1 or more", "s.yaml:8: requests 0: want 1 or more"}},
		{name: "scenario: a policy that is not there",
			files: map[string]string{"s.yaml": "workloads:\n  - policy: [missing.rego]\n    inputs: in.jsonl\ntargets: [opa/inproc]\n", "in.jsonl": good},
			args:  []string{"run", "-f", "s.yaml"},
			want:  []string{"s.yaml:2: policy missing.rego: no such file"}},
		{name: "scenario file not there",
			args: []string{"run", "-f", "nope.yaml"},
			want: []string{"read scenario nope.yaml: no such file"}},
		{name: "inputs: lines that are not inputs",
			files: map[string]string{"p.rego": policy, "in.jsonl": good + `{"input": {}, "expect": "yes"}` + "\n3\n[1]\n{\"input\": {}, \"expcet\": true}\n"},
			args:  []string{"run", "--target", "opa/inproc", "--policy", "p.rego", "--inputs", "in.jsonl"},
			want: []string{"in.jsonl:2: key `expect`: want true or false, got a string",
				`in.jsonl:3: want a JSON object {"input": {...}, "expect": true|false}, got a number`,
				`in.jsonl:4: want a JSON object {"input": {...}, "expect": true|false}, got a list`,
				`in.jsonl:5: unknown key "expcet"`}},
		{name: "inputs: a line too long",
			files: map[string]string{"p.rego": policy}, long: "in.jsonl",
			args: []string{"run", "--target", "opa/inproc", "--policy", "p.rego", "--inputs", "in.jsonl"},
			want: []string{"in.jsonl:2: line longer than 64 MiB, the most one line of inputs may hold"}},
		{name: "decision log: a line too long",
			files: map[string]string{"p.rego": policy}, long: "d.jsonl", longFirst: event,
			args: []string{"run", "--target", "opa/inproc", "--policy", "p.rego", "--decision-log", "d.jsonl"},
			want: []string{"d.jsonl:2: line longer than 64 MiB, the most one line of a decision log may hold"}},
		{name: "decision log given as inputs: a line too long",
			files: map[string]string{"p.rego": policy}, long: "d.jsonl", longFirst: event,
			args: []string{"run", "--target", "opa/inproc", "--policy", "p.rego", "--inputs", "d.jsonl"},
			want: []string{"d.jsonl:2: line longer than 64 MiB, the most one line of a decision log may hold"}},
		{name: "Cedar requests: a line that is not a request",
			files: map[string]string{"p.cedar": "permit(principal, action, resource);\n", "r.jsonl": cedarReq + "true\n" + strings.TrimSuffix(cedarReq, "}\n") + `, "expect": 1}` + "\n"},
			args:  []string{"run", "--target", "cedar/inproc", "--cedar-policies", "p.cedar", "--cedar-requests", "r.jsonl"},
			want: []string{`r.jsonl:2: want a JSON object {"principal": ..., "action": ..., "resource": ..., "context": {...}, "expect": true|false}, got true or false`,
				`r.jsonl:3: "expect" must be true or false, not 1`}},
		{name: "Cedar entities: an object for the array",
			files: map[string]string{"p.cedar": "permit(principal, action, resource);\n", "r.jsonl": cedarReq, "e.json": `{"uid": 5}`},
			args:  []string{"run", "--target", "cedar/inproc", "--cedar-policies", "p.cedar", "--cedar-requests", "r.jsonl", "--entities", "e.json"},
			want:  []string{"e.json: want a JSON array of Cedar entities, got an object"}},
		{name: "Cedar entities: a number for an id",
			files: map[string]string{"p.cedar": "permit(principal, action, resource);\n", "r.jsonl": cedarReq, "e.json": `[{"uid": {"type": "User", "id": 5}, "attrs": {}, "parents": []}]`},
			args:  []string{"run", "--target", "cedar/inproc", "--cedar-policies", "p.cedar", "--cedar-requests", "r.jsonl", "--entities", "e.json"},
			want:  []string{"e.json:1:2: entity 1 of the array: \"uid\": key `id`: want a string, got a number"}},
		{name: "Cedar requests: a number for an id",
			files: map[string]string{"p.cedar": "permit(principal, action, resource);\n", "r.jsonl": strings.Replace(cedarReq, `"id": "a"`, `"id": 5`, 1)},
			args:  []string{"run", "--target", "cedar/inproc", "--cedar-policies", "p.cedar", "--cedar-requests", "r.jsonl"},
			want:  []string{"r.jsonl:1: \"principal\": object is not an entity: key `id`: want a string, got a number"}},
		{name: "Cedar template links: a number for a name",
			files: map[string]string{"p.cedar": "permit(principal == ?principal, action, resource);\n", "r.jsonl": cedarReq, "l.json": `[{"template_id": 5, "link_id": "l", "args": {}}]`},
			args:  []string{"run", "--target", "cedar/inproc", "--cedar-policies", "p.cedar", "--cedar-requests", "r.jsonl", "--template-links", "l.json"},
			want:  []string{"l.json:1:2: template link 1: key `template_id`: want a string, got a number"}},
		{name: "Cedar schema: a number for a namespace",
			files: map[string]string{"p.cedar": "permit(principal, action, resource);\n", "r.jsonl": cedarReq, "s.json": `{"App": 5}`},
			args:  []string{"run", "--target", "cedar/inproc", "--cedar-policies", "p.cedar", "--cedar-requests", "r.jsonl", "--schema", "s.json"},
			want:  []string{"parse Cedar schema s.json: namespace \"App\": want an object, got a number"}},
		{name: "--policy not there",
			files: map[string]string{"in.jsonl": good},
			args:  []string{"run", "--target", "opa/inproc", "--policy", "missing.rego", "--data", "nodata.json", "--inputs", "in.jsonl"},
			want:  []string{"--policy missing.rego: no such file", "--data nodata.json: no such file"}},
		{name: "--inputs not there, workloads verify",
			files: map[string]string{"p.rego": policy},
			args:  []string{"workloads", "verify", "--policy", "p.rego", "--inputs", "nope.jsonl"},
			want:  []string{"--inputs nope.jsonl: no such file"}},
		{name: "result of the wrong shape",
			files: map[string]string{"r.json": "{\"schema\": \"authzbench/result/v1\",\n\"runs\": [{\"repetitions\": [{\"requests\": \"many\"}]}]}"},
			args:  []string{"report", "r.json"},
			want:  []string{"read result r.json:2: key `runs.repetitions.requests`: want a whole number, got a string"}},
		{name: "result with a word for a time",
			files: map[string]string{"r.json": "{\"schema\": \"authzbench/result/v1\",\n\"created\": \"yesterday\", \"runs\": []}"},
			args:  []string{"report", "r.json"},
			want:  []string{`read result r.json:2: want a time such as 2026-11-23T18:00:00Z, got "yesterday"`}},
		{name: "result not JSON",
			files: map[string]string{"r.json": "{\n\"schema\": authzbench\n}"},
			args:  []string{"merge", "r.json", "r.json", "-o", "m.json"},
			want:  []string{"read result r.json:2: not valid JSON: invalid character 'a' looking for beginning of value"}},
		{name: "result not there", args: []string{"compare", "a.json", "b.json"}, want: []string{"read result a.json: no such file"}},
		{name: "flag: a word for a number list", args: []string{"run", "--workers", "x"}, want: []string{"--workers x: want whole numbers separated by commas"}},
		{name: "flag: a word in a rate list", args: []string{"run", "--rates", "1,x"}, want: []string{"--rates 1,x: want numbers separated by commas"}},
		{name: "flag: a number for a duration", args: []string{"run", "--duration", "5"}, want: []string{"--duration 5: want a duration such as 2s"}},
		{name: "flag: a word for true or false", args: []string{"run", "--tls=maybe"}, want: []string{"--tls maybe: want true or false"}},
		{name: "flag: a float for a count", args: []string{"capacity", "--max-steps", "1.5"}, want: []string{"--max-steps 1.5: want a whole number"}},
		{name: "--replicas 0", args: append([]string{"run", "--target", "opa/server", "--replicas", "0"}, brief...), want: []string{"--replicas 0: want 1 or more"}},
		{name: "--replicas -1", args: append([]string{"run", "--target", "opa/server", "--replicas", "-1"}, brief...), want: []string{"--replicas -1: want 1 or more"}},
		{name: "--grpc-connections 0", args: append([]string{"run", "--target", "opa/extauthz", "--workload", "envoy", "--grpc-connections", "0"}, brief...), want: []string{"--grpc-connections 0: want 1 or more"}},
		{name: "--http2-connections 0", args: append([]string{"run", "--target", "opa/server", "--http2", "--http2-connections", "0"}, brief...), want: []string{"--http2-connections 0: want 1 or more"}},
		{name: "--workers with a 0", args: append([]string{"run", "--target", "opa/inproc", "--workers", "1,0"}, brief...), want: []string{"--workers 0: want 1 or more"}},
		{name: "--requests 0", args: []string{"run", "--target", "opa/inproc", "--workload", "nop", "--requests", "0", "--warmup", "0s", "--no-progress", "-o", "out.json"}, want: []string{"--requests 0: want 1 or more"}},
		{name: "profile --rounds 0", args: []string{"profile", "--workload", "rbac", "--rounds", "0"}, want: []string{"--rounds 0: want 1 or more"}},
		{name: "ab --repeat 0", args: []string{"ab", "--repeat", "0", "--workload-a", "rbac", "--workload-b", "nop", "--out-a", "a.json", "--out-b", "b.json", "--", "--target", "opa/inproc", "--duration", "100ms", "--warmup", "0s"}, want: []string{"--repeat 0: want 1 or more"}},
		{name: "capacity --connections 0", args: []string{"capacity", "--target", "opa/inproc", "--workload", "nop", "--connections", "0", "--step", "100ms", "--warmup", "0s", "--max-steps", "1", "--no-progress", "-o", "out.json"}, want: []string{"--connections 0: want 1 or more"}},
		{name: "calibrate --workers 0", args: []string{"calibrate", "--workers", "0", "--duration", "100ms", "-o", "out.json"}, want: []string{"--workers 0: want 1 or more"}},
		{name: "--timeout 1ns", ran: "out.json",
			args: []string{"run", "--target", "cedar/inproc", "--workload", "nop", "--timeout", "1ns", "--warmup", "0s", "--duration", "5s", "--no-progress", "-o", "out.json"},
			want: []string{"the timeout is too short", "ran past the 1ns timeout", "raise --timeout"}},
		{name: "no runs, table", renders: true, files: map[string]string{"r.json": noRuns},
			args: []string{"report", "r.json"}, want: []string{"This result holds no runs: nothing was measured (the run stopped: rbac on opa/server: exited)"}},
		{name: "no runs, markdown", renders: true, files: map[string]string{"r.json": noRuns},
			args: []string{"report", "--format", "markdown", "r.json"}, want: []string{"- This result holds no runs: nothing was measured (the run stopped"}},
		{name: "no runs, html", renders: true, files: map[string]string{"r.json": noRuns},
			args: []string{"report", "--format", "html", "r.json"}, want: []string{"This result holds no runs: nothing was measured (the run stopped"}},
		{name: "no runs, gobench", renders: true, files: map[string]string{"r.json": noRuns},
			args: []string{"report", "--format", "gobench", "r.json"}, want: []string{"\nThis result holds no runs: nothing was measured (the run stopped"}},
		{name: "no runs, csv", renders: true, files: map[string]string{"r.json": noRuns},
			args: []string{"report", "--format", "csv", "r.json"}, want: []string{"authzbench: r.json: this result holds no runs: nothing was measured (the run stopped"}},
		{name: "no runs, json", renders: true, files: map[string]string{"r.json": noRuns},
			args: []string{"report", "--format", "json", "r.json"}, want: []string{"authzbench: r.json: this result holds no runs: nothing was measured (the run stopped"}},
		{name: "verify --parallel 0", args: []string{"workloads", "verify", "nop", "--target", "opa/inproc", "--first", "1", "--parallel", "0"}, want: []string{"--parallel 0: want 1 or more"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			for name, content := range tc.files {
				if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.long != "" {
				writeLongLine(t, tc.long, cmp.Or(tc.longFirst, good))
			}
			before := filesIn(t, dir)
			code, stdout, stderr := run(t, tc.args...)
			wantCode, said := exitUsage, stderr
			if tc.renders {
				wantCode, said = exitOK, stdout+stderr
			}
			if tc.ran != "" {
				wantCode = exitFailed
				before = append(before, tc.ran)
				slices.Sort(before)
			}
			if code != wantCode {
				t.Errorf("exit %d, want %d\nstdout %s\nstderr %s", code, wantCode, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(said, w) {
					t.Errorf("said\n%s\nwant it to say\n%s", said, w)
				}
			}
			for _, w := range goWords {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr\n%s\nsays %q: Go's words, not the user's", stderr, w)
				}
			}
			if libraryPrefix.MatchString(stderr) {
				t.Errorf("stderr\n%s\nquotes a decoding library's message", stderr)
			}
			if after := filesIn(t, dir); !slices.Equal(after, before) {
				t.Errorf("files %v after the command, %v before: a refused command writes nothing", after, before)
			}
		})
	}
}

// writeLongLine writes path with a good first line and a second line one byte longer than a
// line may hold, as a sparse file (NUL bytes the file system does not store).
func writeLongLine(t *testing.T, path, first string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(first); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(len(first)) + workload.MaxLineBytes + 1); err != nil {
		t.Fatal(err)
	}
}

// filesIn lists every file under dir, relative to it.
func filesIn(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}
