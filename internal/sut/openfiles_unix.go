//go:build unix

package sut

import (
	"fmt"
	"syscall"
)

// RaiseOpenFiles lifts this process's limit on open files (the soft RLIMIT_NOFILE, often 1,024)
// to the hard limit, so a load of thousands of connections is not cut short by "too many open
// files". Go's runtime raises it for itself already, but hands the original limit back to child
// processes; an explicit setrlimit is what makes the servers authzbench starts inherit the
// raised one, and they hold a socket per connection too.
func RaiseOpenFiles() error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("read the open-file limit: %w", err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("raise the open-file limit to %d: %w", lim.Max, err)
	}
	return nil
}

// OpenFilesLimit is the number of files this process may have open, and the most it could be
// raised to.
func OpenFilesLimit() (soft, hard uint64, err error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, fmt.Errorf("read the open-file limit: %w", err)
	}
	return lim.Cur, lim.Max, nil
}
