package kinds

import (
	"os"
	"testing"

	"github.com/authzbench/authzbench/internal/cedarserver"
	"github.com/authzbench/authzbench/internal/opacli"
)

// TestMain lets the test binary be the OPA and the Cedar server the served targets start, as
// authzbench itself is.
func TestMain(m *testing.M) {
	opacli.DispatchIfAsked()
	cedarserver.DispatchIfAsked()
	os.Exit(m.Run())
}
