// Package serve is SpiceDB's own command line (`spicedb serve` and the rest), with loopback
// defaults, as the authzbench-spicedb command runs it: the server the spicedb/server target
// starts when no other SpiceDB binary is given.
//
// It is its own package, apart from the engine, because it links SpiceDB's whole server
// (pkg/cmd, and through its datastore package every storage engine SpiceDB supports: Spanner,
// AWS, MySQL, Postgres, CockroachDB): linked into authzbench it would nearly double the first
// build. authzbench links the engine alone; this package is linked by cmd/authzbench-spicedb
// and by the tests that start a server.
package serve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	spicedbcmd "github.com/authzed/spicedb/pkg/cmd"
	"github.com/authzed/spicedb/pkg/spiceerrors"
	"github.com/jzelinskie/cobrautil/v2"
	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/buildinfo"
)

// Command is the name of the program that is SpiceDB's command line with these defaults:
// `authzbench-spicedb serve ...` is `spicedb serve ...`.
const Command = "authzbench-spicedb"

// serverDefaults are where `authzbench-spicedb serve` differs from `spicedb serve` when neither
// a flag nor a SPICEDB_* variable says otherwise: every listener on loopback, as authzbench's
// traffic is, where SpiceDB listens on every interface, and no telemetry, which SpiceDB reports
// to Authzed's endpoint unless told otherwise (rootCommand also skips its release check, which
// asks GitHub). Everything else is SpiceDB's own default: its memory datastore, no HTTP
// gateway, no dispatch cluster, metrics on. The preshared key has no default, in SpiceDB as
// here: the caller gives one.
var serverDefaults = map[string]string{
	"grpc-addr":             "127.0.0.1:50051",
	"http-addr":             "127.0.0.1:8443",
	"dispatch-cluster-addr": "127.0.0.1:50053",
	"metrics-addr":          "127.0.0.1:9090",
	"telemetry-endpoint":    "",
}

// Main runs SpiceDB's command line (serve, version, and the rest of its commands) with args,
// without the leading "spicedb", and returns its exit code.
func Main(args []string) int {
	root, err := rootCommand()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", Command, err)
		return 2
	}
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		if !errors.Is(err, spicedbcmd.ErrParsing) {
			fmt.Fprintf(os.Stderr, "%s: %v\n", Command, err)
		}
		// As SpiceDB's own main: a termination error carries its exit code.
		var termErr spiceerrors.TerminationError
		if errors.As(err, &termErr) {
			return termErr.ExitCode()
		}
		return 1
	}
	return 0
}

// rootCommand is SpiceDB's command line, as its main builds it, with serverDefaults on serve.
func rootCommand() (*cobra.Command, error) {
	root, err := spicedbcmd.BuildRootCommand()
	if err != nil {
		return nil, err
	}
	serve, _, err := root.Find([]string{"serve"})
	if err != nil || serve.Name() != "serve" {
		return nil, errors.New("SpiceDB's command line has no serve command")
	}
	for name, value := range serverDefaults {
		// Changing the default, not setting the flag: SpiceDB takes a SPICEDB_* variable over a
		// flag's default but not over a flag that was set.
		f := serve.Flags().Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("SpiceDB's serve command has no --%s flag", name)
		}
		if err := f.Value.Set(value); err != nil {
			return nil, fmt.Errorf("--%s=%s: %w", name, value, err)
		}
		f.DefValue = value
	}
	// SpiceDB asks GitHub for its latest release at startup unless told not to; our traffic
	// stays on loopback. A default, as above.
	skip := root.PersistentFlags().Lookup("skip-release-check")
	if skip == nil {
		return nil, errors.New("SpiceDB's command line has no --skip-release-check flag")
	}
	if err := skip.Value.Set("true"); err != nil {
		return nil, err
	}
	skip.DefValue = "true"
	// SpiceDB's release build stamps its version in, which its version command prints
	// ("spicedb v1.56.2"); built here it has none, and would print the version of the program
	// that links it. The SpiceDB module linked in is the version served.
	if cobrautil.Version == "" {
		if v := buildinfo.ModuleVersion("github.com/authzed/spicedb"); v != "" {
			cobrautil.Version = v
		}
	}
	return root, nil
}

// DispatchIfNamed runs SpiceDB and exits when the process's executable is called Command: a test binary linked with this package, reached through a link of
// that name, stands for the authzbench-spicedb command. Call it first thing in the TestMain of
// packages whose tests start SpiceDB servers.
func DispatchIfNamed() {
	if IsCommand(os.Args[0]) {
		os.Exit(Main(os.Args[1:]))
	}
}

// IsCommand reports whether path names the authzbench-spicedb command.
func IsCommand(path string) bool {
	base := strings.TrimSuffix(filepath.Base(path), ".exe")
	return base == Command
}

// PutOnPath makes this process's executable reachable as authzbench-spicedb, through a link
// in a new temporary directory put first on PATH, where the spicedb/server target looks for
// it: for the TestMain of packages whose tests start SpiceDB servers, with DispatchIfNamed
// before it. remove deletes the directory.
func PutOnPath() (remove func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", Command+"-")
	if err != nil {
		return nil, err
	}
	if err := os.Symlink(self, filepath.Join(dir, Command)); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH")); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return func() { os.RemoveAll(dir) }, nil
}
