package kinds

import (
	"github.com/authzbench/authzbench/internal/engine"
	"os"
	"testing"
)

// TestMain lets the test binary be the OPA and the Cedar server the served targets start, as
// authzbench itself is.
func TestMain(m *testing.M) {
	engine.DispatchIfAsked()
	os.Exit(m.Run())
}
