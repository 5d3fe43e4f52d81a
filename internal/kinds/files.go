package kinds

import (
	"context"
	"os/exec"
	"time"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/sut"
)

// launched is a server a target started through sut's one lifecycle, watched from then on:
// Died is closed if it exits before it is stopped, and Err says why. Zero until launch, when
// the target measures a server someone else runs: nothing to watch.
type launched struct {
	server  *sut.Server
	died    chan struct{}
	diedErr error
}

// launch starts cmd (pinned to pin, ready when probe says so, within within or sut's default
// when 0) and watches it.
func (l *launched) launch(ctx context.Context, name string, cmd *exec.Cmd, pin []int, probe sut.Probe, within time.Duration) error {
	srv, err := sut.StartServer(ctx, sut.Launch{Name: name, Cmd: cmd, Pin: pin, Probe: probe, ReadyWithin: within})
	if err != nil {
		return err
	}
	l.server, l.died = srv, make(chan struct{})
	go func() {
		if err, ok := <-srv.Done(); ok {
			l.diedErr = err
			close(l.died)
		}
	}()
	return nil
}

func (l *launched) Died() <-chan struct{} { return l.died }
func (l *launched) Err() error            { return l.diedErr }

// describe fills in what a run records of a server authzbench started: its version, process,
// command line and start (Startup); nothing for one it did not.
func (l *launched) describe(info *Info, version string) {
	if l.server != nil {
		info.Version = version
		info.PID = l.server.PID()
		info.Command = l.server.Command()
		ready, mem := l.server.Ready()
		info.Startup = &result.Startup{ReadySeconds: ready.Seconds(), PeakMB: megabytes(mem.Peak), RSSMB: megabytes(mem.Resident)}
	}
}

// megabytes is bytes in MiB, as the result's other memory figures (rss_max_mb) are.
func megabytes(b uint64) float64 { return float64(b) / (1 << 20) }

// stop stops the server, if one was launched.
func (l *launched) stop() error {
	if l.server == nil {
		return nil
	}
	return l.server.Stop(5 * time.Second)
}
