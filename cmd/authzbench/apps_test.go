package main

import (
	"strings"
	"testing"
)

// The application families decide every input alike in OPA, Cedar and OpenFGA, in process and served,
// at a small N and at one where folders, groups and teams nest to their full depth.
func TestAppWorkloadsVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA, Cedar and OpenFGA processes")
	}
	code, stdout, stderr := run(t, "workloads", "verify", "gdrive-10", "github-10", "tinytodo-10", "gdrive-500", "github-500", "tinytodo-500",
		"--target", "opa/inproc,opa/server,cedar/inproc,cedar/server,openfga/inproc,openfga/server", "--first", "200")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	ok := 0
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
		if !strings.HasSuffix(line, "  ok") {
			t.Errorf("row %q is not ok", line)
		}
		ok++
	}
	// 6 workloads, 7 modes: openfga/server checked over HTTP and over gRPC.
	if ok != 6*7 {
		t.Errorf("%d ok rows; want %d\n%s", ok, 6*7, stdout)
	}
}

// An application name whose N is out of range is bad input: exit 2, naming the range.
func TestAppNamesRefused(t *testing.T) {
	for name, want := range map[string]string{
		"gdrive-5":       "N is 5",
		"github-200000":  "N is 200000",
		"tinytodo-010":   "without leading zeros",
		"tinytodo-lists": "want tinytodo-<N>",
	} {
		code, _, stderr := run(t, "run", "--target", "opa/inproc", "--workload", name, "--duration", "100ms")
		if code != exitUsage || !strings.Contains(stderr, want) || !strings.Contains(stderr, name) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d naming %q", name, code, stderr, exitUsage, want)
		}
	}
}
