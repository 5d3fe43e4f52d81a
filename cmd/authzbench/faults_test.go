package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// faultEnv is what one fault case gets: its own directory, the result path it passes to -o, and
// a fake OPA server that allows everything and counts what it was sent, so "nothing ran" can be
// checked as zero requests.
type faultEnv struct {
	dir, out string
	url      string
	hits     atomic.Int64
	// onRequest, when set, runs on the fake server's first request: a fault injected mid-run.
	onRequest func()
	// closeEvery, when set, makes the server close the connection right after every Nth
	// answer without saying so (no Connection: close), as servers with idle timeouts or a cap
	// on requests per connection do.
	closeEvery int64
	// kill stops the fake server at once: the listener and every connection closed.
	kill func()
}

func newFaultEnv(t *testing.T) *faultEnv {
	e := &faultEnv{dir: t.TempDir()}
	e.out = filepath.Join(e.dir, "r.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := e.hits.Add(1)
		if n == 1 && e.onRequest != nil {
			e.onRequest()
		}
		if e.closeEvery > 0 && n%e.closeEvery == 0 {
			if c, buf, err := w.(http.Hijacker).Hijack(); err == nil {
				body := `{"result": true}`
				fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				buf.Flush()
				c.Close()
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"result": true}`)
	}))
	t.Cleanup(srv.Close)
	e.kill = func() { srv.Listener.Close(); srv.CloseClientConnections() }
	e.url = srv.URL
	return e
}

func (e *faultEnv) path(name string) string { return filepath.Join(e.dir, name) }

func (e *faultEnv) write(t *testing.T, name, text string) string {
	t.Helper()
	if err := os.WriteFile(e.path(name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return e.path(name)
}

// fast is the load of every case that gets as far as running: a few hundred milliseconds.
var fast = []string{"--duration", "200ms", "--warmup", "0s", "--workers", "1"}

func args(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		}
	}
	return out
}

// TestFaultPaths runs every way a command can be given bad input or meet a fault through
// execute, and checks the exit status (0 ok, 1 ran and saw errors, 2 bad input, 130 interrupted)
// and the message. A case that exits 2 must have run nothing: no request reached the fake
// server, no table was printed and no result file was written.
func TestFaultPaths(t *testing.T) {
	// An address nothing listens on: a loopback port just closed. A fixed one (127.0.0.1:1) is
	// reachable whenever some root process on the machine binds it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := "http://" + l.Addr().String()
	l.Close()
	cedarEntities := func(owner string) string {
		return `[{"uid": {"type": "User", "id": "alice"}, "attrs": {}, "parents": []},
 {"uid": {"type": "Photo", "id": "p1"}, "attrs": {"owner": ` + owner + `}, "parents": []}]`
	}
	cedarRun := func(e *faultEnv, t *testing.T, over map[string]string) []string {
		dir := writeCedarApp(t)
		files := map[string]string{"--cedar-policies": "app.cedar", "--entities": "entities.json", "--schema": "app.cedarschema",
			"--cedar-requests": "requests.jsonl"}
		a := []string{"run", "--target", "cedar/inproc", "--requests", "10", "--warmup", "0s", "-o", e.out}
		for flag, name := range files {
			path := filepath.Join(dir, name)
			if text, ok := over[flag]; ok {
				path = filepath.Join(dir, "bad-"+name)
				os.WriteFile(path, []byte(text), 0o644)
			}
			a = append(a, flag, path)
		}
		return a
	}
	for _, tc := range []struct {
		name string
		args func(t *testing.T, e *faultEnv) []string
		code int
		want []string // in stderr
		not  []string // not in stderr
		// check asserts more; cases exiting 2 are checked to have run nothing besides.
		check func(t *testing.T, e *faultEnv, stdout, stderr string)
	}{
		// 1. A finished run is never lost to its output path.
		{name: "out is a directory", code: exitUsage, want: []string{"is a directory"},
			args: func(t *testing.T, e *faultEnv) []string {
				e.out = e.dir
				return args("run", "--workload", "nop", "--url", e.url, fast, "-o", e.dir)
			}},
		{name: "out under a file", code: exitUsage, want: []string{"is not a directory"},
			args: func(t *testing.T, e *faultEnv) []string {
				file := e.write(t, "plain", "x")
				e.out = filepath.Join(file, "sub", "r.json")
				return args("run", "--workload", "nop", "--url", e.url, fast, "-o", e.out)
			}},
		{name: "out in an unwritable directory", code: exitUsage, want: []string{"cannot write in"},
			args: func(t *testing.T, e *faultEnv) []string {
				dir := e.path("ro")
				os.Mkdir(dir, 0o555)
				if os.Geteuid() == 0 {
					// Permissions do not stop root; /proc takes no new files from anyone.
					dir = "/proc"
				}
				e.out = filepath.Join(dir, "new", "r.json")
				return args("run", "--workload", "nop", "--url", e.url, fast, "-o", e.out)
			}},
		{name: "write fails at the end: table printed, result kept elsewhere", code: exitFailed,
			want: []string{"instead"},
			args: func(t *testing.T, e *faultEnv) []string {
				outDir := e.path("results")
				os.Mkdir(outDir, 0o755)
				e.out = filepath.Join(outDir, "r.json")
				// Mid-run, the result directory turns into a file.
				e.onRequest = func() { os.RemoveAll(outDir); os.WriteFile(outDir, []byte("x"), 0o644) }
				return args("run", "--target", "opa/server", "--workload", "nop", "--url", e.url, fast, "-o", e.out)
			},
			check: func(t *testing.T, e *faultEnv, stdout, stderr string) {
				if !strings.Contains(stdout, "nop") || !strings.Contains(stdout, "opa/server") {
					t.Errorf("no table on stdout:\n%s", stdout)
				}
				m := regexp.MustCompile(`result written to (\S+) instead`).FindStringSubmatch(stderr)
				if m == nil {
					t.Fatalf("stderr names no fallback file:\n%s", stderr)
				}
				defer os.Remove(m[1])
				doc, err := result.Read(m[1])
				if err != nil || len(doc.Runs) != 1 || doc.Runs[0].Summary.OK == 0 {
					t.Errorf("fallback %s: %v", m[1], err)
				}
				if !strings.Contains(stderr, "authzbench: write result") || !strings.Contains(stderr, m[1]) {
					t.Errorf("the error does not name the failed write and the fallback:\n%s", stderr)
				}
			}},
		{name: "out is /dev/null: written into, still a device", code: exitOK,
			args: func(t *testing.T, e *faultEnv) []string {
				fi, err := os.Lstat("/dev/null")
				if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
					t.Skipf("/dev/null is not a character device here: %v", err)
				}
				t.Cleanup(func() { guardDevNull(t) })
				return args("run", "--target", "opa/inproc", "--workload", "nop", fast, "-o", "/dev/null")
			}},
		{name: "out is a FIFO: written into, still a FIFO", code: exitOK,
			args: func(t *testing.T, e *faultEnv) []string {
				e.out = e.path("fifo")
				if err := syscall.Mkfifo(e.out, 0o644); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
				got := make(chan []byte, 1)
				go func() {
					f, err := os.Open(e.out)
					if err != nil {
						got <- nil
						return
					}
					b, _ := io.ReadAll(f)
					f.Close()
					got <- b
				}()
				// Cleanups run last first: the reader is unblocked, then what it read is checked.
				t.Cleanup(func() {
					var doc result.Document
					select {
					case b := <-got:
						if err := json.Unmarshal(b, &doc); err != nil || len(doc.Runs) != 1 {
							t.Errorf("read from the FIFO %d bytes: %v", len(b), err)
						}
					case <-time.After(30 * time.Second):
						t.Error("nothing read from the FIFO")
					}
				})
				t.Cleanup(func() {
					// A writer, so the reader's open returns even if the run wrote nothing.
					if f, err := os.OpenFile(e.out, os.O_RDWR, 0); err == nil {
						f.Close()
					}
				})
				return args("run", "--target", "opa/inproc", "--workload", "nop", fast, "-o", e.out)
			},
			check: func(t *testing.T, e *faultEnv, _, _ string) {
				if fi, err := os.Lstat(e.out); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
					t.Errorf("%s is no longer a FIFO: %v %v", e.out, fi.Mode(), err)
				}
			}},
		{name: "result file takes the umask, not 0600", code: exitOK,
			args: func(t *testing.T, e *faultEnv) []string {
				old := syscall.Umask(0o022)
				t.Cleanup(func() { syscall.Umask(old) })
				return args("run", "--target", "opa/inproc", "--workload", "nop", fast, "-o", e.out)
			},
			check: func(t *testing.T, e *faultEnv, _, _ string) {
				if fi, err := os.Stat(e.out); err != nil || fi.Mode().Perm() != 0o644 {
					t.Errorf("result mode %v (%v), want 0644 under umask 022", fi.Mode().Perm(), err)
				}
			}},

		// 2. Bad input found late is still bad input: found before any load, exit 2.
		{name: "Cedar policy error names file, line and column", code: exitUsage, want: []string{"bad-app.cedar:1:"},
			args: func(t *testing.T, e *faultEnv) []string {
				return cedarRun(e, t, map[string]string{"--cedar-policies": "permit (principal, action, resource) when { principal.x == };"})
			}},
		{name: "Cedar entity attribute against the schema", code: exitUsage,
			want: []string{`bad-entities.json:2:2: `, `Photo::"p1" attribute owner: expected an entity reference to a User`, `got string "alice"`},
			args: func(t *testing.T, e *faultEnv) []string {
				return cedarRun(e, t, map[string]string{"--entities": cedarEntities(`"alice"`)})
			}},
		{name: "Cedar entities JSON syntax names line and column", code: exitUsage, want: []string{"bad-entities.json:2:", "not valid JSON"},
			args: func(t *testing.T, e *faultEnv) []string {
				return cedarRun(e, t, map[string]string{"--entities": cedarEntities(``)})
			}},
		{name: "Cedar schema error names the entity's line", code: exitUsage, want: []string{"bad-app.cedarschema:1:14:", `undefined type "Usr"`},
			args: func(t *testing.T, e *faultEnv) []string {
				return cedarRun(e, t, map[string]string{"--schema": "entity User; entity Photo { owner: Usr };\naction view appliesTo { principal: User, resource: Photo };"})
			}},
		{name: "--url without a scheme", code: exitUsage, want: []string{`--url "127.0.0.1:8181": want a scheme`},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--workload", "nop", "--url", "127.0.0.1:8181", fast, "-o", e.out)
			}},
		{name: "--log-level bogus", code: exitUsage, want: []string{`--log-level "bogus"`},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "opa/server", "--workload", "nop", "--log-level", "bogus", fast, "-o", e.out)
			}},
		{name: "--sut-arg the OPA server rejects, after an in-process target", code: exitUsage,
			want: []string{"opa/server: opa server exited before it was ready", "Error: unknown flag: --bogus"}, not: []string{"Usage:", "Flags:"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "opa/inproc,opa/server", "--workload", "nop", "--sut-arg=--bogus", fast, "-o", e.out)
			}},
		{name: "--sut-arg the Cedar server rejects", code: exitUsage,
			want: []string{"cedar/server: cedar server exited before it was ready", "unknown flag: --bogus"}, not: []string{"Flags:"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "cedar/server", "--workload", "nop", "--sut-arg=--bogus", fast, "-o", e.out)
			}},
		{name: "--header without a colon", code: exitUsage, want: []string{`--header "Authorization Bearer x": want Name: value`},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "http", "--url", e.url, "--decision-path", "/result", "--workload", "nop",
					"--header", "Authorization Bearer x", fast, "-o", e.out)
			}},
		{name: "--body with an unclosed {{", code: exitUsage, want: []string{`--body: "{{input.user}" is not a placeholder`},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "http", "--url", e.url, "--decision-path", "/result", "--workload", "rbac",
					"--body", `{"u": {{input.user}`, fast, "-o", e.out)
			}},
		{name: "--body with a field the inputs lack, after an in-process target", code: exitUsage,
			want: []string{"--body, workload rbac input 1:", `the input has no field "nosuch"`},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "opa/inproc,http", "--url", e.url, "--decision-path", "/result", "--workload", "rbac",
					"--body", `{"u": {{input.nosuch}}}`, fast, "-o", e.out)
			}},

		// 3. One meaning per exit status, for every command.
		{name: "run ok", code: exitOK,
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "opa/server", "--workload", "nop", "--url", e.url, fast, "-o", e.out)
			},
			check: func(t *testing.T, e *faultEnv, _, _ string) {
				if doc, err := result.Read(e.out); err != nil || doc.Interrupted || doc.Runs[0].Summary.OK == 0 {
					t.Errorf("result: %v", err)
				}
			}},
		{name: "run saw errors", code: exitFailed, want: []string{"were not served decisions"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "opa/server", "--workload", "rbac", "--url", e.url, fast, "-o", e.out)
			}},
		{name: "capacity --start 0", code: exitUsage, want: []string{"--start 0: want a rate above 0"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("capacity", "--url", e.url, "--start", "0", "-o", e.out)
			}},
		{name: "capacity --opa-bin that is not OPA", code: exitUsage, want: []string{"--opa-bin /bin/false is not an OPA command line"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("capacity", "--opa-bin", "/bin/false", "--step", "200ms", "--warmup", "0s", "-o", e.out)
			}},
		{name: "run --opa-bin that is not OPA", code: exitUsage, want: []string{"--opa-bin /bin/false is not an OPA command line"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "opa/server", "--workload", "nop", "--opa-bin", "/bin/false", fast, "-o", e.out)
			}},
		{name: "capacity --out a directory", code: exitUsage, want: []string{"is a directory"},
			args: func(t *testing.T, e *faultEnv) []string {
				e.out = e.dir
				return args("capacity", "--url", e.url, "--workload", "nop", "--step", "200ms", "--warmup", "0s", "-o", e.dir)
			}},
		{name: "calibrate --out under a file", code: exitUsage, want: []string{"is not a directory"},
			args: func(t *testing.T, e *faultEnv) []string {
				e.out = filepath.Join(e.write(t, "plain", "x"), "r.json")
				return args("calibrate", "--duration", "200ms", "-o", e.out)
			}},
		{name: "help says the exit statuses", code: exitOK,
			args: func(t *testing.T, e *faultEnv) []string { return args("run", "--help") },
			check: func(t *testing.T, e *faultEnv, stdout, _ string) {
				for _, c := range [][]string{{"--help"}, {"run", "--help"}, {"capacity", "--help"}, {"calibrate", "--help"}, {"workloads", "verify", "--help"}} {
					_, out, _ := run(t, c...)
					out = strings.Join(strings.Fields(out), " ") // wrapped to the terminal
					if !strings.Contains(out, "Exit status: 0 ok; 1 ran and saw errors") || !strings.Contains(out, "2 bad input, nothing ran; 130 interrupted") {
						t.Errorf("%v: no exit statuses in\n%s", c, out)
					}
				}
			}},

		// 8. Small things a user trips on.
		{name: "YAML syntax error names the line to fix", code: exitUsage, want: []string{"s.yaml:2: did not find expected ',' or ']'"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "-f", e.write(t, "s.yaml", "workloads: [nop]\ntargets: [opa/server\nrepeat: 2\n"), "-o", e.out)
			}},
		{name: "scenario option the target does not take", code: exitUsage,
			want: []string{`s.yaml:5: target opa/server: unknown option "prot"; known: bundle_changes, bundle_server, bundle_size_limit, cacert, cert, decision_log_flush_timeout, decision_log_latency, decision_log_mask, decision_log_reporting, decision_log_service, decision_log_service_addr, decision_logs, http2, http2_connections, insecure, key, mtls, mtls_admit, mtls_authz, opa_bin, optimize, port, provenance, ready_timeout, replicas, server_cert, server_key, sut_args, tls, url`},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "-f", e.write(t, "s.yaml", "workloads: [nop]\ntargets:\n  - target: opa/server\n    options:\n      prot: 8181\n"), "-o", e.out)
			}},
		{name: "scenario url option measures the running server", code: exitOK,
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "-f", e.write(t, "s.yaml", "floor: false\nload: {duration: 200ms, warmup: 0s, workers: 1}\nworkloads: [nop]\n"+
					"targets:\n  - target: opa/server\n    options: {url: '"+e.url+"'}\n"), "-o", e.out)
			},
			check: func(t *testing.T, e *faultEnv, _, _ string) {
				doc, err := result.Read(e.out)
				if err != nil || len(doc.Runs) != 1 || e.hits.Load() == 0 || doc.Runs[0].SUT.Placement != "external" || !doc.Runs[0].SUT.External {
					t.Errorf("err %v, %d requests at the url; want one run at the url, placed external: %+v", err, e.hits.Load(), doc)
				}
			}},
		{name: "a scenario's http header option is named as the file names it, not as a flag", code: exitUsage,
			want: []string{`headers "Authorization Bearer x": want Name: value`}, not: []string{"--header"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "-f", e.write(t, "s.yaml", "floor: false\nload: {duration: 200ms, warmup: 0s, workers: 1}\nworkloads: [nop]\n"+
					"targets:\n  - target: http\n    options: {url: '"+e.url+"', decision_path: /result, headers: ['Authorization Bearer x']}\n"), "-o", e.out)
			}},
		{name: "a scenario's unreachable url is named url, the flag's --url", code: exitFailed,
			want: []string{"cannot reach url " + unreachable + "/"}, not: []string{"--url"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "-f", e.write(t, "s.yaml", "floor: false\nload: {duration: 200ms, warmup: 0s, workers: 1}\nworkloads: [nop]\n"+
					"targets:\n  - target: opa/server\n    options: {url: '"+unreachable+"'}\n"), "-o", e.out)
			}},
		{name: "an unreachable --url is named --url", code: exitFailed, want: []string{"cannot reach --url " + unreachable + "/"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "opa/server", "--url", unreachable, "--workload", "nop", fast, "-o", e.out)
			}},
		{name: "--port 70000 is not a port", code: exitUsage, want: []string{"--port 70000: not a TCP port"}, not: []string{"in use"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "opa/server", "--workload", "nop", "--port", "70000", fast, "-o", e.out)
			}},
		{name: "negative --generator-procs", code: exitUsage, want: []string{"--generator-procs -1"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--workload", "nop", "--url", e.url, "--generator-procs", "-1", fast, "-o", e.out)
			}},
		{name: "--server-metrics -1", code: exitUsage, want: []string{"--server-metrics -1"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--workload", "nop", "--url", e.url, "--server-metrics", "-1", fast, "-o", e.out)
			}},
		{name: "--workers with --rate", code: exitUsage, want: []string{"--rate and --workers given together"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--workload", "nop", "--url", e.url, "--rate", "100", "--duration", "200ms", "--warmup", "0s", "--workers", "2", "-o", e.out)
			}},
		{name: "workloads export refuses to overwrite without --force", code: exitUsage, want: []string{"already holds", "--force"},
			args: func(t *testing.T, e *faultEnv) []string {
				e.out = e.path("export")
				if code, _, stderr := run(t, "workloads", "export", "nop", e.out); code != 0 {
					t.Fatalf("first export: exit %d %s", code, stderr)
				}
				if err := os.WriteFile(filepath.Join(e.out, "inputs.jsonl"), []byte("mine\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return args("workloads", "export", "nop", e.out)
			},
			check: func(t *testing.T, e *faultEnv, _, _ string) {
				if b, _ := os.ReadFile(filepath.Join(e.out, "inputs.jsonl")); string(b) != "mine\n" {
					t.Errorf("inputs.jsonl overwritten without --force: %q", b)
				}
				if code, _, stderr := run(t, "workloads", "export", "nop", e.out, "--force"); code != 0 {
					t.Errorf("with --force: exit %d %s", code, stderr)
				}
				// Overwritten with the export's inputs, not merely removed.
				if b, err := os.ReadFile(filepath.Join(e.out, "inputs.jsonl")); err != nil || !strings.HasPrefix(string(b), `{"input":`) {
					t.Errorf("--force did not overwrite inputs.jsonl with the export's: %q, %v", b, err)
				}
			}},
		{name: "cedar-server --help uses double-dash flags", code: exitOK,
			args: func(t *testing.T, e *faultEnv) []string { return args("cedar-server", "--help") },
			check: func(t *testing.T, e *faultEnv, _, stderr string) {
				if !strings.Contains(stderr, "--policies file") || regexp.MustCompile(`(?m)^\s+-[a-z]`).MatchString(stderr) {
					t.Errorf("help:\n%s", stderr)
				}
			}},

		// 4. --timeout means the same everywhere, and nothing unsent is a request.
		{name: "--timeout 1ns in-process: timeouts, not decisions, and the run ends", code: exitFailed,
			want: []string{"timeout"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "opa/inproc", "--workload", "nop", "--timeout", "1ns",
					"--duration", "20s", "--warmup", "0s", "--workers", "1", "--no-progress", "-o", e.out)
			},
			check: func(t *testing.T, e *faultEnv, _, _ string) {
				doc := readResult(t, e.out)
				s := doc.Runs[0].Summary
				if s.OK != 0 || s.ErrorClasses["timeout"] == 0 || s.ErrorClasses["timeout"] != s.Requests {
					t.Errorf("ok %d, classes %v of %d requests: want every decision a timeout", s.OK, s.ErrorClasses, s.Requests)
				}
				if s.Requests > 100_000 {
					t.Errorf("%d requests: the run should end once nothing but timeouts comes back", s.Requests)
				}
			}},
		{name: "--timeout 1ns to a server: nothing sent is no request, and the run says why", code: exitFailed,
			want: []string{"nothing could be sent", "the timeout is too short"},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "opa/server", "--url", e.url, "--workload", "nop", "--timeout", "1ns",
					"--duration", "20s", "--warmup", "0s", "--workers", "1", "--no-progress", "-o", e.out)
			},
			check: func(t *testing.T, e *faultEnv, _, _ string) {
				if n := readResult(t, e.out).Runs[0].Summary.Requests; n != 0 {
					t.Errorf("%d requests recorded; none could be sent", n)
				}
			}},

		// 5 and 7. A --url server that dies ends the run, with the partial result and its real
		// connection counts.
		{name: "--url server that dies mid-run", code: exitFailed,
			want: []string{"no answer from the target", "connection refused"},
			args: func(t *testing.T, e *faultEnv) []string {
				e.onRequest = func() { time.AfterFunc(400*time.Millisecond, e.kill) }
				return args("run", "--target", "opa/server", "--url", e.url, "--workload", "nop", "--timeout", "200ms",
					"--duration", "60s", "--warmup", "0s", "--workers", "2", "--no-progress", "-o", e.out)
			},
			check: func(t *testing.T, e *faultEnv, _, stderr string) {
				doc := readResult(t, e.out)
				r := doc.Runs[0]
				if !doc.Interrupted || !r.Partial || r.Summary.OK == 0 {
					t.Errorf("interrupted %t, partial %t, ok %d: want the answers before the death kept, marked partial",
						doc.Interrupted, r.Partial, r.Summary.OK)
				}
				if c := r.Summary.Connections; c == nil || c.Opened == 0 || c.Expected < c.Opened {
					t.Errorf("connections %+v: want those opened, against what 2 workers could open", c)
				}
				if n := r.Summary.ErrorClasses["transport"]; n > 200 {
					t.Errorf("%d transport errors: connects after the death should back off", n)
				}
			}},

		// 6. Keep-alive as servers really behave.
		{name: "server closing every 5th kept-alive connection costs reconnects, not errors", code: exitOK,
			args: func(t *testing.T, e *faultEnv) []string {
				e.closeEvery = 5
				return args("run", "--target", "opa/server", "--url", e.url, "--workload", "nop", "--requests", "400",
					"--warmup", "0s", "--workers", "2", "--no-progress", "-o", e.out)
			},
			check: func(t *testing.T, e *faultEnv, _, _ string) {
				s := readResult(t, e.out).Runs[0].Summary
				if s.Errors != 0 || s.OK != 400 {
					t.Errorf("ok %d, errors %d (%v): want 400 decisions", s.OK, s.Errors, s.ErrorClasses)
				}
				if c := s.Connections; c == nil || c.Reconnects == 0 {
					t.Errorf("connections %+v: want the closed connections counted as reconnects", c)
				}
			}},

		// 9. Progress where there is no terminal.
		{name: "progress lines without a terminal", code: exitOK, want: []string{"authzbench: [1/1] nop on opa/inproc, rep 1/1, measuring"},
			args: func(t *testing.T, e *faultEnv) []string {
				setProgressEvery(t, 50*time.Millisecond)
				return args("run", "--target", "opa/inproc", "--workload", "nop", "--duration", "600ms", "--warmup", "0s", "--workers", "1", "-o", e.out)
			}},
		{name: "--no-progress silences them", code: exitOK, not: []string{"measuring"},
			args: func(t *testing.T, e *faultEnv) []string {
				setProgressEvery(t, 50*time.Millisecond)
				return args("run", "--target", "opa/inproc", "--workload", "nop", "--duration", "600ms", "--warmup", "0s", "--workers", "1",
					"--no-progress", "-o", e.out)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFaultEnv(t)
			code, stdout, stderr := run(t, tc.args(t, e)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, stderr)
				}
			}
			if tc.code == exitUsage {
				if n := e.hits.Load(); n != 0 {
					t.Errorf("bad input, yet %d requests were sent", n)
				}
				if stdout != "" {
					t.Errorf("bad input, yet a table:\n%s", stdout)
				}
				if fi, err := os.Stat(e.out); e.out != e.dir && err == nil && fi.Mode().IsRegular() {
					t.Errorf("bad input, yet a result file %s", e.out)
				}
			}
			if tc.check != nil {
				tc.check(t, e, stdout, stderr)
			}
		})
	}
}

func setProgressEvery(t *testing.T, d time.Duration) {
	old := progressEvery
	progressEvery = d
	t.Cleanup(func() { progressEvery = old })
}

// guardDevNull fails the test, and as root puts the device back, if /dev/null was replaced.
func guardDevNull(t *testing.T) {
	fi, err := os.Lstat("/dev/null")
	if err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return
	}
	t.Errorf("/dev/null is no longer a character device: %v %v", fi, err)
	if os.Geteuid() == 0 {
		os.Remove("/dev/null")
		if err := syscall.Mknod("/dev/null", syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Errorf("restore /dev/null: %v", err)
		}
		os.Chmod("/dev/null", 0o666)
	}
}

func readResult(t *testing.T, path string) *result.Document {
	t.Helper()
	doc, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) == 0 {
		t.Fatalf("%s holds no run", path)
	}
	return doc
}
