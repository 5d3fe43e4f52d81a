package opalog

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

// A file given as inputs is read as the decision log it is, in each form OPA writes one, and
// refused when it is both a log and inputs.
func TestDetectDecisionLog(t *testing.T) {
	const (
		event    = `{"decision_id":"a","path":"authz/allow","input":{"u":1},"result":true}`
		envelope = `{"level":"info","msg":"Decision Log","time":"2026-01-01T00:00:00Z","decision_id":"b","path":"authz/allow","input":{"u":2},"result":false}`
		opaLine  = `{"level":"warning","msg":"OPA is running on a public (0.0.0.0) network interface"}`
		input    = `{"input":{"u":3},"expect":true}`
		bareIn   = `{"input":{"u":4}}`
	)
	gz := func(s string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(s))
		zw.Close()
		return b.Bytes()
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		file    string
		content []byte
		why     string // the reason said when it is a log; "" for inputs
		err     []string
	}{
		{"console lines in the logger's envelope, after OPA's own line", "console", []byte(opaLine + "\n" + envelope + "\n"), "line 2 is a decision-log event", nil},
		{"bare events", "bare", []byte(event + "\n" + event + "\n"), "line 1 is a decision-log event", nil},
		{"the log service's array", "array", []byte("[" + event + ",\n" + envelope + "]"), "a JSON array", nil},
		{"gzip'd console lines", "console.gz", gz(event + "\n"), "gzip'd, line 1 is a decision-log event", nil},
		{"inputs", "inputs", []byte("# comment\n" + input + "\n" + bareIn + "\n"), "", nil},
		{"inputs and events in one file, after blank lines", "mixed", []byte("\n \n" + input + "\n\n" + event + "\n"), "",
			[]string{"mixed:5 is a decision-log event", "mixed:3 an inputs line", "give a decision log with decision_log FILE, and inputs with inputs FILE"}},
		{"a line with both an event's id and an expectation", "both", []byte(`{"decision_id":"c","input":{},"result":true,"expect":true}` + "\n"), "",
			[]string{`both:1 has both a decision-log event's "decision_id" and an inputs line's "expect"`, "decision_log FILE"}},
		{"gzip'd inputs", "inputs.gz", gz(input + "\n"), "", []string{"gzip'd and not an OPA decision log"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.file)
			if err := os.WriteFile(p, tc.content, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := workload.UserSpec{Inputs: p}.DetectDecisionLog()
			if tc.err != nil {
				var se *workload.SettingError
				if err == nil || !errors.As(err, &se) || se.Setting != "inputs" {
					t.Fatalf("err %v, want a problem with the inputs setting", err)
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.why == "" {
				if got.DecisionLog != "" || got.Inputs != p || got.LogFromInputs != "" {
					t.Errorf("inputs taken for a log: %+v", got)
				}
				return
			}
			if got.DecisionLog != p || got.Inputs != "" || !strings.HasPrefix(got.LogFromInputs, tc.why) {
				t.Errorf("spec %+v, want the log %s, no inputs, and why starting %q", got, p, tc.why)
			}
			if _, err := workload.FromDecisionLog(got); err != nil {
				t.Errorf("the log detected does not replay: %v", err)
			}
		})
	}

	t.Run("a query beside a log given as inputs", func(t *testing.T) {
		p := filepath.Join(dir, "log.jsonl")
		os.WriteFile(p, []byte(event+"\n"), 0o644)
		_, err := workload.FromFiles(workload.UserSpec{Inputs: p, Query: "data.authz.allow"})
		if err == nil || !strings.Contains(err.Error(), "query and inputs "+p+" (a decision log): a replay asks each logged event's path") {
			t.Errorf("err %v", err)
		}
	})

	t.Run("one workload wanted of a log of two paths", func(t *testing.T) {
		p := filepath.Join(dir, "two.jsonl")
		os.WriteFile(p, []byte(event+"\n"+strings.Replace(event, "authz/allow", "authz/other", 1)+"\n"), 0o644)
		_, err := workload.FromFiles(workload.UserSpec{Inputs: p})
		if err == nil || !strings.Contains(err.Error(), p+" has decisions of 2 paths (authz/allow, authz/other), a workload each") {
			t.Errorf("err %v", err)
		}
	})

	t.Run("a replay setting with inputs that are not a log", func(t *testing.T) {
		p := filepath.Join(dir, "in.jsonl")
		os.WriteFile(p, []byte(input+"\n"), 0o644)
		_, err := workload.FromFiles(workload.UserSpec{Inputs: p, DecisionField: "ok"})
		if err == nil || !strings.Contains(err.Error(), "decision_field applies to a replayed decision log, and inputs "+p+" is inputs, not a log") {
			t.Errorf("err %v", err)
		}
	})
}

// FuzzDetectDecisionLog: whatever the file given as inputs holds, detection returns a spec or
// an error, never panics; a spec taken for a log names the file as the log, with a reason, and
// no inputs; one left as inputs is unchanged.
func FuzzDetectDecisionLog(f *testing.F) {
	f.Add([]byte(`{"decision_id":"a","path":"x/allow","input":{},"result":true}` + "\n"))
	f.Add([]byte(`{"input":{},"expect":true}` + "\n" + `{"decision_id":"a"}`))
	f.Add([]byte("[1, 2]"))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "in")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := workload.UserSpec{Inputs: p}.DetectDecisionLog()
		switch {
		case err != nil:
		case got.DecisionLog != "":
			if got.DecisionLog != p || got.Inputs != "" || got.LogFromInputs == "" {
				t.Fatalf("taken for a log: %+v", got)
			}
		case got.Inputs != p || got.LogFromInputs != "":
			t.Fatalf("left as inputs, changed: %+v", got)
		}
	})
}
