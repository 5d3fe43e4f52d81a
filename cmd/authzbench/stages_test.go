package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --stages (and a scenario's stages key) runs one continuous open-loop run whose rate follows
// the stages, with the constant rate's exact accounting: every due send sent or unsent, and
// exactly the area under the rate due in the window. The result records the stages, the table
// labels the load by them, and a bad stage is refused before any load, named by flag or line.
func TestStagesRunAsOneScheduleAndAreRecorded(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fast := []string{"--target", "opa/inproc", "--workload", "nop", "--warmup", "0s", "--connections", "4", "--no-progress"}
	// 0 to 1000/s over 200 ms is 100 sends, then 1000/s for 200 ms 200 more.
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"flag", append([]string{"run", "--stages", "200ms:0-1000,200ms:1000"}, fast...)},
		{"file", []string{"run", "--no-progress", "-f", write("stages.yaml", "floor: false\nload:\n  warmup: 0s\n  connections: 4\n  stages: [200ms:0-1000, 200ms:1000]\nworkloads: [nop]\ntargets: [opa/inproc]\n")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, stdout := runOK(t, filepath.Join(dir, tc.name+".json"), tc.args...)
			r := doc.Runs[0]
			if r.Load.Stages != "200ms:0-1000,200ms:1000" || r.Load.Rate != 0 || r.Load.Workers != 0 || r.Load.DurationS != 0.4 {
				t.Errorf("recorded load %+v, want the stages over their 0.4 s", r.Load)
			}
			o := r.Summary.Open
			if o == nil || o.Intended != 300 || o.Sent+o.Unsent != 300 || r.Summary.Requests != 300 {
				t.Fatalf("open-loop accounting %+v, %d requests; want 300 due, each sent or unsent", o, r.Summary.Requests)
			}
			if !strings.Contains(stdout, "stages 0→1000/200ms, 1000/200ms x4") {
				t.Errorf("the table does not label the load by its stages:\n%s", stdout)
			}
		})
	}

	// Shards deal the stages' sends out between them: three add up to the whole's 300 exactly,
	// and merge into one run of the stages.
	t.Run("shards", func(t *testing.T) {
		var files []string
		var sum int64
		for i := 1; i <= 3; i++ {
			out := filepath.Join(dir, fmt.Sprintf("shard%d.json", i))
			doc, _ := runOK(t, out, append([]string{"run", "--stages", "200ms:0-1000,200ms:1000", "--shard", fmt.Sprintf("%d/3", i)}, fast...)...)
			sum += doc.Runs[0].Summary.Open.Intended
			files = append(files, out)
		}
		merged, stdout := runOK(t, filepath.Join(dir, "merged.json"), append([]string{"merge"}, files...)...)
		r := merged.Runs[0]
		if sum != 300 || r.Summary.Open.Intended != 300 || r.Load.Stages != "200ms:0-1000,200ms:1000" {
			t.Errorf("shards had %d due, merged %d (%+v); want the whole's 300 under the stages", sum, r.Summary.Open.Intended, r.Load)
		}
		if !strings.Contains(stdout, "stages 0→1000/200ms, 1000/200ms x4") {
			t.Errorf("the merged table does not label the stages:\n%s", stdout)
		}
	})

	for _, tc := range []struct {
		name      string
		args      []string
		want, not string
	}{
		{"a stage that is no stage", append([]string{"run", "--stages", "200ms:0-1000,fast"}, fast...), `--stages: stage 2 "fast": want DURATION:RATE or DURATION:FROM-TO`, ""},
		{"a stage above the ceiling", append([]string{"run", "--stages", "1s:5e9"}, fast...), "--stages: stage 1 (1s:5e+09): rate 5e+09/s is above the pacer's ceiling", ""},
		{"stages with --rate", append([]string{"run", "--stages", "1s:100", "--rate", "100"}, fast...), "--stages and --rate given together", ""},
		// Two schedules in one place, and no word of the workers the flags never gave.
		{name: "stages with --rates", args: append([]string{"run", "--stages", "1s:100", "--rates", "100,200"}, fast...),
			want: "--stages and --rates given together: each is a whole open-loop schedule", not: "--workers"},
		{"stages with --workers", append([]string{"run", "--stages", "1s:100", "--workers", "2"}, fast...), "--stages and --workers given together", ""},
		{"stages with another --duration", append([]string{"run", "--stages", "1s:100", "--duration", "2s"}, fast...), "--duration 2s is not the 1s the stages last", ""},
		{"a file's bad stage", []string{"run", "-f", write("bad.yaml", "workloads: [nop]\ntargets:\n  - target: opa/inproc\n    load:\n      stages: 1s:100,1s:x\n")},
			`bad.yaml:5: stages: stage 2 "1s:x": rate "x" is not a number`, ""},
		{"a file's stages and workers", []string{"run", "-f", write("both.yaml", "load: {workers: 2, stages: '1s:100'}\nworkloads: [nop]\ntargets: [opa/inproc]\n")},
			"both.yaml:1: stages and workers given together", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			code, _, stderr := run(t, append(tc.args, "-o", out)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) || (tc.not != "" && strings.Contains(stderr, tc.not)) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q (and no %q)", code, stderr, exitUsage, tc.want, tc.not)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused load left %s", out)
			}
		})
	}
}
