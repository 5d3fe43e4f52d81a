package openfga

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	serverconfig "github.com/openfga/openfga/pkg/server/config"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Arg is the first argument that turns an authzbench (or test) process into an OpenFGA server:
// `authzbench openfga run ...` serves as `openfga run ...` does.
const Arg = "openfga"

// Exit statuses of `authzbench openfga`, as authzbench's own: bad input before anything
// starts, and a server that could not start or stopped on an error.
const (
	exitFailed = 1
	exitUsage  = 2
)

// serverDefaults are where `authzbench openfga run` differs from `openfga run` when neither a
// flag nor an OPENFGA_* variable says otherwise: every listener on loopback, as authzbench's
// traffic is, where OpenFGA listens on every interface. Every other default is OpenFGA's own
// (serverconfig.DefaultConfig): its memory datastore, no playground, metrics on.
var serverDefaults = map[string]string{
	"http-addr":    "127.0.0.1:8080",
	"grpc-addr":    "127.0.0.1:8081",
	"metrics-addr": "127.0.0.1:2112",
}

// elsewhere is what to do for a setting this server does not take.
const elsewhere = "for OpenFGA's other settings run OpenFGA's own server binary " +
	"(authzbench run --openfga-bin PATH starts it for openfga/server) or measure a running one with --url"

// usageError is bad input found before anything starts: exit 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// Main runs `authzbench openfga` with args, without the leading "openfga", and returns its
// exit status.
func Main(args []string) int {
	return execute(context.Background(), args, os.Stdout, os.Stderr, os.Environ())
}

// execute is Main with its inputs and outputs given; a server it starts stops when ctx ends.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) (code int) {
	root := &cobra.Command{Use: "authzbench", SilenceUsage: true, SilenceErrors: true}
	openfga := &cobra.Command{
		Use:   Arg,
		Short: "OpenFGA's server, assembled from OpenFGA's own packages linked into authzbench",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for \"authzbench openfga\"; known: run, version", args[0])
			}
			return cmd.Help()
		},
	}
	openfga.AddCommand(newRunCommand(environ), versionCommand(stdout))
	root.AddCommand(openfga)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(append([]string{Arg}, args...))
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	// OpenFGA's packages panic on a few configurations they cannot take; say it as an error,
	// not as a goroutine dump.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "authzbench %s: %v\n", Arg, r)
			code = exitFailed
		}
	}()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "authzbench %s: %v\n", Arg, err)
	var failed serveError
	if errors.As(err, &failed) {
		return exitFailed
	}
	// Everything else is about the command line: a flag, a value, an unknown command.
	return exitUsage
}

// flagError says what to do about a flag this server does not take: most are OpenFGA's.
func flagError(err error) error {
	msg := err.Error()
	if strings.HasPrefix(msg, "unknown flag") || strings.HasPrefix(msg, "unknown shorthand flag") {
		return usageError{fmt.Errorf("%s: authzbench openfga run serves OpenFGA's memory, postgres and sqlite datastores in clear, "+
			"without authentication, and takes only the flags its --help lists; %s", msg, elsewhere)}
	}
	return usageError{err}
}

// runCommand is the run command, reading the process's environment.
func runCommand() (*cobra.Command, error) {
	return newRunCommand(os.Environ()), nil
}

func newRunCommand(environ []string) *cobra.Command {
	cfg := serverconfig.DefaultConfig()
	playground := false
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run an OpenFGA server over its memory datastore, or PostgreSQL or SQLite",
		Long: `Run an OpenFGA server over its memory datastore (or PostgreSQL or SQLite, migrated
beforehand): OpenFGA's own server (pkg/server), gRPC
and HTTP APIs, health and metrics, assembled as OpenFGA's own run command assembles them, from
OpenFGA's packages linked into authzbench. Every setting is OpenFGA's default but the listen
addresses, which are on loopback.

It takes the flags below, with OpenFGA's names; each may be set as OpenFGA's run reads it
too, by an OPENFGA_* variable (--check-query-cache-enabled is OPENFGA_CHECK_QUERY_CACHE_ENABLED),
and a flag wins over its variable. Any other OPENFGA_* variable in the environment is refused, as
is any other flag of OpenFGA's run (another datastore, TLS, authentication, tracing);
` + elsewhere + `. No config.yaml is read.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fromEnv, err := applyEnvironment(cmd.Flags(), environ)
			if err != nil {
				return usageError{err}
			}
			named := func(flag string) string {
				if v, ok := fromEnv[flag]; ok {
					return v
				}
				return "--" + flag
			}
			if err := checkSettings(cfg, playground, named); err != nil {
				return usageError{err}
			}
			return serve(cmd.Context(), cfg)
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&cfg.HTTP.Addr, "http-addr", serverDefaults["http-addr"], "the host:port address to serve the HTTP server on")
	fl.StringVar(&cfg.GRPC.Addr, "grpc-addr", serverDefaults["grpc-addr"], "the host:port address to serve the grpc server on")
	fl.StringVar(&cfg.Metrics.Addr, "metrics-addr", serverDefaults["metrics-addr"], "the host:port address to serve the prometheus metrics server on")
	fl.BoolVar(&cfg.Metrics.Enabled, "metrics-enabled", cfg.Metrics.Enabled, "enable/disable prometheus metrics on the '/metrics' endpoint")
	fl.BoolVar(&cfg.Metrics.EnableRPCHistograms, "metrics-enable-rpc-histograms", cfg.Metrics.EnableRPCHistograms, "enables prometheus histogram metrics for RPC latency distributions")
	fl.StringVar(&cfg.Log.Level, "log-level", cfg.Log.Level, "the log level to use: none, debug, info, warn, error, panic or fatal")
	fl.StringVar(&cfg.Log.Format, "log-format", cfg.Log.Format, "the log format to output logs in: text or json")
	fl.StringVar(&cfg.Log.TimestampFormat, "log-timestamp-format", cfg.Log.TimestampFormat, "the timestamp format to use for log messages: Unix or ISO8601")
	fl.StringVar(&cfg.Datastore.Engine, "datastore-engine", cfg.Datastore.Engine, "the datastore engine: memory, postgres or sqlite (migrated beforehand, as OpenFGA's migrate does)")
	fl.StringVar(&cfg.Datastore.URI, "datastore-uri", cfg.Datastore.URI, "the connection uri to use to connect to the datastore (for any engine other than 'memory')")
	fl.IntVar(&cfg.Datastore.MaxOpenConns, "datastore-max-open-conns", cfg.Datastore.MaxOpenConns, "the maximum number of open connections to the datastore")
	fl.IntVar(&cfg.Datastore.MinOpenConns, "datastore-min-open-conns", cfg.Datastore.MinOpenConns, "the minimum number of open connections to the datastore")
	fl.BoolVar(&playground, "playground-enabled", false, "the OpenFGA Playground: false, the only value this server takes (OpenFGA has deprecated it)")
	fl.DurationVar(&cfg.RequestTimeout, "request-timeout", cfg.RequestTimeout, "configures request timeout")
	fl.StringSliceVar(&cfg.Experimentals, "experimentals", nil, "a comma-separated list of experimental features to enable, beside those OpenFGA enables by default ("+strings.Join(cfg.Experimentals, ", ")+"), such as "+serverconfig.ExperimentalCheckOptimizations)
	// The Check path's tuning, as people benchmark OpenFGA with it.
	fl.BoolVar(&cfg.CheckQueryCache.Enabled, "check-query-cache-enabled", cfg.CheckQueryCache.Enabled, "enable caching of Check requests (turns Check into an eventually consistent API)")
	fl.DurationVar(&cfg.CheckQueryCache.TTL, "check-query-cache-ttl", cfg.CheckQueryCache.TTL, "if check-query-cache-enabled, this is the TTL of each value")
	fl.Uint32Var(&cfg.CheckCache.Limit, "check-cache-limit", cfg.CheckCache.Limit, "if check-query-cache-enabled or check-iterator-cache-enabled, this is the size limit of the cache")
	fl.BoolVar(&cfg.CheckIteratorCache.Enabled, "check-iterator-cache-enabled", cfg.CheckIteratorCache.Enabled, "enable caching of datastore iterators of Check requests")
	fl.Uint32Var(&cfg.CheckIteratorCache.MaxResults, "check-iterator-cache-max-results", cfg.CheckIteratorCache.MaxResults, "if check-iterator-cache-enabled, the limit of tuples to cache per key")
	fl.DurationVar(&cfg.CheckIteratorCache.TTL, "check-iterator-cache-ttl", cfg.CheckIteratorCache.TTL, "if check-iterator-cache-enabled, this is the TTL of each value")
	fl.BoolVar(&cfg.CacheController.Enabled, "cache-controller-enabled", cfg.CacheController.Enabled, "enable invalidation of the check query cache and iterator cache from recent tuple writes")
	fl.DurationVar(&cfg.CacheController.TTL, "cache-controller-ttl", cfg.CacheController.TTL, "if cache-controller-enabled, the minimum time between two invalidations a Check triggers")
	// Where ListObjects and ListUsers cut their answers without saying so: a list run counts an
	// answer cut there as truncated (list.go).
	fl.DurationVar(&cfg.ListObjectsDeadline, "listObjects-deadline", cfg.ListObjectsDeadline, "the timeout deadline for serving ListObjects requests")
	fl.Uint32Var(&cfg.ListObjectsMaxResults, "listObjects-max-results", cfg.ListObjectsMaxResults, "the maximum results to return in non-streaming ListObjects API responses. If 0, all results can be returned")
	fl.DurationVar(&cfg.ListUsersDeadline, "listUsers-deadline", cfg.ListUsersDeadline, "the timeout deadline for serving ListUsers requests. If 0s, there is no deadline")
	fl.Uint32Var(&cfg.ListUsersMaxResults, "listUsers-max-results", cfg.ListUsersMaxResults, "the maximum results to return in ListUsers API responses. If 0, all results can be returned")
	fl.Uint32Var(&cfg.ResolveNodeLimit, "resolve-node-limit", cfg.ResolveNodeLimit, "maximum resolution depth to attempt before throwing an error")
	fl.Uint32Var(&cfg.ResolveNodeBreadthLimit, "resolve-node-breadth-limit", cfg.ResolveNodeBreadthLimit, "how many nodes on a given level can be evaluated concurrently in a Check resolution tree")
	fl.Uint32Var(&cfg.MaxConcurrentReadsForCheck, "max-concurrent-reads-for-check", cfg.MaxConcurrentReadsForCheck, "the maximum allowed number of concurrent datastore reads in a single Check query")
	fl.BoolVar(&cfg.CheckDispatchThrottling.Enabled, "check-dispatch-throttling-enabled", cfg.CheckDispatchThrottling.Enabled, "enable throttling for Check requests whose number of dispatches is high")
	fl.DurationVar(&cfg.CheckDispatchThrottling.Frequency, "check-dispatch-throttling-frequency", cfg.CheckDispatchThrottling.Frequency, "how frequently throttled dispatched Check requests are dispatched")
	fl.Uint32Var(&cfg.CheckDispatchThrottling.Threshold, "check-dispatch-throttling-threshold", cfg.CheckDispatchThrottling.Threshold, "the number of dispatches above which Check requests are throttled")
	fl.Uint32Var(&cfg.CheckDispatchThrottling.MaxThreshold, "check-dispatch-throttling-max-threshold", cfg.CheckDispatchThrottling.MaxThreshold, "the maximum dispatch threshold beyond which a Check request is throttled (0: the threshold)")
	return cmd
}

// envName is the OPENFGA_* variable OpenFGA's run reads for a flag.
func envName(flag string) string {
	return "OPENFGA_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnvironment sets every flag not given from its OPENFGA_* variable, as OpenFGA's run does
// (a flag wins over its variable), and refuses the OPENFGA_* variables of settings this server
// does not take: an OPENFGA_DATASTORE_ENGINE=postgres left in a shell must not be served by
// the memory datastore without a word. It returns the variables it read, by flag name, for
// errors about their values to name them.
func applyEnvironment(fl *pflag.FlagSet, environ []string) (fromEnv map[string]string, err error) {
	fromEnv = map[string]string{}
	known := map[string]*pflag.Flag{}
	fl.VisitAll(func(f *pflag.Flag) { known[envName(f.Name)] = f })
	var errs []string
	unknown := false
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "OPENFGA_") {
			continue
		}
		f, ok := known[name]
		switch {
		case !ok:
			unknown = true
			errs = append(errs, fmt.Sprintf("%s is set in the environment, and authzbench openfga run takes no such setting: unset it", name))
		case f.Changed:
			// The flag given wins.
		default:
			fromEnv[f.Name] = name + "=" + value
			if err := f.Value.Set(value); err != nil {
				errs = append(errs, fmt.Sprintf("%s (--%s): %v", fromEnv[f.Name], f.Name, err))
			}
		}
	}
	if len(errs) == 0 {
		return fromEnv, nil
	}
	sort.Strings(errs)
	if unknown {
		errs = append(errs, elsewhere)
	}
	return nil, errors.New(strings.Join(errs, "; "))
}

// checkSettings refuses what this server does not serve, naming the flag or variable that
// asked for it (named), then checks the rest as OpenFGA's run does.
func checkSettings(cfg *serverconfig.Config, playground bool, named func(flag string) string) error {
	switch cfg.Datastore.Engine {
	case "memory":
		if cfg.Datastore.URI != "" {
			return fmt.Errorf("%s: the memory datastore takes no URI", named("datastore-uri"))
		}
	case "postgres", "sqlite":
		if cfg.Datastore.URI == "" {
			return fmt.Errorf("%s: the %s datastore needs %s", value(named("datastore-engine"), cfg.Datastore.Engine), cfg.Datastore.Engine, named("datastore-uri"))
		}
	default:
		return fmt.Errorf("%s: authzbench openfga run serves OpenFGA's memory, postgres and sqlite datastores; %s", value(named("datastore-engine"), cfg.Datastore.Engine), elsewhere)
	}
	if playground {
		return fmt.Errorf("%s: authzbench openfga run has no playground; %s", named("playground-enabled"), elsewhere)
	}
	// The values a person types, checked here to name the flag; serverconfig's check below
	// names its config keys.
	for _, c := range []struct {
		flag, value string
		known       []string
	}{
		{"log-level", cfg.Log.Level, []string{"none", "debug", "info", "warn", "error", "panic", "fatal"}},
		{"log-format", cfg.Log.Format, []string{"text", "json"}},
		{"log-timestamp-format", cfg.Log.TimestampFormat, []string{"Unix", "ISO8601"}},
	} {
		if !slices.Contains(c.known, c.value) {
			return fmt.Errorf("%s: want one of %s", value(named(c.flag), c.value), strings.Join(c.known, ", "))
		}
	}
	if err := cfg.Verify(); err != nil {
		return fmt.Errorf("OpenFGA's check of the settings: %w", err)
	}
	return nil
}

// value is a flag with the value it was given ("--log-level verbose"), or a variable as it was
// set ("OPENFGA_LOG_LEVEL=verbose").
func value(name, v string) string {
	if strings.HasPrefix(name, "--") {
		return name + " " + v
	}
	return name
}

// versionCommand prints the version of the OpenFGA module linked in, in the words of
// OpenFGA's own version command, so that one reader takes both.
func versionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of OpenFGA linked into authzbench",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(stdout, "OpenFGA version `%s` (the github.com/openfga/openfga module linked into authzbench)\n", Version())
			return err
		},
	}
}
