//go:build !linux

package sut

import (
	"errors"
	"os/exec"
)

const PinArg = "__pin"

var errNoPinning = errors.New("CPU pinning needs Linux")

func Pinned(cmd *exec.Cmd, cpus []int) (*exec.Cmd, error) { return nil, errNoPinning }
func DispatchPinIfAsked()                                 {}
func PinProcess(cpus []int) error                         { return errNoPinning }
func Affinity(pid int) ([]int, error)                     { return nil, errNoPinning }
