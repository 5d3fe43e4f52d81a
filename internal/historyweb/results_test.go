package historyweb

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/authzbench/authzbench/internal/browsertest"
	"github.com/authzbench/authzbench/internal/history"
)

// fitScript is added by the test alone (the pages have no script): it writes, into the DOM
// Chromium dumps, whatever a reader at 1,280 px would find cut at the right edge: the page
// wider than the window, a table wider than its scroll box, a cell or a control past the edge.
const fitScript = `<script>
addEventListener("load", () => {
  const out = [];
  const de = document.documentElement, edge = de.clientWidth;
  if (de.scrollWidth > edge) out.push("page overflows: scrollWidth " + de.scrollWidth + " > " + edge);
  document.querySelectorAll("div.scroll").forEach((box, i) => {
    if (box.scrollWidth > box.clientWidth) out.push("table box " + i + " overflows: " + box.scrollWidth + " > " + box.clientWidth);
  });
  document.querySelectorAll("td, th, select, button, h1, h2, h3, p").forEach(el => {
    const r = el.getBoundingClientRect();
    if (r.right > edge + 0.5) out.push(el.tagName + " " + JSON.stringify(el.textContent.slice(0, 40)) + " ends at " + Math.round(r.right));
  });
  const pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = "measured\n" + out.slice(0, 20).join("\n");
  document.body.appendChild(pre);
});
</script>`

// Every result committed under docs/results/ added to one history, as a new user tries it
// (issue 42): the index lists no two rows that read the same (the same workload, target,
// load, testbed and branch), results that differ only in their kernel's build are one series,
// and at 1,280 px in Chromium nothing is cut at the right edge.
func TestIndexOfCommittedResults(t *testing.T) {
	ctx := context.Background()
	files, err := filepath.Glob("../../docs/results/*.json")
	if err != nil || len(files) < 50 {
		t.Fatalf("%d committed results (%v); want the docs' own", len(files), err)
	}
	st, err := history.Open(ctx, filepath.Join(t.TempDir(), "h.db"), history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, f := range files {
		in, err := history.ReadInput(f, "main")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Add(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	page := httptest.NewServer(Handler(st, Options{}))
	defer page.Close()
	status, body, _ := get(t, page, "/")
	if status != http.StatusOK {
		t.Fatalf("GET / = %d", status)
	}
	root, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	rows := 0
	for _, h3 := range find(root, "h3", "workload") {
		workload := text(h3)
		table := h3.NextSibling
		for table != nil && table.Type != html.ElementNode {
			table = table.NextSibling
		}
		if table == nil {
			t.Fatalf("workload %s has no table", workload)
		}
		for _, tr := range find(table, "tr", "series-row") {
			var cells []string
			for _, td := range find(tr, "td", "")[:4] { // target, load, testbed, branch
				cells = append(cells, strings.TrimSpace(text(td)))
			}
			row := workload + " | " + strings.Join(cells, " | ")
			if seen[row] {
				t.Errorf("two rows read the same: %s", row)
			}
			seen[row] = true
			rows++
		}
	}
	all, _ := st.Series(ctx)
	if rows != len(all) || rows == 0 {
		t.Fatalf("%d rows for %d series", rows, len(all))
	}
	t.Logf("%d files, %d series", len(files), rows)

	t.Run("fits 1280 px in Chromium", func(t *testing.T) {
		bin := browsertest.Find()
		if bin == "" {
			t.Skip("Chromium not found (chromium, chromium-browser, google-chrome or AUTHZBENCH_CHROMIUM): apt-get install -y chromium to run the browser test")
		}
		// The index with the measuring script, served without the header that forbids it.
		measured := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			Handler(st, Options{}).ServeHTTP(rec, r)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(bytes.Replace(rec.Body.Bytes(), []byte("</body>"), []byte(fitScript+"</body>"), 1))
		}))
		defer measured.Close()
		// The index, the series of most commits, and that of the first change found (its
		// commit rows carry the change and what changed in the machine).
		longest := all[0]
		for _, se := range all {
			if se.Commits > longest.Commits {
				longest = se
			}
		}
		paths := []string{"/", fmt.Sprintf("/series/%d", longest.ID)}
		if changes, err := st.Changes(ctx, history.ChangeOptions{}); err == nil && len(changes) > 0 {
			paths = append(paths, fmt.Sprintf("/series/%d", changes[0].Series))
		}
		for _, path := range paths {
			dom, _ := browsertest.Run(t, bin, "--window-size=1280,2000", "--virtual-time-budget=10000", "--dump-dom", measured.URL+path)
			root, err := html.Parse(strings.NewReader(dom))
			if err != nil {
				t.Fatal(err)
			}
			got := byID(root, "measured")
			if got == nil {
				t.Fatalf("%s: the measuring script did not run", path)
			}
			if report := strings.TrimSpace(strings.TrimPrefix(text(got), "measured")); report != "" {
				t.Errorf("%s at 1,280 px:\n%s", path, report)
			}
		}
	})
}
