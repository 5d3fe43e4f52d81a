package bench

import (
	"fmt"
	"os"
	"testing"

	"github.com/authzbench/authzbench/internal/cedarserver"
	"github.com/authzbench/authzbench/internal/engine/openfga"
	"github.com/authzbench/authzbench/internal/engine/spicedb/serve"
	"github.com/authzbench/authzbench/internal/opacli"
	"github.com/authzbench/authzbench/internal/sut"
)

// TestMain lets this test binary serve as OPA for the cli and server targets ("<self> opa ..."),
// as the trivial server of calibrate, and as authzbench-spicedb for spicedb/server.
func TestMain(m *testing.M) {
	opacli.DispatchIfAsked()
	cedarserver.DispatchIfAsked()
	openfga.DispatchIfAsked()
	serve.DispatchIfNamed() // reached as authzbench-spicedb, through the link PutOnPath makes
	sut.DispatchPinIfAsked()
	sut.DispatchTrivialIfAsked()
	remove, err := serve.PutOnPath() // spicedb/server finds SpiceDB's server there
	if err != nil {
		fmt.Fprintln(os.Stderr, "put authzbench-spicedb on PATH:", err)
		os.Exit(2)
	}
	code := m.Run()
	remove()
	os.Exit(code)
}
