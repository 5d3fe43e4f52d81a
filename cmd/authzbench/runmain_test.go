package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// runMain is run without cobra: its exit status, its writers and its Ctrl-C are the caller's.
func TestRunMainTakesItsWritersAndInterrupts(t *testing.T) {
	t.Run("bad input exits 2 on the given stderr", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := runMain([]string{"--target", "opa/inproc", "--workload", "nop", "--replicas", "2", "-o", filepath.Join(t.TempDir(), "r.json")}, &out, &errb, nil)
		if code != exitUsage || !strings.Contains(errb.String(), "--replicas applies to the opa/server") || out.Len() != 0 {
			t.Errorf("exit %d, stdout %q, stderr %q; want 2 and --replicas refused on stderr", code, out.String(), errb.String())
		}
		errb.Reset()
		if code := runMain([]string{"--workers", "x"}, &out, &errb, nil); code != exitUsage || !strings.Contains(errb.String(), "--workers x: want") {
			t.Errorf("exit %d, stderr %q; want 2 naming --workers", code, errb.String())
		}
	})
	t.Run("an output onto a file an option flag names is refused", func(t *testing.T) {
		// --opa-bin is declared a file (kinds.Option.File): run reads it, so -o may not replace it.
		opa := filepath.Join(t.TempDir(), "opa")
		script := "#!/bin/sh\necho 'Version: 1.22.2'\n"
		if err := os.WriteFile(opa, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := runMain([]string{"--target", "opa/server", "--workload", "nop", "--opa-bin", opa, "-o", opa}, &out, &errb, nil)
		if code != exitUsage || !strings.Contains(errb.String(), "which this command reads (--opa-bin): an output never replaces an input") {
			t.Errorf("exit %d, stderr %q; want 2, -o refused onto --opa-bin", code, errb.String())
		}
		if b, err := os.ReadFile(opa); err != nil || string(b) != script {
			t.Errorf("--opa-bin file now %q (%v), want it untouched", b, err)
		}
	})
	t.Run("an interrupt sent through notify keeps the partial result", func(t *testing.T) {
		if testing.Short() {
			t.Skip("measures for a second")
		}
		path := filepath.Join(t.TempDir(), "r.json")
		sigs := make(chan chan<- os.Signal, 1)
		notify := func(c chan<- os.Signal) { sigs <- c }
		var out bytes.Buffer
		var errb syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- runMain([]string{"--target", "opa/inproc", "--workload", "nop", "--warmup", "0s", "--duration", "30s", "--no-progress", "-o", path}, &out, &errb, notify)
		}()
		var c chan<- os.Signal
		select {
		case c = <-sigs:
		case code := <-done:
			t.Fatalf("run ended (exit %d) without listening for Ctrl-C through notify: %s", code, errb.String())
		case <-time.After(60 * time.Second):
			t.Fatal("run never listened for Ctrl-C through notify")
		}
		for deadline := time.Now().Add(60 * time.Second); !strings.Contains(errb.String(), "authzbench: scenario"); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("run never started its load: %s", errb.String())
			}
		}
		// Long enough for the load to have begun on a busy machine: an interrupt before it would
		// leave nothing measured to keep.
		time.Sleep(2 * time.Second)
		c <- os.Interrupt
		var code int
		select {
		case code = <-done:
		case <-time.After(25 * time.Second):
			t.Fatal("run did not stop on the interrupt sent through notify")
		}
		if code != exitInterrupted {
			t.Fatalf("exit %d, want %d; stderr: %s", code, exitInterrupted, errb.String())
		}
		doc, err := result.Read(path)
		if err != nil {
			t.Fatalf("partial result: %v", err)
		}
		if !doc.Interrupted || len(doc.Runs) != 1 || doc.Runs[0].Summary.OK == 0 {
			ok := -1
			if len(doc.Runs) > 0 {
				ok = int(doc.Runs[0].Summary.OK)
			}
			t.Errorf("result interrupted %v with %d runs, the first with %d ok; want the partial run kept and marked", doc.Interrupted, len(doc.Runs), ok)
		}
	})
}

// A --generator-procs above the machine's cores is taken as given and said: it was recorded as
// 1000 on a 2-core machine without a word.
func TestGeneratorProcsAboveTheCoresIsSaid(t *testing.T) {
	over := runtime.NumCPU() + 1
	code, _, stderr := run(t, "run", "--target", "opa/inproc", "--workload", "nop", "--generator-procs", strconv.Itoa(over), "--check-only")
	if want := fmt.Sprintf("warning: --generator-procs %d: this machine has %d cores", over, runtime.NumCPU()); code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	if _, _, stderr := run(t, "run", "--target", "opa/inproc", "--workload", "nop", "--generator-procs", "1", "--check-only"); strings.Contains(stderr, "generator-procs") {
		t.Errorf("--generator-procs 1 warned of: %s", stderr)
	}
}
