package opa

import (
	"os"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
)

// TestMain lets the test binary be the OPA the cli, server and ext_authz targets start
// ("<self> opa ..."), as authzbench itself is.
func TestMain(m *testing.M) {
	engine.DispatchIfAsked()
	os.Exit(m.Run())
}
