package kinds

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	engineopa "github.com/authzbench/authzbench/internal/engine/opa"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

// workDir makes a directory for a workload's files under the run's temporary directory (the
// system's when empty).
func workDir(tempDir string) (string, error) {
	dir, err := os.MkdirTemp(tempDir, "authzbench-workload-")
	if err != nil {
		return "", fmt.Errorf("create directory for workload files: %w", err)
	}
	return dir, nil
}

// opaFiles compiles the workload's Rego in-process first (once per run, shared with the other
// OPA targets), so a policy error is reported with file:line before any OPA process starts, then
// writes its policy and data files under a new directory for the processes that read them.
func opaFiles(ctx context.Context, common Common, w *workload.Workload) (dir string, policies, data []string, err error) {
	if _, err := engineopa.Compiled(ctx, common.Prepared, w); err != nil {
		return "", nil, nil, err
	}
	if dir, err = workDir(common.TempDir); err != nil {
		return "", nil, nil, err
	}
	policies, data, err = w.Files(dir)
	return dir, policies, data, err
}

// opaRunPaths are the policy and data paths as `opa run` takes them: a bundle (a policy
// directory with a .manifest, workload.SplitBundles) is read only with --bundle, which takes
// every path for one (the workload refuses loose files beside a bundle, so there are none here).
func opaRunPaths(policies, data []string) []string {
	paths := append(append([]string{}, policies...), data...)
	if bundles, _ := workload.SplitBundles(policies); len(bundles) > 0 {
		return append([]string{"--bundle"}, paths...)
	}
	return paths
}

// launched is a server a target started through sut's one lifecycle, watched from then on:
// Died is closed if it exits before it is stopped, and Err says why. Zero until launch, when
// the target measures a server someone else runs: nothing to watch.
type launched struct {
	server  *sut.Server
	died    chan struct{}
	diedErr error
}

// launch starts cmd (pinned to pin, ready when probe says so) and watches it.
func (l *launched) launch(ctx context.Context, name string, cmd *exec.Cmd, pin []int, probe sut.Probe) error {
	srv, err := sut.StartServer(ctx, sut.Launch{Name: name, Cmd: cmd, Pin: pin, Probe: probe})
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

// describe fills in what a run records of a server authzbench started: its version, process
// and command line; nothing for one it did not.
func (l *launched) describe(info *Info, version string) {
	if l.server != nil {
		info.Version = version
		info.PID = l.server.PID()
		info.Command = l.server.Command()
	}
}

// stop stops the server, if one was launched.
func (l *launched) stop() error {
	if l.server == nil {
		return nil
	}
	return l.server.Stop(5 * time.Second)
}
