package httpload

import (
	"syscall"
	"unsafe"
)

// peekIdle looks at a socket without blocking and without taking what it finds: one recvfrom
// with MSG_PEEK|MSG_DONTWAIT. A raw system call, as it cannot block.
func peekIdle(fd uintptr) idleState {
	var b [1]byte
	n, _, errno := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	switch {
	case errno == syscall.EAGAIN:
		return idleOpen
	case errno != 0 || n == 0:
		return idleClosed
	}
	return idleData
}
