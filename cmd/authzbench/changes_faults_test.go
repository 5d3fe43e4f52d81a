package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/change/changetest"
)

// Ctrl-C while a write is in flight: the run exits 130, its result is kept and marked
// interrupted, and the write the service never acknowledged is counted as interrupted, never as
// applied.
func TestChangesInterruptedWriteNotCounted(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of seconds")
	}
	dir := t.TempDir()
	inputs, changes, s := changesFiles(t, dir, 10)
	svc := &changetest.Service{Stream: s}
	var holding atomic.Bool
	inner := svc.Handler()
	// The second write hangs until its client gives up: it is in flight when Ctrl-C comes.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/write" {
			var q struct{ Version int }
			if err := json.NewDecoder(r.Body).Decode(&q); err == nil && q.Version == 2 {
				holding.Store(true)
				select {
				case <-r.Context().Done():
				case <-time.After(30 * time.Second):
				}
				return
			}
			if err := svc.Apply(q.Version); err != nil {
				http.Error(w, err.Error(), http.StatusConflict)
				return
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := interruptWhen(t, func(string) bool { return holding.Load() },
		"run", "--target", "http", "--url", srv.URL+"/check", "--decision-path", "/allow", "--version-path", "/version",
		"--body", `{"input": {{input.input}}}`, "--inputs", inputs, "--changes", changes, "--change-rate", "10/s",
		"--workers", "2", "--duration", "20s", "--warmup", "0s", "--no-progress", "-o", out)
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, exitInterrupted, stdout, stderr)
	}
	doc := readResult(t, out)
	r := doc.Runs[0]
	if !doc.Interrupted || !r.Partial {
		t.Errorf("interrupted %v, partial %v: want the result marked", doc.Interrupted, r.Partial)
	}
	if r.Changes == nil || r.Changes.Applied != 1 {
		t.Fatalf("changes %+v: want the first write applied, the one in flight not", r.Changes)
	}
	if w := r.Operations[0]; w.OK != 1 || w.Interrupted != 1 || w.Errors != 0 {
		t.Errorf("writes %+v: want 1 acknowledged, 1 interrupted, none failed", w)
	}
	if r.Summary.WrongDecision != 0 {
		t.Errorf("%d wrong decisions", r.Summary.WrongDecision)
	}
}

// The target dies mid-run, writes and checks with it: the result is kept and marked, the run
// fails, and no write is counted applied that the target did not acknowledge.
func TestChangesTargetDiesMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of seconds")
	}
	dir := t.TempDir()
	inputs, changes, s := changesFiles(t, dir, 40)
	svc := &changetest.Service{Stream: s}
	srv := httptest.NewServer(svc.Handler())
	defer srv.Close()
	// The target stops answering anything once its fifth write is acknowledged: new
	// connections are refused and the open ones closed.
	go func() {
		for svc.Acked() < 5 {
			time.Sleep(5 * time.Millisecond)
		}
		srv.Listener.Close()
		srv.CloseClientConnections()
	}()
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := run(t, "run", "--target", "http", "--url", srv.URL+"/check", "--decision-path", "/allow", "--version-path", "/version",
		"--body", `{"input": {{input.input}}}`, "--inputs", inputs, "--changes", changes, "--change-rate", "20/s",
		"--workers", "2", "--duration", "4s", "--warmup", "0s", "--no-progress", "-o", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	r := readResult(t, out).Runs[0]
	c := r.Changes
	if c == nil || !r.Partial || c.WriteError == "" {
		t.Fatalf("partial %v, changes %+v: want the result kept, partial, naming the failed write", r.Partial, c)
	}
	// The service may acknowledge one more write between its fifth and the close.
	if got := svc.Acked(); c.Applied > got || c.Applied < 5 {
		t.Errorf("%d applied, the service acknowledged %d", c.Applied, got)
	}
	if w := r.Operations[0]; w.OK != uint64(c.Applied) || w.Errors+w.Interrupted == 0 {
		t.Errorf("writes %+v, %d applied: want the failed write counted, not applied", w, c.Applied)
	}
	if !strings.Contains(stderr, "not applied") {
		t.Errorf("stderr does not name the write not applied:\n%s", stderr)
	}
}
