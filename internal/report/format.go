package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

// Format is an output format for result documents. Each registers itself by name from its own
// file (Register in its init), so a new format is one file, and the commands list it in their
// --format help (NameList) without a change.
type Format struct {
	Name string
	// Render writes one document.
	Render func(w io.Writer, doc *result.Document) error
	// Wide, when set, writes one document with every column; Render then keeps the few a
	// reader needs first (DefaultColumns). nil for a format that always writes everything.
	Wide func(w io.Writer, doc *result.Document) error
	// Heading introduces one of several documents written one after another, by the name of
	// the file it was read from.
	Heading func(name string) string
	// Several, when set, writes several documents as one (json: an array; csv: one table with a
	// column naming each row's file), instead of one after another under headings; names are
	// the files the documents were read from.
	Several func(w io.Writer, names []string, docs []*result.Document) error
	// Data marks a format a program parses (csv, json): it holds no notes, so the command
	// that renders it says on stderr what a note would (NoRuns).
	Data bool
}

var formats = map[string]Format{}

// Widened is the format writing every column (--wide): f itself when it always does.
func (f Format) Widened() Format {
	if f.Wide != nil {
		f.Render = f.Wide
	}
	return f
}

// Register adds a format; a name registered twice is a programming error.
func Register(f Format) {
	if _, dup := formats[f.Name]; dup {
		panic("report: format " + f.Name + " registered twice")
	}
	if f.Render == nil || (f.Heading == nil && f.Several == nil) {
		panic("report: format " + f.Name + " cannot render one document and several")
	}
	formats[f.Name] = f
}

// Names lists the registered formats, sorted.
func Names() []string {
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NameList says the registered formats in words: "json, markdown or table".
func NameList() string {
	names := Names()
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Lookup returns the format registered under name.
func Lookup(name string) (Format, error) {
	if f, ok := formats[name]; ok {
		return f, nil
	}
	return Format{}, fmt.Errorf("unknown format %q; known: %s", name, strings.Join(Names(), ", "))
}

// RenderFiles writes documents read from the named files: one as the format renders it, several
// one after another, each under a heading naming its file (or together, for a format that puts
// several into one). Every result keeps its own machine, versions and comparisons, so runs from
// different files are never put in one table or divided by each other.
func RenderFiles(w io.Writer, f Format, names []string, docs []*result.Document) error {
	if len(docs) == 1 {
		return f.Render(w, docs[0])
	}
	if f.Several != nil {
		return f.Several(w, names, docs)
	}
	for i, doc := range docs {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(w, f.Heading(names[i])); err != nil {
			return err
		}
		if err := f.Render(w, doc); err != nil {
			return err
		}
	}
	return nil
}
