package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/history"
	"github.com/authzbench/authzbench/internal/result"
)

// The hostile trial of 2026-11-28 (../shared/audits/hostile-2026-11-28.md) found history giving
// false answers or touching what it should not; each case here is one of its reproductions,
// run through the command as a user runs it.

// fileSums are the SHA-256 sums of every file in dir, to show a command left them as they were.
func fileSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

// H15: every command that reads a history refuses another program's SQLite database and an
// empty file (serve "never creates one"), exit 2, and leaves them byte for byte as they were;
// history add refuses the other program's database too. Only add and run --history create a
// history, and say so.
func TestHistoryForeignDatabase(t *testing.T) {
	url, _ := fakeOPA(t, 0)
	work := t.TempDir()
	r1 := filepath.Join(work, "r1.json")
	if code, _, stderr := run(t, tinyRun(url, "-o", r1)...); code != 0 {
		t.Fatalf("setup run: %d %s", code, stderr)
	}
	dir := t.TempDir()
	app := filepath.Join(dir, "app.db")
	raw, err := sql.Open("sqlite", app)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	before := fileSums(t, dir)
	for _, db := range []string{app, empty} {
		want := "is not an authzbench history but another database (tables users)"
		if db == empty {
			want = "is empty, not an authzbench history"
		}
		for _, args := range [][]string{
			{"history", "series", "--history", db},
			{"history", "changes", "--history", db},
			{"history", "gate", "--history", db, "--fail-on", "p99>+10%", r1},
		} {
			t.Run(filepath.Base(db)+" "+args[1], func(t *testing.T) {
				code, stdout, stderr := run(t, args...)
				if code != exitUsage || !strings.Contains(stderr, want) {
					t.Fatalf("exit %d, want 2 saying %q\n%s%s", code, want, stdout, stderr)
				}
			})
		}
		t.Run(filepath.Base(db)+" serve", func(t *testing.T) {
			code, stderr := serveRefuses(t, "serve", "--port", "0", "--history", db)
			if code != exitUsage || !strings.Contains(stderr, want) {
				t.Fatalf("exit %d, stderr %q; want 2 saying %q", code, stderr, want)
			}
		})
	}
	if code, _, stderr := run(t, "history", "add", "--history", app, r1); code != exitUsage || !strings.Contains(stderr, "another database") {
		t.Fatalf("history add into another program's database: exit %d %s", code, stderr)
	}
	if after := fileSums(t, dir); len(after) != len(before) || after[filepath.Base(app)] != before[filepath.Base(app)] || after[filepath.Base(empty)] != before[filepath.Base(empty)] {
		t.Fatalf("files changed or were left beside them: %d files before, %d after", len(before), len(after))
	}
	code, stdout, stderr := run(t, "history", "add", "--history", empty, r1)
	if code != 0 || !strings.Contains(stdout, "created history "+empty) || !strings.Contains(stdout, "added as document 1") {
		t.Fatalf("history add to an empty file: exit %d\n%s%s", code, stdout, stderr)
	}
	fresh := filepath.Join(t.TempDir(), "new.db")
	code, _, stderr = run(t, tinyRun(url, "-o", filepath.Join(work, "r2.json"), "--history", fresh)...)
	if code != 0 || !strings.Contains(stderr, "created history "+fresh) {
		t.Fatalf("run --history to a new file: exit %d\n%s", code, stderr)
	}
}

// H25, H26: history gate refuses a result that holds a repetition twice, as history add and
// compare do: counted twice, a file whose two real repetitions were too few to judge passed.
func TestHistoryGateRepetitionTwice(t *testing.T) {
	url, _ := fakeOPA(t, 0)
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	base := filepath.Join(dir, "base.json")
	if code, _, stderr := run(t, tinyRun(url, "-o", base, "--history", db)...); code != 0 {
		t.Fatalf("setup run: %d %s", code, stderr)
	}
	newer := filepath.Join(dir, "new.json")
	if code, _, stderr := run(t, tinyRun(url, "-o", newer)...); code != 0 {
		t.Fatalf("new run: %d %s", code, stderr)
	}
	doc, err := result.Read(newer)
	if err != nil {
		t.Fatal(err)
	}
	reps := doc.Runs[0].Repetitions
	doc.Runs[0].Repetitions = append(reps, reps...)
	doc.Runs[0].Repetitions = append(doc.Runs[0].Repetitions, reps...)
	dup := filepath.Join(dir, "dup3.json")
	if err := result.Write(dup, doc); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"history", "gate", "--history", db, "--branch", history.Branch(), "--fail-on", "p99>+50%,throughput<-50%", dup},
		{"history", "add", "--history", db, dup},
		{"compare", base, dup},
	} {
		code, stdout, stderr := run(t, args...)
		if code != exitUsage || !strings.Contains(stderr, "holds one repetition twice") {
			t.Fatalf("%s: exit %d, want 2 naming the repetition held twice\n%s%s", args[1], code, stdout, stderr)
		}
	}
}

// H27: a shard's result is refused by history add and gate (it measured its part of the load,
// and would read as a whole run at that share of the throughput), and run --shard --history is
// refused before any load; the merge of the shards is added and gated as the whole run it is.
func TestHistoryShards(t *testing.T) {
	url, hits := fakeOPA(t, 0)
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	shardRun := func(i int, extra ...string) []string {
		return append([]string{"run", "--target", "opa/server", "--url", url, "--workload", "nop", "--duration", "300ms",
			"--warmup", "0s", "--workers", "2", "--no-progress", "--shard", fmt.Sprintf("%d/2", i)}, extra...)
	}
	var shards []string
	for i := 1; i <= 2; i++ {
		out := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		if code, _, stderr := run(t, shardRun(i, "-o", out)...); code != 0 {
			t.Fatalf("shard %d: %d %s", i, code, stderr)
		}
		shards = append(shards, out)
	}
	for _, args := range [][]string{
		append([]string{"history", "add", "--history", db}, shards...),
		{"history", "gate", "--history", db, "--fail-on", "throughput<-5%", shards[0]},
	} {
		code, stdout, stderr := run(t, args...)
		if code != exitUsage || !strings.Contains(stderr, "a shard's result (shard 1/2)") || !strings.Contains(stderr, "merge") {
			t.Fatalf("%s: exit %d, want 2 refusing the shard\n%s%s", args[1], code, stdout, stderr)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatal("a refused add created the history")
	}
	hitsBefore := hits.Load()
	code, _, stderr := run(t, shardRun(1, "-o", filepath.Join(dir, "s-h.json"), "--history", db)...)
	if code != exitUsage || !strings.Contains(stderr, "--history with --shard 1/2") || hits.Load() != hitsBefore {
		t.Fatalf("run --shard --history: exit %d, %d requests; want 2 before any load\n%s", code, hits.Load()-hitsBefore, stderr)
	}
	merged := filepath.Join(dir, "m.json")
	if code, _, stderr := run(t, "merge", shards[0], shards[1], "-o", merged); code != 0 {
		t.Fatalf("merge: %d %s", code, stderr)
	}
	code, stdout, stderr := run(t, "history", "add", "--history", db, "--branch", "main", merged)
	if code != 0 || !strings.Contains(stdout, "added as document 1") {
		t.Fatalf("add the merge: exit %d\n%s%s", code, stdout, stderr)
	}
}

// H30: a scenario naming two different workloads alike is refused before any load, naming the
// line; a result holding two runs of one series that describe different workloads (written
// before) is refused by history add.
func TestHistoryTwoWorkloadsOfOneName(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"a.rego":       "package authz\n\ndefault allow := false\n\nallow if input.user == \"alice\"\n",
		"b.rego":       "package authz\n\ndefault allow := true\n",
		"in.jsonl":     `{"input":{"user":"alice"},"expect":true}` + "\n",
		"twice.yaml":   "floor: false\nload: {workers: 1, duration: 200ms, warmup: 0s}\nworkloads:\n  - {name: prod, inputs: in.jsonl, policy: [a.rego], query: data.authz.allow}\n  - {name: prod, inputs: in.jsonl, policy: [b.rego], query: data.authz.allow}\ntargets: [opa/inproc]\n",
		"builtin.yaml": "floor: false\nload: {workers: 1, duration: 200ms, warmup: 0s}\nworkloads: [nop, nop]\ntargets: [opa/inproc]\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "r.json")
	code, _, stderr := run(t, "run", "-f", filepath.Join(dir, "twice.yaml"), "--no-progress", "-o", out)
	if code != exitUsage || !strings.Contains(stderr, "twice.yaml:5: workload \"prod\" is named twice (line 4 too)") {
		t.Fatalf("exit %d, want 2 naming the line\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a result was written")
	}
	// The same built-in twice (a floor before and after) is one workload measured twice: run,
	// and added as one point.
	twice := filepath.Join(dir, "nop-twice.json")
	if code, _, stderr := run(t, "run", "-f", filepath.Join(dir, "builtin.yaml"), "--no-progress", "-o", twice); code != 0 {
		t.Fatalf("nop twice: %d %s", code, stderr)
	}
	db := filepath.Join(dir, "h.db")
	if code, stdout, stderr := run(t, "history", "add", "--history", db, "--branch", "main", twice); code != 0 || !strings.Contains(stdout, "added as document 1") {
		t.Fatalf("nop twice added: %d %s%s", code, stdout, stderr)
	}
	doc, err := result.Read(twice)
	if err != nil {
		t.Fatal(err)
	}
	doc.Runs[1].WorkloadDoc.Description = "another policy under the same name"
	for i := range doc.Runs[1].Repetitions {
		doc.Runs[1].Repetitions[i].ID = result.NewRepetitionID()
	}
	mixed := filepath.Join(dir, "mixed.json")
	if err := result.Write(mixed, doc); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "history", "add", "--history", db, mixed); code != exitUsage || !strings.Contains(stderr, "describe different workloads") {
		t.Fatalf("a result of two workloads of one name: exit %d, want 2\n%s", code, stderr)
	}
}

// H22: a --series or --branch filter that matches nothing is bad input, not "no change found".
func TestHistoryChangesFilterMatchesNothing(t *testing.T) {
	url, _ := fakeOPA(t, 0)
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	if code, _, stderr := run(t, tinyRun(url, "-o", filepath.Join(dir, "r.json"), "--history", db)...); code != 0 {
		t.Fatalf("setup run: %d %s", code, stderr)
	}
	for _, args := range [][]string{{"--series", "zzz"}, {"--branch", "no-such-branch"}} {
		code, stdout, stderr := run(t, append([]string{"history", "changes", "--history", db}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, "no series of "+db+" matches "+args[0]) || strings.Contains(stdout, "no change found") {
			t.Fatalf("%v: exit %d, want 2\n%s%s", args, code, stdout, stderr)
		}
	}
	if code, stdout, _ := run(t, "history", "changes", "--history", db, "--series", "nop opa/server"); code != 0 || !strings.Contains(stdout, "no change found") {
		t.Fatalf("a filter that matches: exit %d\n%s", code, stdout)
	}
}

// A testbed name that cannot go into a URL or a file name, or an empty one, is refused before
// anything is measured or written; a good one names the series, and a result's own is kept.
func TestHistoryTestbedNames(t *testing.T) {
	url, hits := fakeOPA(t, 0)
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	for _, bad := range []string{"", "ci runner", "ci/runner", "../up", "-dash", strings.Repeat("x", 65), "é"} {
		hitsBefore := hits.Load()
		out := filepath.Join(dir, "bad.json")
		code, _, stderr := run(t, tinyRun(url, "-o", out, "--history", db, "--testbed", bad)...)
		if code != exitUsage || !strings.Contains(stderr, "--testbed: testbed name") || hits.Load() != hitsBefore {
			t.Fatalf("run --testbed %q: exit %d, %d requests\n%s", bad, code, hits.Load()-hitsBefore, stderr)
		}
		for _, p := range []string{out, db} {
			if _, err := os.Stat(p); err == nil {
				t.Fatalf("run --testbed %q wrote %s", bad, p)
			}
		}
	}
	named := filepath.Join(dir, "named.json")
	if code, _, stderr := run(t, tinyRun(url, "-o", named, "--history", db, "--testbed", "ci-4core.v2")...); code != 0 {
		t.Fatalf("run --testbed: %d %s", code, stderr)
	}
	if doc, err := result.Read(named); err != nil || doc.Env.Testbed != "ci-4core.v2" {
		t.Fatalf("the result does not keep its testbed: %v", err)
	}
	for _, args := range [][]string{
		{"history", "add", "--history", db, "--testbed", "", named},
		{"history", "gate", "--history", db, "--testbed", "a b", "--fail-on", "p99>+10%", named},
	} {
		if code, _, stderr := run(t, args...); code != exitUsage || !strings.Contains(stderr, "--testbed: testbed name") {
			t.Fatalf("%s --testbed: exit %d %s", args[1], code, stderr)
		}
	}
	again := filepath.Join(dir, "again.json")
	if code, _, stderr := run(t, tinyRun(url, "-o", again)...); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "history", "add", "--history", db, "--testbed", "lab", again); code != 0 {
		t.Fatalf("history add --testbed: %d %s", code, stderr)
	}
	code, stdout, _ := run(t, "history", "series", "--history", db, "--format", "json")
	var listed struct{ Series []history.Series }
	if code != 0 || json.Unmarshal([]byte(stdout), &listed) != nil || len(listed.Series) != 2 ||
		listed.Series[0].Testbed.Name != "ci-4core.v2" || listed.Series[1].Testbed.Name != "lab" {
		t.Fatalf("series: exit %d\n%s", code, stdout)
	}
}

// Two results of one CPU model, cores and pinning whose kernels differ only in their build
// string (a CI runner's image update) land in one series of two commits.
func TestHistoryKernelBuildKeepsTheSeries(t *testing.T) {
	url, _ := fakeOPA(t, 0)
	dir := t.TempDir()
	var files []string
	for i, kernel := range []string{"6.18.44-fc-v595", "6.18.44-fc-v669"} {
		out := filepath.Join(dir, fmt.Sprintf("k%d.json", i))
		if code, _, stderr := run(t, tinyRun(url, "-o", out)...); code != 0 {
			t.Fatalf("run: %d %s", code, stderr)
		}
		doc, err := result.Read(out)
		if err != nil {
			t.Fatal(err)
		}
		doc.Env.Kernel, doc.Env.Commit = kernel, strings.Repeat(strconv.Itoa(i+1), 40)
		if err := result.Write(out, doc); err != nil {
			t.Fatal(err)
		}
		files = append(files, out)
	}
	db := filepath.Join(dir, "h.db")
	if code, _, stderr := run(t, append([]string{"history", "add", "--history", db, "--branch", "main"}, files...)...); code != 0 {
		t.Fatalf("add: %d %s", code, stderr)
	}
	code, stdout, _ := run(t, "history", "series", "--history", db)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 2 || !regexp.MustCompile(`\s2\s+\d{4}-`).MatchString(lines[1]) || !strings.Contains(lines[1], "kernel 6.18.44-fc-v669") {
		t.Fatalf("want one series of 2 commits, its last kernel shown:\n%s", stdout)
	}
}

// H20: SIGTERM (as SIGINT) stops history add between two files: exit 130, and a line saying how
// many were added, which is what the history holds.
func TestHistoryAddInterrupted(t *testing.T) {
	url, _ := fakeOPA(t, 0)
	dir := t.TempDir()
	first := filepath.Join(dir, "r0000.json")
	if code, _, stderr := run(t, tinyRun(url, "-o", first)...); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	doc, err := result.Read(first)
	if err != nil {
		t.Fatal(err)
	}
	files := []string{first}
	for i := 1; i < 400; i++ {
		doc.Created = doc.Created.Add(time.Minute)
		for j := range doc.Runs[0].Repetitions {
			doc.Runs[0].Repetitions[j].ID = result.NewRepetitionID()
		}
		f := filepath.Join(dir, fmt.Sprintf("r%04d.json", i))
		if err := result.WriteNew(f, doc); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	db := filepath.Join(dir, "h.db")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			os.Remove(db)
			cmd := exec.Command(os.Args[0], append([]string{"history", "add", "--history", db, "--branch", "main"}, files...)...)
			cmd.Env = append(os.Environ(), "AUTHZBENCH_TEST_MAIN=1")
			stdout, _ := cmd.StdoutPipe()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stdout)
			added := 0
			for sc.Scan() {
				if strings.Contains(sc.Text(), "added as document") {
					if added == 0 {
						cmd.Process.Signal(sig)
					}
					added++
				}
			}
			io.Copy(io.Discard, stdout)
			cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			m := regexp.MustCompile(`interrupted by \w+: (\d+) of 400 files added or found stored \((\d+) new documents\)`).FindStringSubmatch(stderr.String())
			if code != exitInterrupted || m == nil {
				t.Fatalf("exit %d, want 130 with a line saying what was added\n%s", code, stderr.String())
			}
			said, _ := strconv.Atoi(m[2])
			stored := storedRepetitions(t, db) / 2
			if said != added || stored != added || added == 400 {
				t.Fatalf("said %d documents added, printed %d lines, the history holds %d (of 400)", said, added, stored)
			}
		})
	}
}

// H08: a history the user may not write is found before the load, exit 2, as an -o that cannot
// be written is, not after it. The file is made read-only for the user who runs authzbench; as
// root, who may write any file, the run is made as nobody.
func TestHistoryReadOnlyBeforeLoad(t *testing.T) {
	url, hits := fakeOPA(t, 0)
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	if code, _, stderr := run(t, tinyRun(url, "-o", filepath.Join(dir, "first.json"), "--history", db)...); code != 0 {
		t.Fatalf("setup run: %d %s", code, stderr)
	}
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	bin := os.Args[0]
	cmd := exec.Command(bin)
	if os.Geteuid() == 0 {
		// nobody must reach the binary and the directory: a link to the test binary in a
		// directory open to all, and the history's directory writable by all (as the user's
		// own would be), so only the file's mode stands in the way.
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(d, 0o777); err != nil {
				t.Fatal(err)
			}
		}
		bin = filepath.Join(dir, "authzbench.test")
		if err := os.Link(os.Args[0], bin); err != nil {
			raw, err := os.ReadFile(os.Args[0])
			if err != nil || os.WriteFile(bin, raw, 0o755) != nil {
				t.Skipf("cannot put the test binary where nobody can run it: %v", err)
			}
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out := filepath.Join(dir, "r.json")
	cmd.Path, cmd.Args = bin, append([]string{bin}, tinyRun(url, "-o", out, "--history", db)...)
	cmd.Env = append(os.Environ(), "AUTHZBENCH_TEST_MAIN=1", "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	hitsBefore := hits.Load()
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(stderr.String(), "--history: history "+db+" cannot be written") {
		t.Fatalf("exit %d, want 2 naming the history that cannot be written\n%s", code, stderr.String())
	}
	if n := hits.Load() - hitsBefore; n != 0 {
		t.Fatalf("%d requests: the load ran before the history was found read-only", n)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a result was written")
	}
}
