package scenario

import (
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/load"
)

// A scenario's input_skew key sets how each request's input is drawn, a target's own over the
// scenario's; a value that is no draw is refused naming its line.
func TestInputSkewKey(t *testing.T) {
	s, err := Parse("s.yaml", []byte("load: {workers: 2, input_skew: \"hot:90/10\"}\nworkloads: [nop]\ntargets:\n  - opa/inproc\n  - {target: cedar/inproc, load: {input_skew: \"zipf:0.99\"}}\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"hot:90/10", "zipf:0.99"} {
		if d := s.Targets[i].Load.Draw; d.String() != want || !d.Random() {
			t.Errorf("target %s: draw %s, want %s", s.Targets[i].Name, d, want)
		}
	}
	_, err = Parse("s.yaml", []byte("workloads: [nop]\ntargets: [opa/inproc]\nload:\n  input_skew: \"zipf:0\"\n"), "")
	if err == nil || !strings.Contains(err.Error(), "s.yaml:4") && !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "want zipf:S") {
		t.Errorf("a bad input_skew: %v; want its line and what it takes", err)
	}
	var none load.Draw
	if s, err := Parse("s.yaml", []byte("workloads: [nop]\ntargets: [opa/inproc]\n"), ""); err != nil || s.Targets[0].Load.Draw != none {
		t.Errorf("no input_skew: %v, %v; want each input in turn", s, err)
	}
}
