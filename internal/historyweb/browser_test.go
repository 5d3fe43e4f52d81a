package historyweb

import (
	"fmt"
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/authzbench/authzbench/internal/browsertest"
)

// consoleTrouble are what Chromium logs when a page's script throws, it logs to the console,
// or it tries to load something its Content-Security-Policy forbids or cannot reach.
var consoleTrouble = []string{"Uncaught", ":CONSOLE", "Refused to", "net::ERR_"}

// The history's pages as a browser shows them: the server runs on the test history (a step at
// commit 20 in one series, an A/A series beside it), and Chromium loads the series list, the
// stepped series, a comparison and a stored report. From each DOM Chromium built: the series
// and the changes are there, every chart is an <svg> with its <title>, the series chart has its
// bands, titled points and the change's mark; the console is silent and nothing was refused.
// A screenshot of the series page must be an image of the window's size that is not blank;
// AUTHZBENCH_SCREENSHOT=path keeps it (docs/history.md shows it).
func TestPagesInChromium(t *testing.T) {
	bin := browsertest.Find()
	if bin == "" {
		t.Skip("Chromium not found (chromium, chromium-browser, google-chrome or AUTHZBENCH_CHROMIUM): apt-get install -y chromium to run the browser test")
	}
	st := testHistory(t)
	ids := seriesIDs(t, st)
	srv := httptest.NewServer(Handler(st, Options{}))
	defer srv.Close()

	load := func(path string) *html.Node {
		t.Helper()
		dom, logs := browsertest.Run(t, bin, "--virtual-time-budget=3000", "--dump-dom", srv.URL+path)
		for _, bad := range consoleTrouble {
			if strings.Contains(logs, bad) {
				t.Errorf("Chromium logged %q loading %s:\n%s", bad, path, logs)
			}
		}
		root, err := html.Parse(strings.NewReader(dom))
		if err != nil {
			t.Fatal(err)
		}
		return root
	}

	t.Run("series list", func(t *testing.T) {
		root := load("/")
		if n := len(find(root, "tr", "series-row")); n != 2 {
			t.Errorf("%d series in the DOM, want 2", n)
		}
		changes := find(root, "tr", "change")
		if len(changes) == 0 {
			t.Error("no change in the DOM")
		}
		for _, c := range changes {
			if !strings.Contains(text(c), commitOf(stepAt)[:10]) {
				t.Errorf("a change not at the step's commit: %s", text(c))
			}
		}
		if n := titledCharts(t, root, "spark"); n != 2 {
			t.Errorf("%d sparklines, want 2", n)
		}
	})

	t.Run("series page", func(t *testing.T) {
		root := load(fmt.Sprintf("/series/%d", ids["rbac"]))
		if n := titledCharts(t, root, "trend"); n != 2 {
			t.Errorf("%d charts along commits, want 2 (latency, throughput)", n)
		}
		latency := byID(root, "trend-latency")
		if latency == nil {
			t.Fatal("no latency chart in the DOM")
		}
		if n := len(find(latency, "polygon", "")); n != 2 {
			t.Errorf("%d bands, want 2", n)
		}
		points := find(latency, "circle", "point")
		if len(points) != 2*commits {
			t.Errorf("%d points, want %d", len(points), 2*commits)
		}
		for _, p := range points {
			if !strings.HasPrefix(text(p), "commit ") {
				t.Errorf("a point titled %q, want its commit and values", text(p))
				break
			}
		}
		marks := find(latency, "g", "change")
		if len(marks) == 0 || !strings.Contains(text(marks[0]), commitOf(stepAt)[:10]) {
			t.Errorf("no change marked at %s", commitOf(stepAt)[:10])
		}
		if n := len(find(root, "li", "change")); n == 0 {
			t.Error("the series page lists no change")
		}
	})

	t.Run("compare", func(t *testing.T) {
		root := load(fmt.Sprintf("/compare?base=%s&new=%s&series=%d", commitOf(stepAt - 1)[:6], commitOf(stepAt)[:6], ids["rbac"]))
		tables := find(root, "table", "compare")
		if len(tables) != 1 || len(find(tables[0], "tr", "")) != 2 {
			t.Errorf("want one compare table of a header and one row, got %d tables", len(tables))
		}
	})

	t.Run("report", func(t *testing.T) {
		root := load("/report/1")
		if byID(root, "findings") == nil || titledCharts(t, root, "") == 0 {
			t.Error("the stored run's report has no findings or no chart in the DOM")
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		shot := filepath.Join(t.TempDir(), "series.png")
		browsertest.Run(t, bin, "--window-size=1280,1000", "--screenshot="+shot, fmt.Sprintf("%s/series/%d", srv.URL, ids["rbac"]))
		f, err := os.Open(shot)
		if err != nil {
			t.Fatalf("no screenshot: %v", err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		if size := img.Bounds().Size(); size.X != 1280 || size.Y != 1000 {
			t.Errorf("screenshot %v, want 1280x1000", size)
		}
		seen := map[[4]uint32]bool{}
		for y := 0; y < 1000 && len(seen) < 16; y += 7 {
			for x := 0; x < 1280 && len(seen) < 16; x += 5 {
				r, g, b, a := img.At(x, y).RGBA()
				seen[[4]uint32{r, g, b, a}] = true
			}
		}
		if len(seen) < 16 {
			t.Errorf("screenshot has %d colours: a blank page, not the series", len(seen))
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
	})
}

// find are the elements named tag under n whose class list holds class ("" for any).
func find(n *html.Node, tag, class string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag && (class == "" || hasClass(n, class)) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

func byID(n *html.Node, id string) *html.Node {
	var found *html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if found == nil && n.Type == html.ElementNode && attr(n, "id") == id {
			found = n
		}
		for c := n.FirstChild; c != nil && found == nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return found
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// titledCharts counts the <svg class="chart …"> elements with the class (any chart for "")
// and fails the test for one without a <title>.
func titledCharts(t *testing.T, root *html.Node, class string) int {
	t.Helper()
	n := 0
	for _, svg := range find(root, "svg", "chart") {
		if class != "" && !hasClass(svg, class) {
			continue
		}
		titled := false
		for c := svg.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.Data == "title" && strings.TrimSpace(text(c)) != "" {
				titled = true
			}
		}
		if !titled {
			t.Errorf("chart %s has no <title> in the DOM", attr(svg, "id"))
		}
		n++
	}
	return n
}
