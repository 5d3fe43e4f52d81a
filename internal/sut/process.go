// Package sut starts, watches and stops the systems under test that authzbench launches
// itself: engines' servers and the loopback ports they listen on. How to run an engine's own
// program (OPA's command line, a server binary) is the engine's package's.
//
// It knows nothing about policies or load; it gives each process a clean lifecycle: start with
// captured stderr, notice an early exit, stop by PID (SIGTERM, then SIGKILL). A server, whatever
// protocol it speaks, goes through one lifecycle (StartServer): launched, pinned, probed until
// ready (a Probe per protocol: HTTP and TCP here, each with optional TLS), watched, stopped.
package sut

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a server process authzbench started.
type Process struct {
	Name   string
	cmd    *exec.Cmd
	stderr *tail
	done   chan struct{}
	err    error // exit status, valid once done is closed

	stopping sync.Once
}

// Start launches cmd, capturing the tail of its stderr and stdout.
func Start(name string, cmd *exec.Cmd) (*Process, error) {
	p := &Process{Name: name, cmd: cmd, stderr: newTail(8 << 10), done: make(chan struct{})}
	cmd.Stdout = p.stderr
	cmd.Stderr = p.stderr
	// Own process group, so a Ctrl-C on the terminal reaches authzbench, which then stops the
	// server itself in order, and so a stop reaches the server's children too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// ExitError describes how the process ended, with the tail of its output.
func (p *Process) ExitError() error {
	return fmt.Errorf("%s (pid %d) exited: %v; last output:\n%s", p.Name, p.PID(), p.err, p.Tail())
}

// Tail returns the last lines the process wrote.
func (p *Process) Tail() string { return strings.TrimRight(p.stderr.String(), "\n") }

// Stop sends SIGTERM to the process group, waits up to grace, then SIGKILLs it.
func (p *Process) Stop(grace time.Duration) error {
	var err error
	p.stopping.Do(func() {
		select {
		case <-p.done:
			return
		default:
		}
		pgid := -p.PID()
		if e := syscall.Kill(pgid, syscall.SIGTERM); e != nil && !errors.Is(e, syscall.ESRCH) {
			err = fmt.Errorf("stop %s (pid %d): %w", p.Name, p.PID(), e)
		}
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = syscall.Kill(pgid, syscall.SIGKILL)
			<-p.done
		}
	})
	return err
}

// StartError says a server exited before it was ready. It started and read its arguments, so
// what it says first is most often about them: a --sut-arg or --log-level it rejects, a policy it
// cannot load. FirstError is that line alone, not the usage text that tends to follow it.
type StartError struct {
	Name       string
	Status     error // how it exited
	FirstError string
}

func (e *StartError) Error() string {
	return fmt.Sprintf("%s exited before it was ready (%v): %s", e.Name, e.Status, e.FirstError)
}

// startError describes the process's exit before it was ready.
func (p *Process) startError() *StartError {
	return &StartError{Name: p.Name, Status: p.err, FirstError: firstErrorLine(p.stderr.Head())}
}

// firstErrorLine is the first line that mentions an error, or else the first line written.
func firstErrorLine(out string) string {
	var first string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if first == "" {
			first = line
		}
		if strings.Contains(strings.ToLower(line), "error") {
			return line
		}
	}
	if first == "" {
		return "no output"
	}
	return first
}

// tail keeps the last n bytes written to it, and the first headSize: a server's first error
// line comes first, and the usage text after it can be longer than the tail.
type tail struct {
	mu   sync.Mutex
	head []byte
	buf  []byte
	n    int
}

const headSize = 4 << 10

func newTail(n int) *tail { return &tail{n: n} }

// Head is the first bytes written.
func (t *tail) Head() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head)
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := headSize - len(t.head); room > 0 {
		t.head = append(t.head, b[:min(room, len(b))]...)
	}
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.n; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
