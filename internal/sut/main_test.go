package sut

import (
	"os"
	"testing"
)

// TestMain lets this test binary pin itself and exec another program, as authzbench does.
func TestMain(m *testing.M) {
	DispatchPinIfAsked()
	os.Exit(m.Run())
}
