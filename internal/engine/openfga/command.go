package openfga

import (
	"io"

	"github.com/authzbench/authzbench/internal/engine"
)

// "authzbench openfga run ..." is OpenFGA's server, assembled as its run command does;
// openfga/server starts it.
func init() {
	engine.RegisterCommand(engine.Command{
		Arg:   Arg,
		Use:   Arg + " run|version [flags]",
		Short: "Run OpenFGA's server, assembled from OpenFGA's packages linked into authzbench (the openfga/server target runs it)",
		Long: `authzbench links in OpenFGA's server packages, so 'authzbench openfga run' serves OpenFGA's
HTTP and gRPC APIs over its memory datastore with nothing installed. Its flags are OpenFGA's own
names and defaults for everything on the Check path; any other OpenFGA setting is refused by
name: for those, run OpenFGA's own binary (run --openfga-bin PATH starts it for openfga/server).`,
		Example: `  authzbench openfga run --http-addr 127.0.0.1:8080 --grpc-addr 127.0.0.1:8081
  authzbench openfga version`,
		Main: func(args []string, _ io.Writer) int { return Main(args) },
	})
}
