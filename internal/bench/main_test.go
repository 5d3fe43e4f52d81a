package bench

import (
	"net"
	"os"
	"testing"

	"github.com/authzbench/authzbench/internal/cedarserver"
	"github.com/authzbench/authzbench/internal/opacli"
	"github.com/authzbench/authzbench/internal/sut"
)

// TestMain lets this test binary serve as OPA for the cli and server targets ("<self> opa ..."),
// and as the trivial server of calibrate.
func TestMain(m *testing.M) {
	opacli.DispatchIfAsked()
	cedarserver.DispatchIfAsked()
	sut.DispatchPinIfAsked()
	if len(os.Args) > 2 && os.Args[1] == "trivial-server" {
		l, err := net.Listen("tcp", os.Args[2])
		if err != nil {
			os.Exit(1)
		}
		sut.ServeTrivial(l)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
