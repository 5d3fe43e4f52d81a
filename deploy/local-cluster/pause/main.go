// Command pause is the sandbox ("pause") container of the local cluster that
// deploy/local-cluster/cluster.sh brings up. Every pod's namespaces are held by one such process.
// The cluster has no registry to pull the usual pause image from, so the script builds this
// one FROM scratch. It is not part of authzbench.
//
// It sleeps until SIGTERM or SIGINT, and, being PID 1 of the pod when the pod shares its PID
// namespace, reaps any child that is re-parented to it, so no zombie outlives its container.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every child that has exited: one SIGCHLD may stand for several.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
