// Package browsertest finds and drives a headless Chromium for the tests that check pages as a
// reader sees them (the HTML report, the history pages). It is imported by tests only.
package browsertest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Find returns a headless-capable Chromium: $AUTHZBENCH_CHROMIUM, else the first of the usual
// names on PATH; "" when none is installed (the tests then skip, saying so).
func Find() string {
	if p := os.Getenv("AUTHZBENCH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Run runs headless Chromium with args on a fresh profile, bounded to 90 s, its console logged
// to stderr; a failure to run fails the test.
func Run(t testing.TB, bin string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	all := append([]string{"--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
		"--no-first-run", "--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, args...)
	cmd := exec.CommandContext(ctx, bin, all...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), errOut.String()
}
