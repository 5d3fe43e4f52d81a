package report

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// The formats register themselves; the commands list and find them by name.
func TestFormatsRegisterByName(t *testing.T) {
	if got, want := Names(), []string{"csv", "gobench", "html", "json", "markdown", "table"}; !reflect.DeepEqual(got, want) {
		t.Errorf("formats %q, want %q", got, want)
	}
	if got := NameList(); got != "csv, gobench, html, json, markdown or table" {
		t.Errorf("NameList = %q", got)
	}
	if _, err := Lookup("xml"); err == nil || err.Error() != `unknown format "xml"; known: csv, gobench, html, json, markdown, table` {
		t.Errorf("Lookup(xml) = %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second format named table was registered")
		}
	}()
	Register(Format{Name: "table", Render: Table, Heading: func(string) string { return "" }})
}

// A new format is one registration: once registered, it is found, listed and rendered like the
// others.
func TestANewFormatIsOneRegistration(t *testing.T) {
	Register(Format{Name: "test-count", Render: func(w io.Writer, doc *result.Document) error {
		_, err := io.WriteString(w, strings.Repeat("run\n", len(Build(doc).Rows)))
		return err
	}, Heading: func(name string) string { return "# " + name + "\n" }})
	defer delete(formats, "test-count")
	f, err := Lookup("test-count")
	if err != nil || !strings.Contains(NameList(), "test-count") {
		t.Fatalf("registered format not found (%v) or not listed (%s)", err, NameList())
	}
	var b bytes.Buffer
	if err := RenderFiles(&b, f, []string{"a.json", "b.json"}, []*result.Document{sampleDocument(), twoWorkloadsDocument()}); err != nil {
		t.Fatal(err)
	}
	if want := "# a.json\n" + strings.Repeat("run\n", 6) + "\n# b.json\n" + strings.Repeat("run\n", 6); b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// Several files are rendered one after another under their names, or, in JSON, as one array of
// their documents; one file as it is.
func TestRenderFiles(t *testing.T) {
	docs := []*result.Document{sampleDocument(), twoWorkloadsDocument()}
	names := []string{"first.json", "second.json"}
	for _, tc := range []struct {
		format string
		must   []string
	}{
		{"table", []string{"== first.json ==\nWorkload ", "\n\n== second.json ==\nWorkload "}},
		{"markdown", []string{"### first.json\n\n| Workload ", "\n\n### second.json\n\n| Workload "}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			f, _ := Lookup(tc.format)
			var b bytes.Buffer
			if err := RenderFiles(&b, f, names, docs); err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.must {
				if !strings.Contains(b.String(), m) {
					t.Errorf("output lacks %q:\n%s", m, b.String())
				}
			}
			if !strings.HasPrefix(b.String(), strings.SplitN(tc.must[0], "\n", 2)[0]) {
				t.Errorf("output does not start with the first heading")
			}
			var one bytes.Buffer
			if err := RenderFiles(&one, f, names[:1], docs[:1]); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(one.String(), "first.json") {
				t.Errorf("one file rendered under a heading:\n%s", one.String())
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		f, _ := Lookup("json")
		var b bytes.Buffer
		if err := RenderFiles(&b, f, names, docs); err != nil {
			t.Fatal(err)
		}
		var got []result.Document
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("not a JSON array of documents: %v", err)
		}
		if len(got) != 2 || len(got[0].Runs) != 6 || got[1].Env.CPUModel != "Hand-built CPU @ 2.40GHz" {
			t.Errorf("read back %d documents", len(got))
		}
		// The comparisons the table uses are computed afresh for each.
		if len(got[0].Comparisons) == 0 || !reflect.DeepEqual(got[0].Comparisons, result.Compare(docs[0])) {
			t.Errorf("comparisons %+v, want %+v", got[0].Comparisons, result.Compare(docs[0]))
		}
	})
}
