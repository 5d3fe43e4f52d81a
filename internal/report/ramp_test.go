package report

import (
	"bytes"
	"strings"
	"testing"
)

// The html page shows a ramp's intervals as the terminal does, with the sentence saying what the
// estimate is and is not; a page with no ramp has no such section.
func TestHTMLShowsTheRamp(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, rampDocument()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<h2>Ramp, interval by interval</h2>",
		"<th>late (generator&#39;s)</th>",
		"<td>700–1,000</td><td>850</td>",
		"<td>BROKE: p99 160ms &gt; 50ms</td>",
		"ramp estimate 550 req/s, the mean rate of the last interval that met the SLO (400–700 req/s)",
		"the estimate is an upper bound, not a capacity",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	b.Reset()
	if err := HTML(&b, layersDocument()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Ramp, interval by interval") {
		t.Error("a page with no ramp shows a ramp section")
	}
}
