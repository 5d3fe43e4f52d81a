package main

import (
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
)

// run --help tells users of every engine that reads files in its own forms what those forms
// are, from the engine's own words: a new engine's files reach the help without an edit here.
func TestRunHelpSaysEveryEnginesOwnFiles(t *testing.T) {
	_, out, _ := run(t, "run", "--help")
	flat := strings.Join(strings.Fields(out), " ")
	hinted := 0
	for _, e := range engine.All() {
		h, ok := e.(engine.FilesHinted)
		if !ok {
			continue
		}
		hinted++
		flags, _ := h.FilesHint()
		if !strings.Contains(flat, strings.Join(strings.Fields(flags), " ")) {
			t.Errorf("run --help does not say %s's file forms (%q):\n%s", e.Name(), flags, out)
		}
	}
	if hinted == 0 {
		t.Fatal("no registered engine says its file forms: the test checks nothing")
	}
}
