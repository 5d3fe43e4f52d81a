package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// A run with changes shows on the page what the terminal prints of it (its writes beside its
// decisions, the judging of its answers) and, for an open loop, a timeline with a line at each
// acknowledged change; a closed loop's says why it has none.
func TestHTMLShowsChangesAndTheirTimeline(t *testing.T) {
	doc := committedDoc(t, "change-judging-cost-2026-11-28/changing-r1.json")
	var page bytes.Buffer
	if err := HTML(&page, doc); err != nil {
		t.Fatal(err)
	}
	s := page.String()
	for _, want := range []string{"Changes during the run, every answer judged", "<td>write</td>", "<td>changes applied</td>",
		"<td>wrong (no version gave it)</td>", `id="timeline-0"`, "lines: 100 changes"} {
		if !strings.Contains(s, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	_, chart, _ := strings.Cut(s, `id="timeline-0"`)
	chart, _, _ = strings.Cut(chart, "</svg>")
	_, marks, _ := strings.Cut(chart, `<g class="marks">`)
	marks, _, _ = strings.Cut(marks, "</g>")
	if n := strings.Count(marks, "<line "); n != 100 {
		t.Errorf("the timeline marks %d lines, want one per acknowledged change (100)", n)
	}

	closed := *doc
	closed.Runs = []result.Run{doc.Runs[0]}
	r := &closed.Runs[0]
	c := *r.Changes
	c.Timeline = nil
	r.Changes, r.Load.Model = &c, result.ClosedLoop
	page.Reset()
	if err := HTML(&page, &closed); err != nil {
		t.Fatal(err)
	}
	if s := page.String(); strings.Contains(s, `id="timeline-0"`) || !strings.Contains(s, "No timeline: it is drawn from an open loop") {
		t.Errorf("a closed loop's page draws a timeline or does not say why it has none")
	}
	// A document without changes has no such section.
	page.Reset()
	if err := HTML(&page, committedDoc(t, "quickstart-2026-11-23.json")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), "Changes during the run") {
		t.Error("a run without changes has a changes section")
	}
}
