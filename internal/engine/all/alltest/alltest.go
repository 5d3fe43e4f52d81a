// Package alltest lets a test binary stand in for the server programs of the engines package
// all links, as authzbench and authzbench-spicedb are: the TestMain of a package whose tests
// start every engine's servers calls DispatchIfAsked first, then PutOnPath. It is for tests
// alone: it links SpiceDB's server, which the authzbench command must not (see
// cmd/authzbench's TestSpiceDBServerNotLinked).
package alltest

import (
	"fmt"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/engine/spicedb/serve"
)

// DispatchIfAsked runs an engine's server and exits when the process was started as one:
// "<self> opa ...", "<self> openfga ..." (every engine.Command), or through a link named authzbench-spicedb (PutOnPath's).
func DispatchIfAsked() {
	engine.DispatchIfAsked()
	serve.DispatchIfNamed()
}

// PutOnPath makes this process's executable reachable where engines' kinds look for a server
// program of their own (authzbench-spicedb, first on PATH); remove undoes it.
func PutOnPath() (remove func(), err error) {
	remove, err = serve.PutOnPath()
	if err != nil {
		return nil, fmt.Errorf("put %s on PATH: %w", serve.Command, err)
	}
	return remove, nil
}
