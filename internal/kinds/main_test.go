package kinds

import (
	"fmt"
	"os"
	"testing"

	"github.com/authzbench/authzbench/internal/cedarserver"
	"github.com/authzbench/authzbench/internal/engine/openfga"
	"github.com/authzbench/authzbench/internal/engine/spicedb/serve"
	"github.com/authzbench/authzbench/internal/opacli"
)

// TestMain lets the test binary be the OPA, the Cedar server and the OpenFGA server the served
// targets start, as authzbench itself is, and SpiceDB's server, as authzbench-spicedb is.
func TestMain(m *testing.M) {
	opacli.DispatchIfAsked()
	cedarserver.DispatchIfAsked()
	openfga.DispatchIfAsked()
	serve.DispatchIfNamed()          // reached as authzbench-spicedb, through the link PutOnPath makes
	remove, err := serve.PutOnPath() // spicedb/server finds SpiceDB's server there
	if err != nil {
		fmt.Fprintln(os.Stderr, "put authzbench-spicedb on PATH:", err)
		os.Exit(2)
	}
	code := m.Run()
	remove()
	os.Exit(code)
}
