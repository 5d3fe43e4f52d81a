package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// Scale-out flags given wrong are refused before anything runs, naming the flag.
func TestScaleOutUsageErrors(t *testing.T) {
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	far := time.Now().Add(25 * time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"shard out of range", []string{"run", "--shard", "3/2"}, `--shard: segment "3/2": i must be from 1 to N (2), got 3`},
		{"shard not i/N", []string{"run", "--shard", "2"}, `--shard: segment "2": want i/N`},
		{"start-at in the past", []string{"run", "--shard", "1/2", "--start-at", past}, "--start-at " + past + " is in the past"},
		{"start-at too far", []string{"run", "--shard", "1/2", "--start-at", far}, "more than 24h0m0s"},
		{"start-at not a time", []string{"run", "--shard", "1/2", "--start-at", "18:00"}, `--start-at "18:00": want an RFC 3339 time`},
		{"start-at without shard", []string{"run", "--start-at", far}, "give --shard i/N too"},
		{"more shards than workers", []string{"run", "--target", "opa/inproc", "--workers", "2", "--shard", "3/3"}, "2 workers cannot be split 3 ways"},
		{"replicas with url", []string{"run", "--workload", "rbac", "--replicas", "2", "--url", "http://127.0.0.1:1"}, "--replicas starts that many servers; with --url it starts none"},
		{"replicas with port", []string{"run", "--workload", "rbac", "--replicas", "2", "--port", "18181"}, "--replicas listen on a free port each; drop --port"},
		{"replicas out of range", []string{"run", "--workload", "rbac", "--replicas", "-1"}, "--replicas -1: want 1 or more"},
		{"replicas on an in-process target", []string{"run", "--target", "opa/inproc", "--replicas", "2"}, "--replicas applies to the opa/server and cedar/server targets"},
		{"merge without -o", []string{"merge", "a.json", "b.json"}, "merge needs -o FILE"},
		{"merge no file", []string{"merge", "-o", "m.json"}, "requires at least 1 arg(s)"},
		{"shard-base 0 out of range", []string{"run", "--shard", "3/3", "--shard-base", "0"}, "--shard 3/3 with --shard-base 0 (4/3 from 1): segment \"4/3\": i must be from 1 to N (3), got 4"},
		{"shard-base 2", []string{"run", "--shard", "1/3", "--shard-base", "2"}, "--shard-base 2: want 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

// Two closed-loop shards of a request budget, run by the CLI and merged by it, are the whole:
// every request of the budget once, the workers split 2 + 1, the shards named in the merged
// file; a shard given twice or one missing is refused, naming the files.
func TestShardsMergeThroughTheCLI(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i, want := range []uint64{200, 100} {
		out := filepath.Join(dir, []string{"s1.json", "s2.json"}[i])
		// The second as a Kubernetes Indexed Job numbers it: from 0.
		shard := []string{"--shard=1/2", "--shard=1/2 --shard-base=0"}[i]
		doc, _ := runOK(t, out, append([]string{"run", "--target", "opa/inproc", "--workload", "rbac", "--workers", "3", "--requests", "300",
			"--warmup", "0s", "--no-progress"}, strings.Fields(shard)...)...)
		if doc.Shard == nil || doc.Shard.Index != i+1 || doc.Shard.Count != 2 {
			t.Fatalf("shard recorded %+v, want %d/2", doc.Shard, i+1)
		}
		r := doc.Runs[0]
		if r.Summary.Requests != want || r.Load.Workers != 3 {
			t.Errorf("shard %d/2: %d requests, load %+v; want %d of the 300", i+1, r.Summary.Requests, r.Load, want)
		}
		if wantWorkers := []int{2, 1}[i]; r.Load.ShardWorkers != wantWorkers {
			t.Errorf("shard %d/2 ran %d workers, want %d of 3", i+1, r.Load.ShardWorkers, wantWorkers)
		}
		files = append(files, out)
	}
	merged := filepath.Join(dir, "merged.json")
	code, stdout, stderr := run(t, "merge", files[1], files[0], "-o", merged)
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	// The shards ran one after the other, not together: the merge says so, and by how much.
	if !strings.Contains(stderr, "warning: run 1 (rbac on opa/inproc), repetition 1: the shards' measured windows never overlapped: "+files[1]+" began measuring ") ||
		!strings.Contains(stderr, "after "+files[0]+" had ended") {
		t.Errorf("the merge does not say its shards ran apart:\n%s", stderr)
	}
	doc, err := result.Read(merged)
	if err != nil {
		t.Fatal(err)
	}
	r := doc.Runs[0]
	if r.Summary.Requests != 300 || r.Summary.OK != 300 || len(doc.Shards) != 2 || doc.Shards[0].File != files[0] {
		t.Errorf("merged: %d requests (%d ok), shards %+v; want the whole budget of 300 from s1 and s2", r.Summary.Requests, r.Summary.OK, doc.Shards)
	}
	if !strings.Contains(stdout, "merged from 2 shards") {
		t.Errorf("the table does not say it was merged from shards:\n%s", stdout)
	}
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"twice", []string{files[0], files[0]}, "are both shard 1/2: overlapping shards"},
		{"missing", []string{files[0], merged}, merged + " a whole run"},
	} {
		code, _, stderr := run(t, append(append([]string{"merge"}, tc.files...), "-o", filepath.Join(dir, "x.json"))...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tc.name, code, stderr, exitUsage, tc.want)
		}
	}
}
