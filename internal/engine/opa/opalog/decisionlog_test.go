package opalog

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
	"time"
)

func TestReadDecisionLogForms(t *testing.T) {
	const (
		bare     = `{"decision_id":"a","path":"authz/allow","input":{"u":1},"result":true,"timestamp":"2026-01-01T00:00:00.002Z"}`
		envelope = `{"level":"info","msg":"Decision Log","time":"2026-01-01T00:00:00Z","decision_id":"b","path":"authz/allow","input":{"u":2},"result":false,"timestamp":"2026-01-01T00:00:00.001Z","type":"openpolicyagent.org/decision_logs"}`
	)
	lines := bare + "\n" + envelope + "\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("[" + bare + ",\n" + envelope + "]"))
	zw.Close()
	for _, tc := range []struct {
		name    string
		content []byte
	}{
		{"console lines", []byte(lines)},
		{"the log service's arrays", []byte("[" + bare + "]\n[" + envelope + "]\n")},
		{"gzip'd arrays", gz.Bytes()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "log")
			os.WriteFile(p, tc.content, 0o644)
			l, err := ReadDecisionLog(p, "")
			if err != nil {
				t.Fatal(err)
			}
			evs := l.Events["authz/allow"]
			if len(evs) != 2 || l.SkippedTotal() != 0 {
				t.Fatalf("events %+v, skipped %v", evs, l.Skipped)
			}
			// Sorted by timestamp: b (1 ms) before a (2 ms), and the one out of order said.
			if evs[0].DecisionID != "b" || evs[0].Allow || evs[1].DecisionID != "a" || !evs[1].Allow || l.OutOfOrder != 1 {
				t.Errorf("events %+v, out of order %d", evs, l.OutOfOrder)
			}
			if evs[1].Timestamp.Sub(evs[0].Timestamp) != time.Millisecond {
				t.Errorf("timestamps %v %v", evs[0].Timestamp, evs[1].Timestamp)
			}
			if q := l.Query("authz/allow"); q != "data.authz.allow" {
				t.Errorf("query %q", q)
			}
		})
	}
}

func TestReadDecisionLogObjectResults(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	os.WriteFile(p, []byte(`{"decision_id":"a","path":"envoy/authz/allow","input":{},"result":{"allowed":true,"headers":{"x":"1"}}}
{"decision_id":"b","path":"envoy/authz/allow","input":{},"result":{"allowed":false}}
{"decision_id":"c","path":"envoy/authz/allow","input":{},"result":{"headers":{}}}
{"decision_id":"d","path":"envoy/authz/allow","input":{},"result":["a"]}
`), 0o644)
	l, err := ReadDecisionLog(p, "")
	if err != nil {
		t.Fatal(err)
	}
	evs := l.Events["envoy/authz/allow"]
	if len(evs) != 2 || !evs[0].Allow || evs[1].Allow {
		t.Errorf("events %+v", evs)
	}
	if l.Skipped[skipNoField] != 1 || l.Skipped[skipNonBool] != 1 {
		t.Errorf("skipped %v", l.Skipped)
	}
	if q := l.Query("envoy/authz/allow"); q != "data.envoy.authz.allow.allowed" {
		t.Errorf("query %q", q)
	}
	l.objects["envoy/ext-authz/allow"] = false
	if q := l.Query("envoy/ext-authz/allow"); q != `data.envoy["ext-authz"].allow` {
		t.Errorf("query %q", q)
	}
	if l, err := ReadDecisionLog(p, "ok"); err == nil || !strings.Contains(err.Error(), "object result without the compared field") {
		t.Errorf("with field ok: %v, %+v", err, l)
	}
}

func TestReadDecisionLogErrorsNameTheLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "log")
	os.WriteFile(p, []byte("[{\"decision_id\":\"a\"},\n{\"decision_id\": }]\n"), 0o644)
	if _, err := ReadDecisionLog(p, ""); err == nil || !strings.Contains(err.Error(), p+":2") {
		t.Errorf("broken array: %v", err)
	}
	// An array of arrays on one line: each inner array is refused, and the line said once.
	os.WriteFile(p, []byte(`[[{"decision_id":"a"}],[{"decision_id":"b"}]]`+"\n"), 0o644)
	if _, err := ReadDecisionLog(p, ""); err == nil || strings.Count(err.Error(), p+":1: want a decision-log event, a JSON object, got a list") != 1 {
		t.Errorf("nested arrays: %v; want line 1 said once", err)
	}
	changes := filepath.Join(dir, "changes")
	os.WriteFile(p, []byte(`{"decision_id":"a","path":"x/allow","input":{},"result":true}`+"\n"), 0o644)
	os.WriteFile(changes, []byte("a\nnope\n"), 0o644)
	_, err := workload.FromDecisionLog(workload.UserSpec{DecisionLog: p, ExpectChanges: changes})
	if err == nil || !strings.Contains(err.Error(), changes+`:2: decision "nope"`) {
		t.Errorf("unknown reviewed id: %v", err)
	}
}

// FuzzReadDecisionLog: whatever the file holds, the reader returns events or an error, never
// panics, and every event it returns has an input, a path and an id.
func FuzzReadDecisionLog(f *testing.F) {
	f.Add([]byte(`{"decision_id":"a","path":"x/allow","input":{},"result":true}` + "\n"))
	f.Add([]byte(`[{"decision_id":"a","path":"x/allow","input":{},"result":{"allowed":false}}]`))
	f.Add([]byte("{\"level\":\"info\"}\nnot json\n"))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "log")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := ReadDecisionLog(p, "")
		if err != nil {
			return
		}
		for path, evs := range l.Events {
			for _, e := range evs {
				if e.Path != path || path == "" || len(e.Input) == 0 || e.Source == "" {
					t.Fatalf("event %+v under path %q", e, path)
				}
			}
		}
	})
}
