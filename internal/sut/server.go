package sut

import (
	"context"
	"os/exec"
	"slices"
	"sync/atomic"
	"time"
)

// Launch describes a server for authzbench to start, whatever protocol it speaks: the command,
// the CPUs to pin it to, and how to tell it is ready.
type Launch struct {
	Name  string    // for messages: "opa server"
	Cmd   *exec.Cmd // the server's command line
	Pin   []int     // CPUs to run it on; empty leaves it free
	Probe Probe     // asked until the server is ready
	// ReadyWithin bounds the wait for readiness; 60 s when zero (a large policy takes a while
	// to compile before the server listens).
	ReadyWithin time.Duration
}

// Server is a launched server that answered its probe: watched from then on until it is
// stopped.
type Server struct {
	proc     *Process
	command  []string
	done     chan error
	stopping atomic.Bool
	// ready is how long it took from its start to its first ready answer (loading its policy
	// and data, or activating its bundles), and readyMemory its memory then; zero where /proc
	// cannot say.
	ready       time.Duration
	readyMemory Memory
}

// StartServer launches l.Cmd, pinned to l.Pin, and waits until l.Probe says it is ready. A
// server that exits first fails with its StartError (its first error line) at once; one that
// is never ready is stopped and fails with its last output.
func StartServer(ctx context.Context, l Launch) (*Server, error) {
	command := slices.Clone(l.Cmd.Args)
	cmd := l.Cmd
	if len(l.Pin) > 0 {
		var err error
		if cmd, err = Pinned(cmd, l.Pin); err != nil {
			return nil, err
		}
	}
	started := time.Now()
	p, err := Start(l.Name, cmd)
	if err != nil {
		return nil, err
	}
	within := l.ReadyWithin
	if within <= 0 {
		within = 60 * time.Second
	}
	if err := WaitReady(ctx, l.Probe, p, within); err != nil {
		p.Stop(5 * time.Second)
		return nil, err
	}
	s := &Server{proc: p, command: command, done: make(chan error, 1), ready: time.Since(started)}
	s.readyMemory, _ = ReadMemory(p.PID())
	go func() {
		<-p.Exited()
		if !s.stopping.Load() {
			s.done <- p.ExitError()
		}
		close(s.done)
	}()
	return s, nil
}

// PID is the server's process id (the pinning wrapper's, which execs the server itself).
func (s *Server) PID() int { return s.proc.PID() }

// Ready is how long the server took from its start to its first ready answer, and its memory
// at that moment: its peak is the peak of its start, loading its data included.
func (s *Server) Ready() (time.Duration, Memory) { return s.ready, s.readyMemory }

// Command is the server's command line as given, before any pinning wrapper.
func (s *Server) Command() []string { return s.command }

// Done delivers, once, why the server exited if it did so before Stop, and is closed when it
// has exited.
func (s *Server) Done() <-chan error { return s.done }

// Stop ends the server (SIGTERM, then SIGKILL after grace); safe to call more than once.
func (s *Server) Stop(grace time.Duration) error {
	s.stopping.Store(true)
	return s.proc.Stop(grace)
}
