package report

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// scaledDoc is a committed worker sweep relabelled as a scaling series (as the scaling
// engineer's runs carry result.Run.Scale), so the "latency against N" chart has data.
func scaledDoc(t *testing.T) *result.Document {
	doc := committedDoc(t, "concurrency-2026-11-23.json")
	for i := range doc.Runs {
		r := &doc.Runs[i]
		r.Scale = &result.Scale{Series: "rules-path/" + r.Workload, Param: "rules", N: 10 * r.Load.Workers}
	}
	return doc
}

var svgOpen = regexp.MustCompile(`<svg [^>]*id="([^"]+)"[^>]*class="chart [^"]*"[^>]*>(<title>[^<]+</title>)?`)

// chartIDs are the ids of the page's charts, each checked to open with its <title>.
func chartIDs(t *testing.T, page string) []string {
	t.Helper()
	var ids []string
	for _, m := range svgOpen.FindAllStringSubmatch(page, -1) {
		if m[2] == "" {
			t.Errorf("chart %s has no <title>", m[1])
		}
		ids = append(ids, m[1])
	}
	return ids
}

// Each chart a document has data for is drawn, with its id; the page carries no script and
// refers to nothing outside itself.
func TestHTMLDrawsTheChartsTheDocumentHasDataFor(t *testing.T) {
	for _, c := range []struct {
		name     string
		doc      *result.Document
		want     []string
		warnings []string
	}{
		{"quickstart", committedDoc(t, "quickstart-2026-11-23.json"),
			[]string{"chart-throughput", "chart-spectrum-nop", "chart-spectrum-rbac", "chart-spectrum-api", "chart-spectrum-risk", "chart-cpu", "chart-memory"},
			[]string{"Few samples:", "rbac on opa/cli at 2 workers (P99, P99.9)"}},
		{"rates", committedDoc(t, "rates-2026-11-23.json"),
			[]string{"chart-latency-vs-rate", "chart-throughput", "chart-spectrum-nop", "chart-spectrum-envoy", "chart-cpu", "chart-memory"},
			[]string{"Rate missed: nop on opa/server at 4,000/s x64;", "Rate missed by the generator: nop on opa/server at 1,000/s x64;", "Errors, responses that were not served decisions: envoy on opa/server at 4,000/s x64 (508)"}},
		{"workers", committedDoc(t, "concurrency-2026-11-23.json"),
			[]string{"chart-latency-vs-workers", "chart-throughput", "chart-spectrum-nop", "chart-spectrum-rbac", "chart-spectrum-api", "chart-spectrum-risk", "chart-cpu", "chart-memory"}, nil},
		{"scale", scaledDoc(t),
			[]string{"chart-latency-vs-n", "chart-throughput", "chart-spectrum-nop", "chart-spectrum-rbac", "chart-spectrum-api", "chart-spectrum-risk", "chart-cpu", "chart-memory"}, nil},
		{"soak", committedDoc(t, "soak-opa-server-5000rps-2026-11-23.json"),
			[]string{"chart-throughput", "chart-spectrum-rbac", "chart-cpu", "chart-memory"},
			[]string{"Rate missed: rbac on opa/server at 5,000/s x64.", "(940233)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := HTML(&b, c.doc); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if got := chartIDs(t, page); !slices.Equal(got, c.want) {
				t.Errorf("charts %q, want %q", got, c.want)
			}
			for _, w := range c.warnings {
				if !strings.Contains(page, w) {
					t.Errorf("no warning %q", w)
				}
			}
			if len(c.warnings) > 0 && strings.Index(page, `id="warnings"`) > strings.Index(page, `class="summary`) {
				t.Error("the warnings are not above the table")
			}
			for _, forbidden := range []string{"<script", " src=", " href=", "url(", "@import"} {
				if strings.Contains(page, forbidden) {
					t.Errorf("page contains %q: it must be self-contained and script-free", forbidden)
				}
			}
			for _, must := range []string{"@media (prefers-color-scheme: dark)", "@media print", c.doc.Env.CPUModel, c.doc.Env.Commit} {
				if !strings.Contains(page, must) {
					t.Errorf("page lacks %q", must)
				}
			}
			// The findings come first, and each summary table (the one that fits the page, the
			// wide one under it, the one printed) has a row per run.
			if f := strings.Index(page, `id="findings"`); f < 0 || f > strings.Index(page, `class="summary`) || f > strings.Index(page, `<svg`) {
				t.Error("the findings are not first")
			}
			tables := strings.Split(page, `<table class="summary`)[1:]
			if len(tables) != 3 {
				t.Fatalf("%d summary tables, want 3 (fit, wide, print)", len(tables))
			}
			for _, tb := range tables {
				tb = tb[:strings.Index(tb, "</table>")]
				if n := strings.Count(tb, "<tr>") - 1; n != len(c.doc.Runs) {
					t.Errorf("%d table rows, want %d", n, len(c.doc.Runs))
				}
			}
		})
	}
}

// Everything from the document is escaped, in the table, the notes, the charts and the
// provenance.
func TestHTMLEscapesTheDocument(t *testing.T) {
	doc := committedDoc(t, "quickstart-2026-11-23.json")
	evil := `<script>alert("x")</script>`
	doc.Runs[0].Workload = evil
	doc.Runs[1].Target = "opa/server" + evil
	doc.Env.CPUModel = evil
	doc.Command = []string{"authzbench", evil}
	var b bytes.Buffer
	if err := HTML(&b, doc); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<script") {
		t.Fatalf("unescaped script in the page:\n%s", page[strings.Index(page, "<script")-200:][:400])
	}
	if !strings.Contains(page, "&lt;script&gt;") {
		t.Error("the escaped text is missing")
	}
}

// Several files: one page, a section each, ids kept apart.
func TestHTMLSeveralFilesKeepIDsApart(t *testing.T) {
	docs := []*result.Document{committedDoc(t, "quickstart-2026-11-23.json"), committedDoc(t, "rates-2026-11-23.json")}
	var b bytes.Buffer
	if err := htmlSeveral(&b, []string{"a.json", "b.json"}, docs); err != nil {
		t.Fatal(err)
	}
	ids := chartIDs(t, b.String())
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("id %s twice", id)
		}
		seen[id] = true
	}
	if !seen["f1-chart-throughput"] || !seen["f2-chart-latency-vs-rate"] {
		t.Errorf("ids %q", ids)
	}
	if !strings.Contains(b.String(), `<h2 class="file">a.json</h2>`) {
		t.Error("no heading naming the first file")
	}
}

var (
	chartSVG    = regexp.MustCompile(`(?s)<svg [^>]*id="([^"]+)"[^>]*class="chart [^"]*".*?</svg>`)
	seriesStyle = regexp.MustCompile(`<g class="series (c\d+)" data-dash="(\d+)"><title>([^<]*)</title>`)
	legendText  = regexp.MustCompile(`(?s)<g class="legend[^"]*">.*?<text[^>]*>(.*?)</text></g>`)
	tspan       = regexp.MustCompile(`<tspan[^>]*>([^<]*)</tspan>`)
)

// A rule-scaling sweep reads without a browser too: a panel of latency against N per family,
// each engine and style one colour and dash on every panel, no two lines of a chart alike, every
// legend its series' whole name, and the percentile curves of the middle sizes folded.
func TestHTMLSweepChartsReadApart(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, committedDoc(t, "rule-scaling-2026-11-23-2.json")); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	styleOfName := map[string]string{}
	panels := 0
	for _, m := range chartSVG.FindAllStringSubmatch(page, -1) {
		id, svg := m[1], m[0]
		if strings.HasPrefix(id, "chart-latency-vs-n-") {
			panels++
		}
		seen := map[string]string{}
		var names []string
		for _, s := range seriesStyle.FindAllStringSubmatch(svg, -1) {
			style, name := s[1]+" dash "+s[2], s[3]
			if other, ok := seen[style]; ok {
				t.Errorf("%s: %q and %q are both %s", id, name, other, style)
			}
			seen[style] = name
			names = append(names, name)
			if strings.HasPrefix(id, "chart-latency-vs-n-") {
				if was, ok := styleOfName[name]; ok && was != style {
					t.Errorf("%s: %q is %s here, %s on another panel", id, name, style, was)
				}
				styleOfName[name] = style
			}
		}
		for i, l := range legendText.FindAllStringSubmatch(svg, -1) {
			var parts []string
			for _, p := range tspan.FindAllStringSubmatch(l[1], -1) {
				parts = append(parts, p[1])
			}
			if got := strings.Join(parts, " "); i < len(names) && got != names[i] {
				t.Errorf("%s: legend %q, want the series' whole name %q", id, got, names[i])
			}
		}
	}
	if panels != 4 {
		t.Errorf("%d panels of latency against N, want 4 (rules-path, rules-ip, rules-principal, rules-jwt-claim)", panels)
	}
	at := strings.Index(page, `<details class="more-charts">`)
	if at < 0 {
		t.Fatal("no folded charts: the middle sizes' percentile curves are shown one by one")
	}
	folded := page[at:]
	for _, id := range []string{"chart-spectrum-rules-path-100", "chart-spectrum-rules-ip-1000-indexed"} {
		if !strings.Contains(folded, `id="`+id+`"`) {
			t.Errorf("%s is not folded", id)
		}
	}
	for _, id := range []string{"chart-spectrum-rules-path-10\"", "chart-spectrum-rules-path-10000\""} {
		if strings.Contains(folded, `id="`+id) || !strings.Contains(page, `id="`+id) {
			t.Errorf("%s is not shown", id)
		}
	}
}
