package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run --html and --prometheus write the page and the OpenMetrics text of the run's own result,
// and report rebuilds both, and the new formats, from the result file alone.
func TestRunWritesHTMLAndPrometheus(t *testing.T) {
	dir := t.TempDir()
	out, page, prom := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html"), filepath.Join(dir, "r.prom")
	runOK(t, out, "run", "--target", "opa/inproc,cedar/inproc", "--workload", "rbac", "--requests", "200", "--warmup", "0s",
		"--workers", "1", "--no-progress", "--html", page, "--prometheus", prom)
	for path, musts := range map[string][]string{
		page: {"<!DOCTYPE html>", `id="chart-throughput"`, `id="chart-spectrum-rbac"`, "opa/inproc", "cedar/inproc"},
		prom: {`authzbench_latency_seconds_bucket{target="opa/inproc",workload="rbac",load="workers=1",repetition="1",le="+Inf"} 200`,
			`authzbench_responses{target="cedar/inproc",workload="rbac",load="workers=1",repetition="1",class="ok"} 200`, "\n# EOF\n"},
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range musts {
			if !strings.Contains(string(b), m) {
				t.Errorf("%s lacks %q", filepath.Base(path), m)
			}
		}
	}
	again := filepath.Join(dir, "again.prom")
	code, stdout, stderr := run(t, "report", "--format", "html", "--prometheus", again, out)
	if code != 0 || !strings.Contains(stdout, `id="chart-throughput"`) {
		t.Fatalf("report --format html: exit %d, %s", code, stderr)
	}
	if b, _ := os.ReadFile(again); !strings.HasSuffix(string(b), "# EOF\n") {
		t.Errorf("report --prometheus wrote %q", b)
	}
	for _, format := range []string{"csv", "gobench"} {
		code, stdout, stderr := run(t, "report", "--format", format, out)
		if code != 0 || !strings.Contains(stdout, "rbac") {
			t.Errorf("report --format %s: exit %d, %s%s", format, code, stdout, stderr)
		}
	}
	// Bad paths are refused before any load, and --prometheus takes one file.
	code, _, stderr = run(t, "run", "--target", "opa/inproc", "--requests", "10", "-o", filepath.Join(dir, "r2.json"), "--html", filepath.Join(out, "r.html"))
	if code != exitUsage || !strings.Contains(stderr, "--html") || !strings.Contains(stderr, "is not a directory") {
		t.Errorf("--html under a file: exit %d, %s", code, stderr)
	}
	code, _, stderr = run(t, "report", "--prometheus", again, out, out)
	if code != exitUsage || !strings.Contains(stderr, "--prometheus takes one result file") {
		t.Errorf("--prometheus with two files: exit %d, %s", code, stderr)
	}
}
