package report

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/authzbench/authzbench/internal/browsertest"
	"github.com/authzbench/authzbench/internal/result"
)

// The HTML report as a browser shows it: a multi-target report (the quickstart's five targets,
// a rate matrix, a worker sweep and a scaling series in one page) is loaded in headless
// Chromium; the DOM it built must hold every chart the page was rendered with, each an <svg>
// with its <title>, and the console must be silent (the page has no script, so nothing can
// throw). A screenshot is taken and checked to be an image of the window's size that is not
// blank; AUTHZBENCH_SCREENSHOT=path keeps the quickstart's.
func TestHTMLInChromium(t *testing.T) {
	bin := browsertest.Find()
	if bin == "" {
		t.Skip("Chromium not found (chromium, chromium-browser, google-chrome or AUTHZBENCH_CHROMIUM): apt-get install -y chromium to run the browser test")
	}
	dir := t.TempDir()
	quick := committedDoc(t, "quickstart-2026-11-23.json")
	docs := []*result.Document{quick, committedDoc(t, "rates-2026-11-23.json"), committedDoc(t, "concurrency-2026-11-23.json"), scaledDoc(t)}
	var b bytes.Buffer
	if err := htmlSeveral(&b, []string{"quickstart.json", "rates.json", "concurrency.json", "scaled.json"}, docs); err != nil {
		t.Fatal(err)
	}
	want := chartIDs(t, b.String())
	for _, id := range []string{"f1-chart-throughput", "f1-chart-spectrum-rbac", "f1-chart-cpu", "f1-chart-memory",
		"f2-chart-latency-vs-rate", "f3-chart-latency-vs-workers", "f4-chart-latency-vs-n"} {
		if !slices.Contains(want, id) {
			t.Fatalf("the page has no chart %s: %q", id, want)
		}
	}
	pagePath := filepath.Join(dir, "report.html")
	if err := os.WriteFile(pagePath, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	dom, logs := browsertest.Run(t, bin, "--dump-dom", "file://"+pagePath)
	for _, bad := range []string{"Uncaught", ":CONSOLE", "Refused to", "net::ERR_"} {
		if strings.Contains(logs, bad) {
			t.Errorf("Chromium logged %q while loading the page:\n%s", bad, logs)
		}
	}
	got := domCharts(t, dom)
	if !slices.Equal(got, want) {
		t.Errorf("Chromium's DOM holds charts %q, want %q", got, want)
	}

	// The screenshot: the quickstart alone.
	var one bytes.Buffer
	if err := HTML(&one, quick); err != nil {
		t.Fatal(err)
	}
	onePath := filepath.Join(dir, "quickstart.html")
	if err := os.WriteFile(onePath, one.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	browsertest.Run(t, bin, "--window-size=1280,3000", "--screenshot="+shot, "file://"+onePath)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if size := img.Bounds().Size(); size.X != 1280 || size.Y != 3000 {
		t.Errorf("screenshot %v, want 1280x3000", size)
	}
	if n := colours(img); n < 8 {
		t.Errorf("screenshot has %d colours: a blank page, not the report", n)
	}
	if keep := os.Getenv("AUTHZBENCH_SCREENSHOT"); keep != "" {
		data, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keep, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// domCharts are the ids of the <svg class="chart …"> elements of a DOM that have a non-empty
// <title> child, in document order.
func domCharts(t *testing.T, dom string) []string {
	t.Helper()
	root, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "svg" && strings.HasPrefix(attr(n, "class"), "chart ") {
			titled := false
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && c.Data == "title" && c.FirstChild != nil && strings.TrimSpace(c.FirstChild.Data) != "" {
					titled = true
				}
			}
			if !titled {
				t.Errorf("chart %s has no <title> in the DOM", attr(n, "id"))
			}
			ids = append(ids, attr(n, "id"))
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return ids
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// colours counts the distinct colours of a sample of an image's pixels, up to 64.
func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y && len(seen) < 64; y += 7 {
		for x := b.Min.X; x < b.Max.X && len(seen) < 64; x += 5 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

// measureScript is added by the test alone (the page itself has no script): it writes, into
// the DOM Chromium dumps, what a reader at 1,280 px meets: the page's overflow, each default
// summary table's box, two lines of one chart alike (colour and dash), a legend that is not
// its series' whole name or runs past the chart, a bar label cut at the edge, and whether
// the findings come first.
const measureScript = `<script>
addEventListener("load", () => {
  const out = [];
  const de = document.documentElement;
  if (de.scrollWidth > de.clientWidth) out.push("page overflows: scrollWidth " + de.scrollWidth + " > clientWidth " + de.clientWidth);
  document.querySelectorAll("div.screen-only").forEach((box, i) => {
    if (box.scrollWidth > box.clientWidth) out.push("default table " + i + " overflows its box: " + box.scrollWidth + " > " + box.clientWidth);
  });
  document.querySelectorAll("svg.chart").forEach(svg => {
    const styles = new Map();
    const names = [];
    svg.querySelectorAll("g.series").forEach(g => {
      const style = g.getAttribute("class") + " dash " + g.getAttribute("data-dash");
      const name = g.querySelector("title").textContent;
      if (styles.has(style)) out.push(svg.id + ": " + JSON.stringify(name) + " and " + JSON.stringify(styles.get(style)) + " share " + style);
      styles.set(style, name);
      names.push(name);
    });
    const width = svg.viewBox.baseVal.width;
    const legends = [...svg.querySelectorAll("g.legend text")];
    legends.forEach((t, i) => {
      const shown = [...t.querySelectorAll("tspan")].map(s => s.textContent).join(" ") || t.textContent;
      if (i < names.length && shown !== names[i]) out.push(svg.id + ": legend " + JSON.stringify(shown) + " is not the series' name " + JSON.stringify(names[i]));
      const box = t.getBBox();
      if (box.x + box.width > width + 0.5) out.push(svg.id + ": legend " + JSON.stringify(shown) + " runs past the chart's edge (" + Math.round(box.x + box.width) + " > " + width + ")");
    });
    if (svg.querySelector("g.series") && legends.length !== names.length) out.push(svg.id + ": " + legends.length + " legend entries for " + names.length + " series");
    svg.querySelectorAll("text.label").forEach(t => {
      if (t.getBBox().x < -0.5) out.push(svg.id + ": label " + JSON.stringify(t.textContent) + " is cut at the chart's left edge");
    });
  });
  const first = document.querySelector("section h2");
  if (!first || !first.parentElement.id.endsWith("findings")) out.push("the first heading is not the findings: " + (first ? first.textContent : "none"));
  const pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = "measured\n" + out.join("\n");
  document.body.appendChild(pre);
});
</script>`

// At 1,280 px a real report fits the page and its charts read: no horizontal overflow, every
// default summary table within its box, no two lines of a chart alike, every legend whole,
// the findings first. A quickstart, a rule-scaling sweep (long workload names)
// and a rate matrix are measured.
func TestHTMLFitsThePageInChromium(t *testing.T) {
	bin := browsertest.Find()
	if bin == "" {
		t.Skip("Chromium not found (chromium, chromium-browser, google-chrome or AUTHZBENCH_CHROMIUM): apt-get install -y chromium to run the browser test")
	}
	for _, file := range []string{"quickstart-2026-11-23.json", "rule-scaling-2026-11-23-2.json", "rates-2026-11-23.json"} {
		t.Run(file, func(t *testing.T) {
			var b bytes.Buffer
			if err := HTML(&b, committedDoc(t, file)); err != nil {
				t.Fatal(err)
			}
			page := strings.Replace(b.String(), "</body>", measureScript+"</body>", 1)
			path := filepath.Join(t.TempDir(), "page.html")
			if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
			dom, _ := browsertest.Run(t, bin, "--window-size=1280,2400", "--virtual-time-budget=5000", "--dump-dom", "file://"+path)
			i := strings.Index(dom, `<pre id="measured">measured`)
			if i < 0 {
				t.Fatal("the measuring script did not run: Chromium's DOM has no measurements")
			}
			measured := dom[i+len(`<pre id="measured">measured`):]
			measured = strings.TrimSpace(html.UnescapeString(measured[:strings.Index(measured, "</pre>")]))
			if measured != "" {
				t.Errorf("at 1,280 px:\n%s", measured)
			}
		})
	}
}
