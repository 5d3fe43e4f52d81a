package sut

import "fmt"

// openFilesMargin is what authzbench needs open besides its connections: its executable's
// files, standard streams, the network poller, inputs and result files, a started server's
// pipes and the /proc files the sampler reads.
const openFilesMargin = 64

// CheckOpenFiles refuses, before any load starts, a load that needs more open files than the
// limit allows: one socket per connection (a closed-loop worker holds one, an open-loop
// connection one) plus a margin. Otherwise the run would fail part-way, counting "too many open
// files" as the server's transport errors. Call it after RaiseOpenFiles. what names the setting
// in the user's words ("--workers 5000").
func CheckOpenFiles(what string, connections int) error {
	soft, hard, err := OpenFilesLimit()
	if err != nil {
		return err
	}
	return checkOpenFiles(what, connections, soft, hard)
}

func checkOpenFiles(what string, connections int, soft, hard uint64) error {
	need := uint64(connections) + openFilesMargin
	if need <= soft {
		return nil
	}
	how := fmt.Sprintf("the hard limit is %d, so raise that (ulimit -Hn as root, or /etc/security/limits.conf)", hard)
	if soft < hard {
		how = fmt.Sprintf("raise it up to the hard limit %d with ulimit -n", hard)
	}
	return fmt.Errorf("%s needs about %d open files (one a connection, and %d more), but this process may open %d: use fewer connections, or %s",
		what, need, openFilesMargin, soft, how)
}
