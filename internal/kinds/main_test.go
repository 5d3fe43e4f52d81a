package kinds_test

import (
	"os"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	// The generic kinds are tested against engines' real servers: Cedar's kinds, which live in
	// its package and register themselves here as in authzbench, and its server command.
	_ "github.com/authzbench/authzbench/internal/engine/cedar"
)

// TestMain lets the test binary be the OPA and the Cedar server the served targets start, as
// authzbench itself is.
func TestMain(m *testing.M) {
	engine.DispatchIfAsked()
	os.Exit(m.Run())
}
