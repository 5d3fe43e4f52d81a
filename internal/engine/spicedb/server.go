package spicedb

import (
	"errors"
	"fmt"
	"os"

	spicedbcmd "github.com/authzed/spicedb/pkg/cmd"
	"github.com/authzed/spicedb/pkg/spiceerrors"
	"github.com/spf13/cobra"
)

// Arg is the first argument that turns an authzbench (or test) process into SpiceDB's command
// line: `authzbench spicedb serve ...` is `spicedb serve ...`.
const Arg = "spicedb"

// serverDefaults are where `authzbench spicedb serve` differs from `spicedb serve` when neither
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
		fmt.Fprintf(os.Stderr, "authzbench %s: %v\n", Arg, err)
		return 2
	}
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		if !errors.Is(err, spicedbcmd.ErrParsing) {
			fmt.Fprintf(os.Stderr, "authzbench %s: %v\n", Arg, err)
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
	return root, nil
}

// DispatchIfAsked runs SpiceDB and exits when the process was started as
// "<self> spicedb ...". Call it first thing in main and in the TestMain of packages whose tests
// start SpiceDB servers.
func DispatchIfAsked() {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		os.Exit(Main(os.Args[2:]))
	}
}
