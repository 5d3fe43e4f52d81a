package kinds_test

import (
	"fmt"
	"os"
	"testing"

	// The generic kinds are tested against engines' real servers: the kinds that live in an
	// engine's package register themselves here, as they do in authzbench.
	_ "github.com/authzbench/authzbench/internal/engine/all"
	"github.com/authzbench/authzbench/internal/engine/all/alltest"
)

// TestMain lets the test binary be every engine's server program the served targets start, as
// authzbench (and authzbench-spicedb) are.
func TestMain(m *testing.M) {
	alltest.DispatchIfAsked()
	remove, err := alltest.PutOnPath()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	remove()
	os.Exit(code)
}
