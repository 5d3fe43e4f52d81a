package bench

import (
	"fmt"
	"os"
	"testing"

	_ "github.com/authzbench/authzbench/internal/engine/all" // every engine and kind the command links
	"github.com/authzbench/authzbench/internal/engine/all/alltest"
	"github.com/authzbench/authzbench/internal/sut"
)

// TestMain lets this test binary serve as OPA for the cli and server targets ("<self> opa ..."),
// as the trivial server of calibrate, and as every other engine's server program.
func TestMain(m *testing.M) {
	alltest.DispatchIfAsked()
	sut.DispatchPinIfAsked()
	sut.DispatchTrivialIfAsked()
	remove, err := alltest.PutOnPath()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	remove()
	os.Exit(code)
}
