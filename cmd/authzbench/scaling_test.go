package main

import (
	"strings"
	"testing"
)

// The generated scaling workloads decide every input as expected in every engine and mode that
// loads a policy: each rule kind in both Rego styles, in Cedar and in Casbin (its policy lines,
// and its role links where it has them), and the data-size family, at a small N; and a large
// rule set served, where a policy of thousands of rules must reach the server whole.
func TestScalingWorkloadsVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA and Cedar processes")
	}
	cases := []struct {
		name string
		args []string
		rows int // ok rows expected
	}{
		{"every kind and style, every mode", []string{"rules-path-10", "rules-path-10-indexed", "rules-ip-10", "rules-ip-10-indexed",
			"rules-principal-10", "rules-principal-10-indexed", "rules-jwt-claim-10", "rules-jwt-claim-10-indexed", "rbac-data-100",
			"--target", "opa/inproc,opa/cli,opa/server,cedar/inproc,cedar/server,casbin/inproc,casbin/server", "--first", "6"}, 8*3 + 4*2 + 4*2 + 2*2 + 7},
		{"thousands of rules, served", []string{"rules-ip-3000", "rules-principal-3000-indexed",
			"--target", "opa/server,cedar/server,casbin/server", "--first", "20"}, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, append([]string{"workloads", "verify"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			ok := 0
			for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
				switch {
				case strings.HasSuffix(line, "  ok"):
					ok++
				case strings.Contains(line, "-indexed") && strings.Contains(line, "cedar/") && strings.Contains(line, "skipped"):
				case (strings.HasPrefix(line, "rules-ip-") || strings.HasPrefix(line, "rules-jwt-claim-")) && strings.Contains(line, "-indexed") &&
					strings.Contains(line, "casbin/") && strings.Contains(line, "skipped"):
				default:
					t.Errorf("row %q is neither ok nor an indexed workload skipped on cedar, or on casbin for ip and jwt-claim", line)
				}
			}
			if ok != tc.rows {
				t.Errorf("%d ok rows; want %d\n%s", ok, tc.rows, stdout)
			}
		})
	}
}

// A family name that is not a workload is bad input: exit 2, and the message says what is wrong
// with the name.
func TestScalingNamesRefused(t *testing.T) {
	for name, want := range map[string]string{
		"rules-path-0":     "N is 0",
		"rules-foo-10":     `unknown rule kind "foo"`,
		"rules-path-20000": "N is 20000",
		"rbac-data-5":      "N is 5",
	} {
		code, _, stderr := run(t, "run", "--target", "opa/inproc", "--workload", name, "--duration", "100ms")
		if code != exitUsage || !strings.Contains(stderr, want) || !strings.Contains(stderr, name) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d saying %q", name, code, stderr, exitUsage, want)
		}
	}
}
