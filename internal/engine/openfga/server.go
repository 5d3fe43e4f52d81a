package openfga

import (
	"fmt"
	"os"

	openfgacmd "github.com/openfga/openfga/cmd"
	"github.com/openfga/openfga/cmd/run"
	"github.com/spf13/cobra"
)

// Arg is the first argument that turns an authzbench (or test) process into OpenFGA's command
// line: `authzbench openfga run ...` is `openfga run ...`.
const Arg = "openfga"

// serverDefaults are where `authzbench openfga run` differs from `openfga run` when neither a
// flag, an OPENFGA_* variable nor a config.yaml says otherwise: every listener on loopback, as
// authzbench's traffic is, where OpenFGA listens on every interface. Everything else is
// OpenFGA's own default: its memory datastore, no playground, metrics on.
var serverDefaults = map[string]string{
	"http-addr":    "127.0.0.1:8080",
	"grpc-addr":    "127.0.0.1:8081",
	"metrics-addr": "127.0.0.1:2112",
}

// Main runs OpenFGA's command line (its run and version commands) with args, without the
// leading "openfga", and returns its exit code.
func Main(args []string) (code int) {
	root := openfgacmd.NewRootCommand()
	runCmd, err := runCommand()
	if err != nil {
		fmt.Fprintf(os.Stderr, "authzbench %s: %v\n", Arg, err)
		return 2
	}
	root.AddCommand(runCmd, openfgacmd.NewVersionCommand())
	root.SetArgs(args)
	// OpenFGA's run panics on a configuration or startup error (a port in use, a bad flag
	// value); say it as an error, not as a goroutine dump.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "authzbench %s: %v\n", Arg, r)
			code = 1
		}
	}()
	if err := root.Execute(); err != nil {
		return 1
	}
	return 0
}

// runCommand is OpenFGA's run command with serverDefaults.
func runCommand() (*cobra.Command, error) {
	cmd := run.NewRunCommand()
	for name, value := range serverDefaults {
		// Changing the default, not setting the flag: OpenFGA binds its flags to viper, which
		// takes an OPENFGA_* variable or config.yaml over a flag's default but not over a flag
		// that was set.
		f := cmd.Flags().Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("OpenFGA's run command has no --%s flag", name)
		}
		if err := f.Value.Set(value); err != nil {
			return nil, fmt.Errorf("--%s=%s: %w", name, value, err)
		}
		f.DefValue = value
	}
	return cmd, nil
}

// DispatchIfAsked runs OpenFGA and exits when the process was started as
// "<self> openfga ...". Call it first thing in main and in the TestMain of packages whose tests
// start OpenFGA servers.
func DispatchIfAsked() {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		os.Exit(Main(os.Args[2:]))
	}
}
