package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var spicedbTestdata = filepath.Join("..", "..", "internal", "engine", "spicedb", "testdata")

// workloads verify runs a validation file in every mode of every engine: SpiceDB's modes check
// each of its assertions (assertCaveated's conditional answers included), and every other mode
// says it has no version of it. An assertion SpiceDB does not hold fails verify in both modes,
// naming its line.
func TestSpiceDBValidationFileVerifies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a SpiceDB server")
	}
	code, stdout, stderr := run(t, "workloads", "verify", "--policy", filepath.Join(spicedbTestdata, "docshare.yaml"))
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
		f := strings.Fields(line)
		rows[f[1]] = strings.Join(f[2:], " ")
	}
	for _, m := range engineModes(t) {
		got, want := rows[m.Label], "0 0 skipped: no "
		if m.Kind.Engine == "spicedb" {
			want = "9 9 ok"
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want %q", m.Label, got, want)
		}
	}

	// dave's check at an hour in office hours, asserted false: SpiceDB allows it.
	data, err := os.ReadFile(filepath.Join(spicedbTestdata, "docshare.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const denied = `'document:plan#view@user:dave with {"hour": 20}'`
	at := strings.Index(string(data), denied)
	if at < 0 {
		t.Fatalf("docshare.yaml has no %s", denied)
	}
	line := strconv.Itoa(strings.Count(string(data[:at]), "\n") + 1)
	wrong := strings.Replace(string(data), denied, `'document:plan#view@user:dave with {"hour": 11}'`, 1)
	path := filepath.Join(t.TempDir(), "wrong.yaml")
	if err := os.WriteFile(path, []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "workloads", "verify", "--target", "spicedb/inproc,spicedb/server", "--policy", path)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, exitFailed, stdout, stderr)
	}
	for _, mode := range []string{"spicedb/inproc", "spicedb/server"} {
		if want := "target " + mode + ": " + path + ":" + line + " expects deny, got allow"; !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// A schema, a relationships file and a JSONL of checks run in both modes, every check verified;
// the result records the server's version and the checks' source; bad files exit 2 before any
// load, naming the file and line.
func TestSpiceDBFilesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a SpiceDB server")
	}
	files := []string{"--policy", filepath.Join(spicedbTestdata, "docshare.zed"), "--data", filepath.Join(spicedbTestdata, "docshare.relationships"),
		"--inputs", filepath.Join(spicedbTestdata, "checks.jsonl")}
	doc, _ := runOK(t, filepath.Join(t.TempDir(), "r.json"), append([]string{"run", "--target", "spicedb/inproc,spicedb/server",
		"--requests", "50", "--warmup", "0", "--workers", "2", "--no-progress"}, files...)...)
	for _, r := range doc.Runs {
		if r.Summary.OK != 50 || r.Summary.Errors != 0 {
			t.Errorf("%s: ok %d errors %d, want 50 and none", r.Target, r.Summary.OK, r.Summary.Errors)
		}
		if !strings.HasPrefix(r.SUT.Version, "spicedb ") {
			t.Errorf("%s: version %q", r.Target, r.SUT.Version)
		}
	}
	if len(doc.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(doc.Runs))
	}

	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badRels := write("bad.relationships", "document:readme#owner@user:carol\ndocument:readme#nosuch@user:carol\n")
	badChecks := write("bad.jsonl", `{"check": "document:readme#view@user:alice", "expect": true}`+"\n"+`{"check": "document:readme#view@user:alice", "expect": "yes"}`+"\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"relationship the schema lacks", []string{"--policy", filepath.Join(spicedbTestdata, "docshare.zed"), "--data", badRels, "--inputs", filepath.Join(spicedbTestdata, "checks.jsonl")},
			badRels + ":2: spicedb refuses relationship document:readme#nosuch@user:carol"},
		{"check line", []string{"--policy", filepath.Join(spicedbTestdata, "docshare.zed"), "--inputs", badChecks}, badChecks + `:2: expect is "yes"`},
		{"validation file with inputs", []string{"--policy", filepath.Join(spicedbTestdata, "docshare.yaml"), "--inputs", badChecks}, "give it alone, without --data or --inputs"},
		{"schema without checks", []string{"--policy", filepath.Join(spicedbTestdata, "docshare.zed")}, "a SpiceDB schema needs --inputs FILE.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			code, _, stderr := run(t, append([]string{"run", "--target", "spicedb/inproc,spicedb/server", "--requests", "10", "--no-progress", "-o", out}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q in\n%s", code, exitUsage, tc.want, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a result was written: something ran")
			}
		})
	}
}
