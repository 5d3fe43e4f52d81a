package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/engine/all/alltest"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/sut"
)

// TestMain lets the test binary stand in for authzbench: as every engine's program ("<self> opa
// ...") and server program (alltest) and, with AUTHZBENCH_TEST_MAIN=1, as the authzbench command itself, so tests can run it as a process
// and send it signals.
func TestMain(m *testing.M) {
	alltest.DispatchIfAsked()
	sut.DispatchPinIfAsked()
	sut.DispatchTrivialIfAsked()
	if os.Getenv("AUTHZBENCH_TEST_MAIN") == "1" {
		os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
	}
	remove, err := alltest.PutOnPath()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	remove()
	os.Exit(code)
}

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = execute(args, &out, &errb)
	return code, out.String(), errb.String()
}

// unwrapped joins the lines the terminal table wrapped back into one: a note that starts "- "
// continues on lines indented by two spaces, so a test finds a note whole whatever the width.
func unwrapped(out string) string {
	var joined []string
	inNote := false
	for _, line := range strings.Split(out, "\n") {
		if inNote && strings.HasPrefix(line, "  ") && strings.TrimSpace(line) != "" {
			joined[len(joined)-1] += " " + strings.TrimLeft(line, " ")
			continue
		}
		inNote = strings.HasPrefix(line, "- ")
		joined = append(joined, line)
	}
	return strings.Join(joined, "\n")
}

// runOK runs a command that must succeed and write its result to out, and reads that result.
func runOK(t *testing.T, out string, args ...string) (doc *result.Document, stdout string) {
	t.Helper()
	code, stdout, stderr := run(t, append(args, "-o", out)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	return doc, stdout
}

func TestUsageErrorsExitTwoAndSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badYAML, []byte("workloads: [rbca]\ntargets: [opa/server]\n"), 0o644)
	badInputs := filepath.Join(dir, "in.jsonl")
	os.WriteFile(badInputs, []byte("{\"input\": {}, \"expect\": true}\nnot json\n"), 0o644)
	policy := filepath.Join(dir, "p.rego")
	os.WriteFile(policy, []byte("package p\nallow := true\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown workload", []string{"run", "--workload", "rbca"}, `unknown workload "rbca"; known: nop, rbac`},
		{"unknown target", []string{"run", "--target", "opa/grpc"}, `unknown target "opa/grpc"; known:`},
		{"scenario line", []string{"run", "-f", badYAML}, "bad.yaml:1: unknown workload"},
		{"missing scenario", []string{"run", "-f", filepath.Join(dir, "nope.yaml")}, "nope.yaml"},
		{"inputs line", []string{"run", "--policy", policy, "--inputs", badInputs}, "in.jsonl:2:"},
		{"bad format", []string{"run", "--format", "xml"}, `--format "xml"`},
		{"zero workers", []string{"run", "--workload", "rbac", "--workers", "0"}, "--workers 0: want 1 or more"},
		{"file and flags", []string{"run", "-f", badYAML, "--workload", "rbac"}, "-f runs a scenario file"},
		{"unknown flag", []string{"run", "--wrokers", "2"}, "unknown flag"},
		{"url without server", []string{"run", "--target", "opa/inproc", "--url", "http://127.0.0.1:1"}, "--url and --port apply to the opa/server"},
		{"url and port", []string{"run", "--workload", "rbac", "--url", "http://127.0.0.1:1", "--port", "9999"}, "with --url it starts none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "version")
	if code != 0 || !strings.Contains(out, "opa        1.22.2") || !strings.Contains(out, "commit") {
		t.Errorf("exit %d, output %q", code, out)
	}
}

func TestOPAPassThrough(t *testing.T) {
	cmd := exec.Command(os.Args[0], "opa", "eval", "--format", "raw", "1 + 1")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "2" {
		t.Fatalf("opa eval: %q %v", out, err)
	}
}

// Responses that are not served decisions make the exit status 1, unless --allow-errors and
// some were served.
func TestErrorsMakeTheRunFail(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad", http.StatusBadRequest)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	args := []string{"run", "--target", "opa/server", "--url", srv.URL, "--workload", "rbac",
		"--requests", "50", "--warmup", "0s", "--workers", "1", "-o", out}
	code, stdout, stderr := run(t, args...)
	if code != exitFailed || !strings.Contains(stdout, "http_400: 50") || !strings.Contains(stderr, "served no decision") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 naming http_400: 50", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "rbac on opa/server: first http_400: status 400: bad") {
		t.Errorf("stdout %q does not say what the first 400 said", stdout)
	}
	// The same result path again: --force replaces the first run's result. --allow-errors lets
	// some errors pass, not a run where every response was one: that run served nothing
	// (measured_nothing_test.go has --allow-errors passing some errors).
	if code, _, stderr := run(t, append(args, "--allow-errors", "--force")...); code != exitFailed || !strings.Contains(stderr, "served no decision") {
		t.Errorf("with --allow-errors, every response an error: exit %d, want 1 saying nothing was served\n%s", code, stderr)
	}
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Runs[0].Summary.ErrorClasses["http_400"]; got != 50 || doc.Runs[0].Summary.OK != 0 {
		t.Errorf("result file: http_400 %d ok %d", got, doc.Runs[0].Summary.OK)
	}
	if got := doc.Runs[0].Summary.ErrorMessages["http_400"]; got != "status 400: bad" {
		t.Errorf("result file: first http_400 message %q, want the body", got)
	}
}

// Ctrl-C stops the load, stops the server authzbench started, and writes the partial result.
func TestInterruptKeepsPartialResultAndStopsServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA processes")
	}
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(os.Args[0], "run", "--target", "opa/server", "--workload", "rbac",
		"--duration", "60s", "--warmup", "0s", "--workers", "2", "-o", out)
	cmd.Env = append(os.Environ(), "AUTHZBENCH_TEST_MAIN=1")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "scenario ad-hoc") {
				close(started)
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case <-started:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("authzbench did not start")
	}
	time.Sleep(4 * time.Second) // server start-up plus some measured load
	cmd.Process.Signal(os.Interrupt)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("authzbench did not stop within 30 s of Ctrl-C")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v, want status %d", err, exitInterrupted)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc result.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Interrupted || len(doc.Runs) != 1 || !doc.Runs[0].Partial || doc.Runs[0].Summary.OK == 0 {
		t.Fatalf("want an interrupted document with one partial run that measured something: %s", b)
	}
	pid := doc.Runs[0].SUT.PID
	if pid == 0 {
		t.Fatal("result does not record the server pid")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("opa server pid %d still exists after authzbench exited (kill 0: %v)", pid, err)
	}
}
