package textwrap

import (
	"os/exec"
	"strings"
	"testing"
)

func TestFill(t *testing.T) {
	for _, c := range []struct {
		text   string
		width  int
		indent string
		want   string
	}{
		{"- alpha beta gamma delta epsilon", 12, "  ", "- alpha beta\n  gamma\n  delta\n  epsilon\n"},
		// A word past the width is kept whole, never cut.
		{"averyveryverylongword x", 8, "  ", "averyveryverylongword\n  x\n"},
		// Width counts runes, not bytes.
		{"é é é é", 3, "", "é é\né é\n"},
		{"  ", 10, "", ""},
	} {
		if got := Fill(c.text, c.width, c.indent); got != c.want {
			t.Errorf("Fill(%q, %d) = %q, want %q", c.text, c.width, got, c.want)
		}
	}
}

// The reports import this package on the promise that it links nothing but the standard
// library (internal/report's leaf test).
func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "github.com/authzbench/authzbench/internal/textwrap" {
		t.Errorf("textwrap depends on more than the standard library:\n%s", got)
	}
}
