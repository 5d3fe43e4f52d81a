package casbin

import (
	"os"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
)

// TestMain lets the test binary be the Casbin server ("<test binary> casbin-server ..."), as
// authzbench is, for the casbin/server tests to start.
func TestMain(m *testing.M) {
	engine.DispatchIfAsked()
	os.Exit(m.Run())
}
