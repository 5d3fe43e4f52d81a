package spicedb

import (
	"fmt"
	"os"
	"testing"

	"github.com/authzbench/authzbench/internal/engine/spicedb/serve"
)

// TestMain lets the test binary be SpiceDB's server, as authzbench-spicedb is, for the
// spicedb/server tests to start.
func TestMain(m *testing.M) {
	serve.DispatchIfNamed()          // reached as authzbench-spicedb, through the link PutOnPath makes
	remove, err := serve.PutOnPath() // spicedb/server finds SpiceDB's server there
	if err != nil {
		fmt.Fprintln(os.Stderr, "put authzbench-spicedb on PATH:", err)
		os.Exit(2)
	}
	code := m.Run()
	stopPostgres()
	remove()
	os.Exit(code)
}
