package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// Merge never counts one measurement twice: whatever brings a repetition in twice (a file given
// twice, a merged file with one of its inputs, shards merged twice, a file that already holds a
// copy, a file written before repetitions had ids), merge refuses it naming both files and writes
// nothing, and compare refuses to test it; merges of distinct measurements keep every
// repetition's id as it was measured.
func TestMergeCountsEachRepetitionOnce(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	measure := func(name string, extra ...string) *result.Document {
		doc, _ := runOK(t, at(name), append([]string{"run", "--target", "opa/inproc", "--workload", "nop", "--workers", "2",
			"--requests", "200", "--warmup", "0s", "--no-progress"}, extra...)...)
		return doc
	}
	a, b := measure("a.json", "--repeat", "2"), measure("b.json", "--repeat", "2")
	measure("c.json", "--repeat", "2")
	measure("s1.json", "--shard", "1/2")
	measure("s2.json", "--shard", "2/2")
	ab, _ := runOK(t, at("ab.json"), "merge", at("a.json"), at("b.json"))
	runOK(t, at("abc.json"), "merge", at("ab.json"), at("c.json"))
	sharded, _ := runOK(t, at("sm.json"), "merge", at("s1.json"), at("s2.json"))
	runOK(t, at("sm2.json"), "merge", at("s2.json"), at("s1.json"))

	// Every repetition was given an id when it was measured, and the merge kept them.
	if got, want := ids(ab), append(ids(a), ids(b)...); len(got) != 4 || !slices.Equal(got, want) || slices.Contains(got, "") {
		t.Fatalf("merged ids %q, want a's and b's %q", got, want)
	}
	if rep := sharded.Runs[0].Repetitions[0]; rep.ID == "" || len(rep.Parts) != 2 {
		t.Fatalf("a repetition merged from shards: id %q parts %q; want an id made of its 2 shards'", rep.ID, rep.Parts)
	}
	// Files written before ids existed: the same file without them, and one with a repetition
	// copied into it (as an old merge of a file with itself left it).
	legacy := stripIDs(t, at("a.json"), at("old.json"))
	legacy.Runs[0].Repetitions = append(legacy.Runs[0].Repetitions, legacy.Runs[0].Repetitions[0])
	if err := result.Write(at("copied.json"), legacy); err != nil {
		t.Fatal(err)
	}
	remeasuredCopy(t, at("a.json"), at("a-again.json"))

	for _, tc := range []struct {
		name string
		args []string
		exit int
		want string // in stderr; for a refusal, naming both files
	}{
		{"a file twice", []string{"merge", "a.json", "a.json"}, exitUsage, "a.json is given twice (documents 1 and 2)"},
		{"a file twice among others", []string{"merge", "a.json", "b.json", "a.json"}, exitUsage, "a.json is given twice (documents 1 and 3)"},
		{"a merged file with one of its inputs", []string{"merge", "ab.json", "b.json"}, exitUsage,
			"ab.json and " + at("b.json") + " hold the same repetition (id " + b.Runs[0].Repetitions[0].ID + ")"},
		{"an input with a merge of it", []string{"merge", "c.json", "abc.json"}, exitUsage, "c.json and " + at("abc.json") + " hold the same repetition"},
		{"a merge with a merge of it", []string{"merge", "abc.json", "ab.json"}, exitUsage, "abc.json and " + at("ab.json") + " hold the same repetition"},
		{"shards merged twice, in either order", []string{"merge", "sm.json", "sm2.json"}, exitUsage, "sm.json and " + at("sm2.json") + " hold the same repetition"},
		{"a shard twice", []string{"merge", "s1.json", "s1.json"}, exitUsage, "both shard 1/2"},
		{"a file without ids twice", []string{"merge", "old.json", "old.json"}, exitUsage, "old.json is given twice (documents 1 and 2)"},
		{"a file without ids and the file with them", []string{"merge", "old.json", "a.json"}, exitUsage, "(the same start time and latency histogram)"},
		{"a file holding a copy", []string{"merge", "copied.json", "b.json"}, exitUsage, "copied.json holds one repetition twice"},
		{"distinct measurements", []string{"merge", "a.json", "c.json"}, exitOK, ""},
		{"the same figures measured again", []string{"merge", "a.json", "a-again.json"}, exitOK, ""},
		{"compare a file with itself", []string{"compare", "a.json", "a.json"}, exitUsage, "compare: " + at("a.json") + " is given twice"},
		{"compare a merge with one of its inputs", []string{"compare", "ab.json", "b.json"}, exitUsage, "hold the same repetition"},
		{"compare a file holding a copy", []string{"compare", "copied.json", "b.json"}, exitUsage, "copied.json holds one repetition twice"},
		{"compare distinct measurements", []string{"compare", "a.json", "c.json"}, exitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{tc.args[0]}
			for _, f := range tc.args[1:] {
				args = append(args, at(f))
			}
			out := at(strings.ReplaceAll(tc.name, " ", "-") + ".json")
			if tc.args[0] == "merge" {
				args = append(args, "-o", out)
			}
			code, stdout, stderr := run(t, args...)
			if code != tc.exit || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want %d; stderr %q, want %q\n%s", code, tc.exit, stderr, tc.want, stdout)
			}
			_, err := os.Stat(out)
			switch {
			case tc.args[0] != "merge":
			case tc.exit != exitOK && err == nil:
				t.Errorf("refused, yet %s was written", out)
			case tc.exit == exitOK:
				doc, err := result.Read(out)
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, f := range tc.args[1:] {
					in, err := result.Read(at(f))
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, ids(in)...)
				}
				if got := ids(doc); !slices.Equal(got, want) {
					t.Errorf("merged ids %q, want the inputs' %q", got, want)
				}
			}
		})
	}
}

// ids are a document's repetition ids, run by run.
func ids(d *result.Document) []string {
	var out []string
	for _, r := range d.Runs {
		for _, rep := range r.Repetitions {
			out = append(out, rep.ID)
		}
	}
	return out
}

// stripIDs writes to dst the result at src as a version before ids wrote it, and returns it.
func stripIDs(t *testing.T, src, dst string) *result.Document {
	t.Helper()
	doc, err := result.Read(src)
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc.Runs {
		for j := range doc.Runs[i].Repetitions {
			doc.Runs[i].Repetitions[j].ID = ""
		}
	}
	if err := result.Write(dst, doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// remeasuredCopy writes to dst the result at src as if its figures had been measured again:
// every repetition with an id of its own and a start a nanosecond later. It returns dst.
func remeasuredCopy(t *testing.T, src, dst string) string {
	t.Helper()
	doc, err := result.Read(src)
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc.Runs {
		for j := range doc.Runs[i].Repetitions {
			rep := &doc.Runs[i].Repetitions[j]
			rep.ID = result.NewRepetitionID()
			if !rep.Started.IsZero() {
				rep.Started = rep.Started.Add(time.Nanosecond)
			}
			rep.ElapsedS += 1e-9
		}
	}
	if err := result.Write(dst, doc); err != nil {
		t.Fatal(err)
	}
	return dst
}
