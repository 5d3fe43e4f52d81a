//go:build !linux

package httpload

import "syscall"

const rawIOSupported = false

func rawSend(uintptr, []byte) (int, syscall.Errno) { return 0, syscall.ENOSYS }
func rawRecv(uintptr, []byte) (int, syscall.Errno) { return 0, syscall.ENOSYS }
