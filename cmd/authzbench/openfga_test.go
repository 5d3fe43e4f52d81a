package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/sut"
)

// OpenFGA in process and its own server, over HTTP and over gRPC, run the built-in rbac with
// every decision served and right.
func TestOpenFGARunsRBAC(t *testing.T) {
	for _, api := range []string{"http", "grpc"} {
		t.Run(api, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			targets := "openfga/inproc,openfga/server"
			args := []string{"run", "--target", targets, "--workload", "rbac", "--duration", "300ms", "--warmup", "0",
				"--workers", "2", "--no-progress", "-o", out}
			if api == "grpc" {
				args = append(args, "--openfga-api", "grpc")
			}
			code, stdout, stderr := run(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			doc, err := result.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Runs) != 2 {
				t.Fatalf("%d runs, want 2", len(doc.Runs))
			}
			for _, r := range doc.Runs {
				if r.Summary.OK == 0 || r.Summary.Errors != 0 {
					t.Errorf("%s: ok %d errors %d, want decisions and no error", r.Target, r.Summary.OK, r.Summary.Errors)
				}
				if r.SUT.Engine != "openfga" || !strings.HasPrefix(r.SUT.Version, "openfga ") {
					t.Errorf("%s: engine %q version %q", r.Target, r.SUT.Engine, r.SUT.Version)
				}
			}
			if v := doc.Env.Engines["openfga"]; v == "" {
				t.Errorf("environment's engines %v: want OpenFGA's version", doc.Env.Engines)
			}
		})
	}
}

// A workload OpenFGA cannot express is refused with the reason when asked alone, and left out
// of a run with other engines with the reason in the skip line and the result.
func TestOpenFGASaysWhyItHasNoVersion(t *testing.T) {
	code, _, stderr := run(t, "run", "--target", "openfga/inproc", "--workload", "api", "--duration", "100ms", "--warmup", "0", "--no-progress", "-o", filepath.Join(t.TempDir(), "r.json"))
	if code != exitUsage || !strings.Contains(stderr, "api has no OpenFGA version: its rules verify a JWT") {
		t.Errorf("exit %d, want %d and the reason\nstderr %s", code, exitUsage, stderr)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := run(t, "run", "--target", "opa/inproc,openfga/inproc", "--workload", "risk,nop", "--requests", "20", "--warmup", "0", "--no-progress", "-o", out)
	if code != 0 || !strings.Contains(stdout, "risk on openfga/inproc: skipped, the workload has no OpenFGA version: its rules sum") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Skipped) != 1 || !strings.Contains(doc.Skipped[0].Reason, "cannot compute over a list") {
		t.Errorf("skipped %+v: want the pair with its reason", doc.Skipped)
	}
}

// A store file as OpenFGA's CLI reads it runs unchanged through both OpenFGA modes: its check
// assertions are the inputs, each decided as it expects, and its list_objects and list_users
// tests are counted as not measured, in the warning and in the result.
func TestOpenFGAStoreFileRuns(t *testing.T) {
	store := filepath.Join("..", "..", "internal", "engine", "openfga", "testdata", "store.fga.yaml")
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := run(t, "run", "--target", "openfga/inproc,openfga/server", "--policy", store,
		"--requests", "60", "--warmup", "0", "--workers", "2", "--no-progress", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "not measured: 2 list_objects, 1 list_users") {
		t.Errorf("no word of the queries not measured in\n%s", stderr)
	}
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Runs {
		if r.Summary.OK != 60 || r.Summary.Errors != 0 {
			t.Errorf("%s: ok %d errors %d, want 60 and none", r.Target, r.Summary.OK, r.Summary.Errors)
		}
		if nm := r.WorkloadDoc.NotMeasured; nm["list_objects"] != 2 || nm["list_users"] != 1 {
			t.Errorf("%s: not measured %v", r.Target, nm)
		}
		if r.WorkloadDoc.ExpectAllow == 0 || r.WorkloadDoc.ExpectDeny == 0 {
			t.Errorf("%s: %+v: want the store's assertions, allows and denies", r.Target, r.WorkloadDoc)
		}
	}
}

// Bad OpenFGA files exit 2 before any load, naming the file and line at fault.
func TestOpenFGABadFilesNameTheLine(t *testing.T) {
	dir := t.TempDir()
	testdata := filepath.Join("..", "..", "internal", "engine", "openfga", "testdata")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badModel := write("bad.fga", "model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer [user]\n")
	badChecks := write("checks.jsonl", `{"user":"user:a","relation":"viewer","object":"document:x","expect":true}`+"\n"+`{"user":"user:a","relaton":"viewer"}`+"\n")
	badStore := write("s.fga.yaml", "model_file: "+filepath.Join("..", "nosuch.fga")+"\ntests:\n  - name: t\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"model syntax", []string{"--policy", badModel, "--inputs", filepath.Join(testdata, "checks.jsonl")}, badModel + ":6:19: model syntax error"},
		{"check line", []string{"--policy", filepath.Join(testdata, "model.fga"), "--inputs", badChecks}, badChecks + `:2: check: json: unknown field "relaton"`},
		{"store's model file", []string{"--policy", badStore}, badStore + ":1: "},
		{"store with inputs", []string{"--policy", filepath.Join(testdata, "store.fga.yaml"), "--inputs", badChecks}, "a store file holds its tuples and its tests' checks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".json")
			args := append([]string{"run", "--target", "openfga/inproc,openfga/server", "--requests", "10", "--no-progress", "-o", out}, tc.args...)
			code, _, stderr := run(t, args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q in\n%s", code, exitUsage, tc.want, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a result was written: something ran")
			}
		})
	}
}

// --openfga-bin runs OpenFGA's own binary for openfga/server, and the result says which
// OpenFGA served; a binary that is missing or is not OpenFGA, or the flag with no
// openfga/server, exits 2 before any load. The binary here is a script that says it is
// OpenFGA v9.9.9-fake and serves as this test binary's OpenFGA.
func TestOpenFGABinRunsTheBinaryGiven(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "openfga")
	script := "#!/bin/sh\nif [ \"$1\" = version ]; then echo 'OpenFGA version `v9.9.9-fake` build from `none` on `today`' >&2; exit 0; fi\nexec '" + self + "' openfga \"$@\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, target, bin, want string
	}{
		{"missing", "openfga/server", filepath.Join(dir, "nosuch"), "--openfga-bin " + filepath.Join(dir, "nosuch") + ": exec: "},
		{"not OpenFGA", "openfga/server", "/bin/true", "--openfga-bin /bin/true is not an OpenFGA server binary"},
		{"no openfga/server", "openfga/inproc", fake, "--openfga-bin applies to the openfga/server targets, and none is selected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".json")
			code, _, stderr := run(t, "run", "--target", tc.target, "--workload", "rbac", "--requests", "10", "--no-progress",
				"--openfga-bin", tc.bin, "-o", out)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q in\n%s", code, exitUsage, tc.want, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a result was written: something ran")
			}
		})
	}
	out := filepath.Join(dir, "r.json")
	doc, _ := runOK(t, out, "run", "--target", "openfga/server", "--workload", "rbac", "--requests", "200", "--warmup", "0",
		"--no-progress", "--openfga-bin", fake)
	if r := doc.Runs[0]; r.Summary.OK != 200 || r.Summary.Errors != 0 || r.SUT.Version != "openfga v9.9.9-fake" {
		t.Errorf("ok %d errors %d version %q: want 200 decisions from OpenFGA v9.9.9-fake", r.Summary.OK, r.Summary.Errors, r.SUT.Version)
	}
}

// startOpenFGA runs an OpenFGA server as a user would (this test binary's `openfga run`) on
// free loopback ports, stopped by its PID when the test ends; it returns its HTTP and gRPC
// addresses.
func startOpenFGA(t *testing.T) (httpAddr, grpcAddr string) {
	t.Helper()
	var addrs []string
	for range 3 {
		a, err := sut.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, a)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "openfga", "run", "--http-addr", addrs[0], "--grpc-addr", addrs[1], "--metrics-addr", addrs[2],
		"--log-level", "error", "--playground-enabled=false")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addrs[0] + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addrs[0], addrs[1]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("OpenFGA on %s not healthy in 30s: %v", addrs[0], err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// openFGAStores lists the stores of the OpenFGA at httpAddr by name.
func openFGAStores(t *testing.T, httpAddr string) []string {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/stores")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Stores []struct{ ID, Name string } `json:"stores"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list.Stores {
		names = append(names, s.Name)
	}
	return names
}

// A run against the user's own OpenFGA (--url) leaves it as it found it: the stores it wrote
// the workload into are deleted when it ends, over either API, and the result says so; kept
// only when asked (--keep-written), and the result says that too. Every run left a store named
// authzbench-0 behind, and the user's server grew by each run's tuples.
func TestOpenFGAURLLeavesTheServerAsFound(t *testing.T) {
	httpAddr, grpcAddr := startOpenFGA(t)
	dir := t.TempDir()
	runOn := func(name string, more ...string) *result.Document {
		t.Helper()
		out := filepath.Join(dir, name+".json")
		code, stdout, stderr := run(t, append([]string{"run", "--target", "openfga/server", "--workload", "rbac", "--requests", "50", "--workers", "1",
			"--warmup", "0s", "--no-progress", "-o", out}, more...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", name, code, stdout, stderr)
		}
		doc, err := result.Read(out)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"http", []string{"--url", "http://" + httpAddr}},
		{"http again", []string{"--url", "http://" + httpAddr}},
		{"grpc", []string{"--openfga-api", "grpc", "--url", "http://" + grpcAddr}},
	} {
		doc := runOn(strings.ReplaceAll(tc.name, " ", "-"), tc.args...)
		w := doc.Runs[0].SUT.Written
		if w == nil || !w.Removed || w.Kept || !strings.Contains(w.What, "OpenFGA stores authzbench-0 (") {
			t.Errorf("%s: sut.written %+v; want the store named and removed", tc.name, w)
		}
		if doc.Runs[0].Summary.OK != 50 {
			t.Errorf("%s: %d decisions served, want 50", tc.name, doc.Runs[0].Summary.OK)
		}
		if stores := openFGAStores(t, httpAddr); len(stores) != 0 {
			t.Fatalf("after %s, the user's OpenFGA holds stores %v; want none, as it was", tc.name, stores)
		}
	}

	doc := runOn("kept", "--url", "http://"+httpAddr, "--keep-written")
	if w := doc.Runs[0].SUT.Written; w == nil || !w.Kept || w.Removed {
		t.Errorf("kept: sut.written %+v; want it kept", w)
	}
	if stores := openFGAStores(t, httpAddr); len(stores) != 1 || stores[0] != "authzbench-0" {
		t.Errorf("with --keep-written the server holds %v; want the run's store", stores)
	}

	code, _, stderr := run(t, "run", "--target", "openfga/server", "--workload", "rbac", "--keep-written", "--check-only")
	if code != exitUsage || !strings.Contains(stderr, "--keep-written is for a running server, with --url") {
		t.Errorf("--keep-written without --url: exit %d, stderr %s", code, stderr)
	}

	// An OpenFGA that wants credentials, which openfga/server does not send, is refused before
	// any load: exit 2, no result, nothing written into it.
	var writes atomic.Int64
	guarded := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			writes.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"code":"bearer_token_missing","message":"missing bearer token"}`)
	}))
	defer guarded.Close()
	out := filepath.Join(dir, "guarded.json")
	code, _, stderr = run(t, "run", "--target", "openfga/server", "--url", guarded.URL, "--workload", "rbac", "--requests", "10", "--no-progress", "-o", out)
	if code != exitUsage || !strings.Contains(stderr, "refuses authzbench's requests (401 Unauthorized: ") || writes.Load() != 0 {
		t.Errorf("an OpenFGA that wants credentials: exit %d, %d writes, stderr %s", code, writes.Load(), stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused run wrote a result")
	}
}
