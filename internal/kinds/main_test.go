package kinds

import (
	"os"
	"testing"

	"github.com/authzbench/authzbench/internal/cedarserver"
	"github.com/authzbench/authzbench/internal/engine/openfga"
	"github.com/authzbench/authzbench/internal/opacli"
)

// TestMain lets the test binary be the OPA, the Cedar server and the OpenFGA server the served
// targets start, as authzbench itself is.
func TestMain(m *testing.M) {
	opacli.DispatchIfAsked()
	cedarserver.DispatchIfAsked()
	openfga.DispatchIfAsked()
	os.Exit(m.Run())
}
