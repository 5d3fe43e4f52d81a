package bench

import (
	"os"
	"testing"

	"github.com/authzbench/authzbench/internal/cedarserver"
	"github.com/authzbench/authzbench/internal/engine/openfga"
	"github.com/authzbench/authzbench/internal/opacli"
	"github.com/authzbench/authzbench/internal/sut"
)

// TestMain lets this test binary serve as OPA for the cli and server targets ("<self> opa ..."),
// and as the trivial server of calibrate.
func TestMain(m *testing.M) {
	opacli.DispatchIfAsked()
	cedarserver.DispatchIfAsked()
	openfga.DispatchIfAsked()
	sut.DispatchPinIfAsked()
	sut.DispatchTrivialIfAsked()
	os.Exit(m.Run())
}
