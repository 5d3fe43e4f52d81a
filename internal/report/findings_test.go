package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// Each kind of experiment opens with the line that answers its question, computed from what
// the committed document holds.
func TestFindingsOfCommittedResults(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
		not  []string
	}{
		{"quickstart-2026-11-23.json", []string{
			"cedar/inproc against opa/inproc, P50: nop 10.4× faster, rbac 4.46× faster, api ‡ 32.0× faster, risk ‡ 19.6× faster (each 95 % interval excludes 1)",
		}, []string{"opa/server against opa/server"}},
		{"rule-scaling-2026-11-23-2.json", []string{
			"rules-path cedar-policies on cedar/inproc: P50 linear, +784ns per rule (2.44µs at 10 → 7.66ms at 10000); P99 linear",
			"rules-path rego-indexed on opa/inproc: P50 flat at 14.3µs; P99 flat at 66.0µs",
		}, []string{"rules-path-1000"}}, // the sizes of a series are the growth lines' to say
		{"rates-2026-11-23.json", []string{
			// The generator's own lateness is the load machine's limit, not a saturation.
			"nop on opa/server: held every rate up to 5,000/s (P50 663µs → 678µs, P99 3.02ms → 42.3ms); P99 above ten times its lowest-rate value from 4,000/s (41.6ms); from 1,000/s the generator itself was late",
			"envoy on opa/server: saturates between 2,000/s (held, P50 443µs) and 3,000/s (P50 315ms: the median waits in a queue)",
		}, []string{"against opa/server"}}, // a target against itself under another rate is no finding
		{"concurrency-2026-11-23.json", []string{
			"rbac on opa/server over workers: req/s stops growing at 2 workers (4,899 req/s; 4 workers: 4,908, P99 1.40ms → 2.12ms)",
		}, []string{"against opa/server"}},
		{"replicas-2026-11-23.json", []string{
			"risk on opa/server over replicas: USL peaks at replicas≈2.4 with 431 req/s (measured best 440 req/s at 2)",
			"the USL fits poorly (R² 0.11), so no peak is read from it",
		}, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := strings.Join(Build(committedDoc(t, tc.file)).Findings, "\n")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("findings lack %q:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("findings say %q:\n%s", n, got)
				}
			}
		})
	}
}

// The terminal view of the quickstart fits 120 columns, findings first, the columns a reader
// needs first, and no note on a column it leaves out; --wide keeps every column and its note.
func TestTableFitsTheTerminal(t *testing.T) {
	doc := committedDoc(t, "quickstart-2026-11-23.json")
	var narrow, wide bytes.Buffer
	if err := Table(&narrow, doc); err != nil {
		t.Fatal(err)
	}
	if err := TableWide(&wide, doc); err != nil {
		t.Fatal(err)
	}
	out := narrow.String()
	if !strings.HasPrefix(out, "Findings\n- ") {
		t.Errorf("the terminal view does not open with the findings:\n%s", out)
	}
	for i, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > TerminalWidth {
			t.Errorf("line %d is %d characters, more than %d: %s", i+1, n, TerminalWidth, line)
		}
	}
	header := "Workload  Target        Load       req/s ± sd          P50     P99      errors  × vs opa\n"
	if !strings.Contains(out, header) {
		t.Errorf("default header is not %q:\n%s", header, out)
	}
	for _, gone := range []string{"P50 over nop", "× vs first", "SUT CPU"} {
		if strings.Contains(out, gone) {
			t.Errorf("the default view names %q, a column it leaves out", gone)
		}
	}
	for _, kept := range []string{"P50 over nop: this row's P50 minus", "× vs first: this row's req/s", "0.98 cores, 45 MB", "1,770× †"} {
		if !strings.Contains(unwrapNotes(wide.String()), kept) {
			t.Errorf("the wide view lacks %q", kept)
		}
	}
}

func TestRatioText(t *testing.T) {
	for v, want := range map[float64]string{
		21375.29: "21,400×", 1769.79: "1,770×", 420.05: "420×", 78.84: "78.8×", 10: "10.0×", 9.996: "10.0×",
		3.14159: "3.14×", 1: "1.00×", 0.42149: "0.421×", 0.00463: "0.00463×", 999.6: "1,000×", 0: "-",
	} {
		if got := RatioText(v); got != want {
			t.Errorf("RatioText(%v) = %q, want %q", v, got, want)
		}
	}
}

// A rate matrix runs one target per workload: × vs first would divide a rate by a smaller one
// (10× the rate, 10× the req/s), so the default view leaves it out and --wide keeps it.
func TestDefaultViewDropsARatioThatComparesNoTargets(t *testing.T) {
	doc := committedDoc(t, "rates-2026-11-23.json")
	var narrow, wide bytes.Buffer
	if err := Table(&narrow, doc); err != nil {
		t.Fatal(err)
	}
	if err := TableWide(&wide, doc); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(narrow.String(), "× vs first") {
		t.Errorf("the default view of a rate matrix has × vs first:\n%s", narrow.String())
	}
	if !strings.Contains(wide.String(), "× vs first") {
		t.Error("the wide view of a rate matrix lost × vs first")
	}
}
