package httpload

import (
	"syscall"
	"unsafe"
)

// rawIOSupported: on Linux a plain TCP connection writes its requests and reads its answers with
// raw system calls, inside the runtime poller's read (see Conn.rawRead).
const rawIOSupported = true

// rawSend writes b to a non-blocking socket: one sendto with MSG_NOSIGNAL (a closed socket
// answers EPIPE, not a signal). A raw system call, as it cannot block: the scheduler's
// bookkeeping around a system call that may block (entersyscall, waking its monitor thread) is
// a visible share of a request's CPU at tens of thousands of requests a second.
func rawSend(fd uintptr, b []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		syscall.MSG_NOSIGNAL, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), 0
}

// rawRecv reads into b from a non-blocking socket, without blocking: EAGAIN when nothing waits.
func rawRecv(fd uintptr, b []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), 0
}
