package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/history"
	"github.com/authzbench/authzbench/internal/historyweb"
)

// DefaultServePort is where serve listens when --port is not given.
const DefaultServePort = 8089

// serveShutdown is how long serve waits, once asked to stop, for the pages being built.
const serveShutdown = 5 * time.Second

const serveExitHelp = `

Exit status: 0 stopped by Ctrl-C or SIGTERM; 1 the server failed while serving; 2 bad input,
nothing served: a flag, a non-loopback --host without --allow-remote, a port that cannot be
listened on, a history that does not exist or cannot be opened (not a database, another
program's database or an empty file, left as they were; written by a newer authzbench; a
server that does not answer).`

func newServeCommand(stdout, stderr io.Writer) *cobra.Command {
	var where, host string
	var port int
	var allowRemote bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "serve --history DB [--port N]",
		Short: "Browse a history database: series, their trends and changes, every report, two commits compared",
		Long: `serve shows a history database (authzbench history) as pages in a browser:

  /                   the latest changes first, then every series grouped by workload, with its
                      target, load, testbed and branch and a small trend of its p99; a form
                      narrows it to a workload, a target or a testbed (/?workload=rbac&testbed=ci)
  /series/ID          one series along its commits: P50 and P99 as bands over the repetitions
                      (median line, fastest to slowest), throughput, the changes marked, and
                      where the machine or the build changed (kernel, Go, engine version, CPU
                      frequency policy); each commit's figures on hover, its reports, a
                      comparison with the one before
  /report/DOCUMENT    a stored run's full HTML report, as 'authzbench report --format html' writes it
  /compare?base=A&new=B   two commits compared as 'authzbench compare' compares two files

The pages are built on the server with the report's own charts; they have no script and load
nothing from anywhere, so they work without JavaScript and offline. Changes are found as
'history changes' finds them (and found again only when something was added).

It listens on 127.0.0.1 by default. The pages show every stored result and its environment:
to listen on another address, say so with --allow-remote, and put something that
authenticates in front. Every request is bounded by --timeout. Ctrl-C or SIGTERM stops it
after the pages being built are done.` + serveExitHelp,
		Example: `  # Then open http://127.0.0.1:8089/
  authzbench serve --history bench.db
  # Any free port; the address is printed
  authzbench serve --history bench.db --port 0
  # A team's shared history
  authzbench serve --history postgres://bench@db.internal/bench
  # Reachable from other machines: put something that authenticates in front
  authzbench serve --history bench.db --host 0.0.0.0 --allow-remote`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return usageError(fmt.Errorf("--port %d: want 0 (any free port) to 65535", port))
			}
			if timeout <= 0 {
				return usageError(fmt.Errorf("--timeout %s: want more than 0", timeout))
			}
			if err := checkServeHost(host, allowRemote); err != nil {
				return usageError(err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			st, err := history.Open(ctx, where, history.Options{MustExist: true})
			if err != nil {
				return openFailed(fmt.Errorf("--history: %w", err))
			}
			defer st.Close()
			// Read it once before listening: a database that opens but cannot be read is bad
			// input now, not a page of errors later.
			if _, err := st.Series(ctx); err != nil {
				return usageError(err)
			}
			ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
			if err != nil {
				return usageError(fmt.Errorf("--host %s --port %d: %w", host, port, err))
			}
			logger := log.New(stderr, "authzbench serve: ", log.LstdFlags)
			srv := &http.Server{
				Handler:           historyweb.Handler(st, historyweb.Options{Timeout: timeout, Log: logger}),
				ReadHeaderTimeout: 10 * time.Second,
				ReadTimeout:       30 * time.Second,
				WriteTimeout:      timeout + 10*time.Second,
				IdleTimeout:       2 * time.Minute,
				MaxHeaderBytes:    64 << 10,
				ErrorLog:          logger,
			}
			fmt.Fprintf(stdout, "serving %s at http://%s/ (Ctrl-C stops)\n", st.Where(), ln.Addr())
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()
			select {
			case err := <-served:
				return &exitError{exitFailed, fmt.Errorf("serve: %w", err)}
			case <-ctx.Done():
			}
			stop() // a second Ctrl-C ends the program at once
			done, cancel := context.WithTimeout(context.Background(), serveShutdown)
			defer cancel()
			if err := srv.Shutdown(done); err != nil {
				srv.Close()
				fmt.Fprintf(stderr, "authzbench serve: pages still being built after %s were cut off\n", serveShutdown)
			}
			fmt.Fprintln(stdout, "stopped")
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&where, "history", "", "the history database to show: a SQLite file (never created: it must hold results), or postgres://user@host/db (default $XDG_DATA_HOME/authzbench/history.db)")
	fl.StringVar(&host, "host", "127.0.0.1", "the address to listen on: a loopback address unless --allow-remote")
	fl.IntVar(&port, "port", DefaultServePort, "the port to listen on; 0 for any free one")
	fl.BoolVar(&allowRemote, "allow-remote", false, "listen on an address other machines can reach (the pages show every stored result: put something that authenticates in front)")
	fl.DurationVar(&timeout, "timeout", historyweb.DefaultTimeout, "the longest a page may take to build, the change search included")
	return cmd
}

// checkServeHost refuses an address other machines can reach unless asked for explicitly.
func checkServeHost(host string, allowRemote bool) error {
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil {
		if allowRemote {
			return nil
		}
		return fmt.Errorf("--host %q: not an IP address; use 127.0.0.1 or ::1, or add --allow-remote to listen on a name", host)
	}
	if ip.IsLoopback() || allowRemote {
		return nil
	}
	return fmt.Errorf("--host %s: not a loopback address, so other machines could read every stored result; add --allow-remote to mean it", host)
}
