package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// outputEnv is one case of the output rule: a fault environment (its directory, a fake OPA
// server counting requests) and the files the case expects to find byte for byte as they were.
type outputEnv struct {
	*faultEnv
	kept map[string][]byte
}

// keep writes a file the command must leave as it is.
func (e *outputEnv) keep(t *testing.T, name, text string) string {
	t.Helper()
	p := e.write(t, name, text)
	e.kept[p] = []byte(text)
	return p
}

// keepResult puts a real result file (two repetitions, as the lost one had) at name,
// to be left as it is.
func (e *outputEnv) keepResult(t *testing.T, name string) string {
	t.Helper()
	return e.keep(t, name, string(baseResult(t)))
}

var baseResultOnce struct {
	sync.Once
	b   []byte
	err string
}

// baseResult is a result measured once for every case that needs one on disk.
func baseResult(t *testing.T) []byte {
	t.Helper()
	baseResultOnce.Do(func() {
		dir, err := os.MkdirTemp("", "authzbench-outputs-test-")
		if err != nil {
			baseResultOnce.err = err.Error()
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "base.json")
		code, _, stderr := run(t, "run", "--target", "opa/inproc", "--workload", "nop", "--duration", "100ms", "--warmup", "0s",
			"--repeat", "2", "--no-progress", "-o", path)
		b, err := os.ReadFile(path)
		if code != 0 || err != nil {
			baseResultOnce.err = stderr
		}
		baseResultOnce.b = b
	})
	if baseResultOnce.err != "" {
		t.Fatalf("base result: %s", baseResultOnce.err)
	}
	return baseResultOnce.b
}

// tinyPolicy is a policy and its inputs for ab, quick to compile and to decide.
func tinyPolicy(t *testing.T, e *outputEnv, name string) (policy, inputs string) {
	policy = e.keep(t, name+".rego", "package authz\n\ndefault allow := false\n\nallow if input.user == \"alice\"\n")
	inputs = e.keep(t, "in.jsonl", "{\"input\": {\"user\": \"alice\"}, \"expect\": true}\n{\"input\": {\"user\": \"bob\"}, \"expect\": false}\n")
	return policy, inputs
}

// interruptOn sends this process SIGINT, as Ctrl-C would, when a line holding mark is written:
// the command's own handler catches it.
type interruptOn struct {
	mark string
	mu   sync.Mutex
	buf  bytes.Buffer
	sent bool
}

func (w *interruptOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.sent && strings.Contains(w.buf.String(), w.mark) {
		w.sent = true
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	}
	return len(p), nil
}

// No output ever replaces a measurement: not another output, not an input, not an existing
// file without --force, not half a file when a write fails; ab checks both sides first and
// keeps its finished turns when stopped. Every case runs the command through execute and looks
// at the exit status, the message and what is on disk afterwards.
func TestNoOutputReplacesAMeasurement(t *testing.T) {
	tiny := []string{"--target", "opa/inproc", "--workload", "nop", "--duration", "200ms", "--warmup", "0s", "--no-progress"}
	// Loads kept tiny even for the cases that must run nothing, so that one run with its rule
	// removed ends soon.
	abTiny := []string{"--repeat", "1", "--", "--target", "opa/inproc", "--duration", "100ms", "--warmup", "0s", "--no-progress"}
	capacityTiny := []string{"--target", "opa/inproc", "--workload", "nop", "--step", "100ms", "--warmup", "0s", "--max-steps", "1", "--no-progress"}
	served := func(e *outputEnv) []string {
		return []string{"--target", "opa/server", "--url", e.url, "--workload", "nop", "--duration", "200ms", "--warmup", "0s", "--workers", "1", "--no-progress"}
	}
	// becomeDir turns path into a non-empty directory mid-run, after the checks passed: no
	// file can then be renamed onto it, a real failure of the write at the end.
	becomeDir := func(paths ...string) func() {
		return func() {
			for _, p := range paths {
				os.MkdirAll(filepath.Join(p, "x"), 0o755)
			}
		}
	}
	for _, tc := range []struct {
		name string
		args func(t *testing.T, e *outputEnv) []string
		code int
		want []string // in stderr
		// absent are files that must not exist afterwards, relative to the case's directory.
		absent []string
		check  func(t *testing.T, e *outputEnv, stderr string)
	}{
		// Two outputs on one file, whatever the spelling.
		{name: "run -o and --html on one path", code: exitUsage, want: []string{"-o r.json and --html r.json are one file"}, absent: []string{"r.json"},
			args: func(t *testing.T, e *outputEnv) []string {
				t.Chdir(e.dir)
				return args("run", tiny, "-o", "r.json", "--html", "r.json")
			}},
		{name: "run -o and --prometheus as ./r.json", code: exitUsage, want: []string{"-o r.json and --prometheus ./r.json are one file"}, absent: []string{"r.json"},
			args: func(t *testing.T, e *outputEnv) []string {
				t.Chdir(e.dir)
				return args("run", tiny, "-o", "r.json", "--prometheus", "./r.json")
			}},
		{name: "run --cpuprofile through a symlinked directory", code: exitUsage, want: []string{"are one file"}, absent: []string{"r.json"},
			args: func(t *testing.T, e *outputEnv) []string {
				if err := os.Symlink(e.dir, e.path("link")); err != nil {
					t.Fatal(err)
				}
				return args("run", tiny, "-o", e.path("r.json"), "--cpuprofile", filepath.Join(e.path("link"), "r.json"))
			}},
		{name: "run --html a hard link of --prometheus", code: exitUsage, want: []string{"are one file"},
			args: func(t *testing.T, e *outputEnv) []string {
				p := e.keep(t, "old.prom", "# old\n")
				if err := os.Link(p, e.path("also.prom")); err != nil {
					t.Fatal(err)
				}
				return args("run", tiny, "-o", e.path("r.json"), "--html", e.path("also.prom"), "--prometheus", p, "--force")
			}},
		{name: "ab --out-a and --out-b on one path", code: exitUsage, want: []string{"--out-a x.json and --out-b ./x.json are one file"},
			absent: []string{"x.json"},
			args: func(t *testing.T, e *outputEnv) []string {
				t.Chdir(e.dir)
				return args("ab", "--workload-a", "nop", "--workload-b", "rbac", "--out-a", "x.json", "--out-b", "./x.json", abTiny)
			}},

		// An output that is an input.
		{name: "report --prometheus over its result", code: exitUsage, want: []string{"--prometheus ", "which this command reads"},
			args: func(t *testing.T, e *outputEnv) []string {
				x := e.keepResult(t, "x.json")
				return args("report", "--prometheus", x, x)
			}},
		{name: "report --prometheus over its result, even with --force", code: exitUsage, want: []string{"which this command reads"},
			args: func(t *testing.T, e *outputEnv) []string {
				x := e.keepResult(t, "x.json")
				return args("report", "--force", "--prometheus", x, x)
			}},
		{name: "merge -o over an input spelled otherwise", code: exitUsage, want: []string{"which this command reads (a RESULT.json argument)"},
			args: func(t *testing.T, e *outputEnv) []string {
				a, b := e.keepResult(t, "a.json"), e.keepResult(t, "b.json")
				os.Mkdir(e.path("sub"), 0o755)
				return args("merge", a, b, "-o", filepath.Join(e.dir, "sub", "..", "a.json"), "--force")
			}},
		{name: "run -o over --inputs", code: exitUsage, want: []string{"which this command reads (--inputs)"},
			args: func(t *testing.T, e *outputEnv) []string {
				policy, inputs := tinyPolicy(t, e, "p")
				return args("run", "--target", "opa/inproc", "--policy", policy, "--inputs", inputs, "--duration", "200ms", "--warmup", "0s", "-o", inputs, "--force")
			}},
		{name: "run --html over --policy", code: exitUsage, want: []string{"--html ", "which this command reads (--policy)"},
			args: func(t *testing.T, e *outputEnv) []string {
				policy, inputs := tinyPolicy(t, e, "p")
				return args("run", "--target", "opa/inproc", "--policy", policy, "--inputs", inputs, "--duration", "200ms", "--warmup", "0s",
					"-o", e.path("r.json"), "--html", policy)
			}},
		{name: "run -o over the scenario file", code: exitUsage, want: []string{"which this command reads (-f)"},
			args: func(t *testing.T, e *outputEnv) []string {
				f := e.keep(t, "s.yaml", "name: s\nworkloads: [nop]\ntargets: [opa/inproc]\nload: {workers: 1, duration: 200ms, warmup: 0s}\n")
				return args("run", "-f", f, "-o", f, "--force")
			}},
		{name: "capacity -o over --usl-from", code: exitUsage, want: []string{"which this command reads (--usl-from)"},
			args: func(t *testing.T, e *outputEnv) []string {
				x := e.keepResult(t, "sweep.json")
				return args("capacity", capacityTiny, "--usl-from", x, "-o", x, "--force")
			}},
		{name: "ab --out-b over --policy-a", code: exitUsage, want: []string{"which this command reads (--policy-a)"},
			args: func(t *testing.T, e *outputEnv) []string {
				pa, _ := tinyPolicy(t, e, "a")
				pb, _ := tinyPolicy(t, e, "b")
				return args("ab", "--policy-a", pa, "--policy-b", pb, "--out-a", e.path("a.json"), "--out-b", pa, abTiny)
			}},

		// An existing file is not replaced without --force.
		{name: "run -o an earlier result", code: exitUsage, want: []string{"-o ", "already exists", "--force"},
			args: func(t *testing.T, e *outputEnv) []string {
				return args("run", tiny, "-o", e.keepResult(t, "old.json"))
			}},
		{name: "run --html over an existing file", code: exitUsage, want: []string{"--html ", "already exists"}, absent: []string{"r.json"},
			args: func(t *testing.T, e *outputEnv) []string {
				return args("run", tiny, "-o", e.path("r.json"), "--html", e.keepResult(t, "old.json"))
			}},
		{name: "capacity -o an earlier result", code: exitUsage, want: []string{"already exists"},
			args: func(t *testing.T, e *outputEnv) []string {
				return args("capacity", capacityTiny, "-o", e.keepResult(t, "old.json"))
			}},
		{name: "calibrate -o an earlier result", code: exitUsage, want: []string{"already exists"},
			args: func(t *testing.T, e *outputEnv) []string {
				return args("calibrate", "--duration", "100ms", "-o", e.keepResult(t, "old.json"))
			}},
		{name: "merge -o an earlier result", code: exitUsage, want: []string{"already exists"},
			args: func(t *testing.T, e *outputEnv) []string {
				return args("merge", e.keepResult(t, "a.json"), "-o", e.keepResult(t, "old.json"))
			}},
		{name: "report --prometheus over an existing file", code: exitUsage, want: []string{"already exists"},
			args: func(t *testing.T, e *outputEnv) []string {
				return args("report", "--prometheus", e.keep(t, "old.prom", "# old\n"), e.keepResult(t, "x.json"))
			}},
		{name: "ab --out-b an earlier result", code: exitUsage, want: []string{"--out-b ", "already exists"},
			args: func(t *testing.T, e *outputEnv) []string {
				return args("ab", "--workload-a", "nop", "--workload-b", "rbac", "--out-a", e.path("a.json"), "--out-b", e.keepResult(t, "old.json"), abTiny)
			}},
		{name: "run -o an earlier result with --force replaces it", code: exitOK,
			args: func(t *testing.T, e *outputEnv) []string {
				e.write(t, "old.json", string(baseResult(t)))
				return args("run", tiny, "-o", e.path("old.json"), "--force")
			},
			check: func(t *testing.T, e *outputEnv, _ string) {
				if doc := readResult(t, e.path("old.json")); len(doc.Runs[0].Repetitions) != 1 {
					t.Errorf("%d repetitions: want the new one-repetition result", len(doc.Runs[0].Repetitions))
				}
			}},
		{name: "a device takes every output", code: exitOK,
			args: func(t *testing.T, e *outputEnv) []string {
				if fi, err := os.Lstat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
					t.Skipf("/dev/null is not a character device here: %v", err)
				}
				t.Cleanup(func() { guardDevNull(t) })
				return args("run", tiny, "-o", "/dev/null", "--html", "/dev/null", "--prometheus", "/dev/null")
			}},

		// Every write whole or not at all, every failure on its own line.
		{name: "--html and --prometheus both fail: both named, result kept", code: exitFailed,
			want: []string{"authzbench: write --html ", "authzbench: write --prometheus ", "not written: --html "},
			args: func(t *testing.T, e *outputEnv) []string {
				e.onRequest = becomeDir(e.path("r.html"), e.path("r.prom"))
				return args("run", served(e), "-o", e.path("r.json"), "--html", e.path("r.html"), "--prometheus", e.path("r.prom"))
			},
			check: func(t *testing.T, e *outputEnv, _ string) {
				readResult(t, e.path("r.json"))
				for _, p := range []string{"r.html", "r.prom"} {
					if fi, err := os.Stat(e.path(p)); err != nil || !fi.IsDir() {
						t.Errorf("%s: %v: want the directory left as it was, no partial file", p, err)
					}
				}
			}},
		{name: "a file put at -o during the run is kept: the result goes elsewhere", code: exitFailed,
			want: []string{"authzbench: write result ", "file exists", "result written to ", "instead"},
			args: func(t *testing.T, e *outputEnv) []string {
				// Another process writes it mid-run, after the checks passed.
				e.kept[e.path("r.json")] = []byte("theirs")
				e.onRequest = func() { os.WriteFile(e.path("r.json"), []byte("theirs"), 0o644) }
				return args("run", served(e), "-o", e.path("r.json"))
			},
			check: func(t *testing.T, e *outputEnv, stderr string) {
				m := regexp.MustCompile(`result written to (\S+) instead`).FindStringSubmatch(stderr)
				if m == nil {
					t.Fatalf("stderr names no fallback file:\n%s", stderr)
				}
				defer os.Remove(m[1])
				readResult(t, m[1])
			}},
		{name: "--cpuprofile fails at the end: named, exit 1", code: exitFailed, want: []string{"authzbench: write --cpuprofile ", "not written: --cpuprofile"},
			args: func(t *testing.T, e *outputEnv) []string {
				e.onRequest = becomeDir(e.path("cpu.out"))
				return args("run", served(e), "-o", e.path("r.json"), "--cpuprofile", e.path("cpu.out"))
			},
			check: func(t *testing.T, e *outputEnv, _ string) { readResult(t, e.path("r.json")) }},
		{name: "every output written, none left half", code: exitOK, want: []string{"html written to", "prometheus written to"},
			args: func(t *testing.T, e *outputEnv) []string {
				return args("run", tiny, "-o", e.path("r.json"), "--html", e.path("r.html"), "--prometheus", e.path("r.prom"), "--cpuprofile", e.path("cpu.out"))
			},
			check: func(t *testing.T, e *outputEnv, _ string) {
				for _, p := range []string{"r.html", "r.prom", "cpu.out"} {
					if fi, err := os.Stat(e.path(p)); err != nil || fi.Size() == 0 {
						t.Errorf("%s: %v", p, err)
					}
				}
				if b, _ := os.ReadFile(e.path("r.html")); !bytes.HasSuffix(bytes.TrimSpace(b), []byte("</html>")) {
					t.Errorf("r.html does not end the page")
				}
			}},

		// ab: both sides checked before any turn, finished turns kept on Ctrl-C.
		{name: "ab finds a missing --policy-b before side A runs", code: exitUsage, want: []string{"ab side B", "missing.rego"},
			absent: []string{"a.json", "b.json"},
			args: func(t *testing.T, e *outputEnv) []string {
				pa, inputs := tinyPolicy(t, e, "a")
				return args("ab", "--policy-a", pa, "--policy-b", e.path("missing.rego"), "--repeat", "2", "--out-a", e.path("a.json"), "--out-b", e.path("b.json"),
					"--", "--target", "opa/inproc", "--inputs", inputs, "--duration", "100ms", "--warmup", "0s", "--no-progress")
			},
			check: func(t *testing.T, e *outputEnv, stderr string) {
				if strings.Contains(stderr, "ab turn 1") {
					t.Errorf("a turn ran before the check:\n%s", stderr)
				}
			}},
		{name: "ab refuses run's other outputs after --", code: exitUsage, want: []string{"--html after --: ab writes one result per side"},
			args: func(t *testing.T, e *outputEnv) []string {
				return args("ab", "--workload-a", "nop", "--workload-b", "rbac", "--", "--html", e.path("r.html"))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &outputEnv{faultEnv: newFaultEnv(t), kept: map[string][]byte{}}
			code, stdout, stderr := run(t, tc.args(t, e)...)
			checkOutputCase(t, e, code, tc.code, stderr, tc.want, tc.absent)
			if tc.code == exitUsage && stdout != "" {
				t.Errorf("bad input, yet on stdout:\n%s", stdout)
			}
			if tc.check != nil {
				tc.check(t, e, stderr)
			}
		})
	}

	// Ctrl-C in the middle of an ab session keeps every finished turn, merged per side into
	// --out-a and --out-b and marked interrupted.
	t.Run("ab keeps its finished turns on Ctrl-C", func(t *testing.T) {
		e := &outputEnv{faultEnv: newFaultEnv(t), kept: map[string][]byte{}}
		pa, inputs := tinyPolicy(t, e, "a")
		pb := e.keep(t, "b.rego", "package authz\n\ndefault allow := false\n\nallow if lower(input.user) == \"alice\"\n")
		outA, outB := e.path("a.json"), e.path("b.json")
		stderr := &interruptOn{mark: "ab turn 2/4, side A"}
		var stdout bytes.Buffer
		code := execute(args("ab", "--policy-a", pa, "--policy-b", pb, "--repeat", "4", "--out-a", outA, "--out-b", outB,
			"--", "--target", "opa/inproc", "--inputs", inputs, "--duration", "100ms", "--warmup", "0s", "--no-progress"), &stdout, stderr)
		checkOutputCase(t, e, code, exitInterrupted, stderr.buf.String(), []string{"ab turn 2, side A: interrupted", "the finished turns are kept"}, nil)
		// The turn running when Ctrl-C came ran to its end here (only ab got the signal).
		for path, reps := range map[string]int{outA: 2, outB: 1} {
			doc := readResult(t, path)
			if !doc.Interrupted || !strings.Contains(doc.StopReason, "interrupted") || len(doc.Runs[0].Repetitions) != reps {
				t.Errorf("%s: interrupted %t (%q), %d repetitions; want marked, with %d", path, doc.Interrupted, doc.StopReason, len(doc.Runs[0].Repetitions), reps)
			}
		}
	})
}

// checkOutputCase asserts what every case of the output rule must show: its exit status and
// message, the files it was to leave alone byte for byte, the files it was not to write, no
// temporary file left behind, and for bad input, no request sent.
func checkOutputCase(t *testing.T, e *outputEnv, code, want int, stderr string, says []string, absent []string) {
	t.Helper()
	if code != want {
		t.Errorf("exit %d, want %d\nstderr %s", code, want, stderr)
	}
	for _, w := range says {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	for p, b := range e.kept {
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s changed (%v): %d bytes, was %d", p, err, len(got), len(b))
		}
	}
	for _, name := range absent {
		if _, err := os.Lstat(e.path(name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
	filepath.WalkDir(e.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".authzbench-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
	if want == exitUsage && e.hits.Load() != 0 {
		t.Errorf("bad input, yet %d requests were sent", e.hits.Load())
	}
}
