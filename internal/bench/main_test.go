package bench

import (
	"os"
	"testing"

	"github.com/authzbench/authzbench/internal/opacli"
)

// TestMain lets this test binary serve as OPA for the cli and server targets ("<self> opa ...").
func TestMain(m *testing.M) {
	opacli.DispatchIfAsked()
	os.Exit(m.Run())
}
