package httpload

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// Socket is a non-blocking TCP socket for a driver that waits on it itself (load's event loop),
// outside the runtime's network poller: every call on it is a raw system call that never
// blocks. It is not safe for concurrent use.
type Socket struct {
	fd      int // -1 when closed
	control [64]byte
}

// SocketsSupported: a driver can own its sockets on Linux.
const SocketsSupported = true

// ResolveTCP resolves addr (host:port) once, before any load, for Dial.
func ResolveTCP(addr string) (syscall.Sockaddr, error) {
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, err
	}
	if ip4 := a.IP.To4(); ip4 != nil {
		sa := &syscall.SockaddrInet4{Port: a.Port}
		copy(sa.Addr[:], ip4)
		return sa, nil
	}
	if ip6 := a.IP.To16(); ip6 != nil {
		sa := &syscall.SockaddrInet6{Port: a.Port}
		copy(sa.Addr[:], ip6)
		return sa, nil
	}
	return nil, fmt.Errorf("resolve %s: no IP address", addr)
}

// ownCopy is a copy of sa for one connect: syscall.Connect writes the address's raw form into
// the Sockaddr it is given, so event loops dialling on their own threads with one resolved
// address would race on it.
func ownCopy(sa syscall.Sockaddr) syscall.Sockaddr {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		c := *a
		return &c
	case *syscall.SockaddrInet6:
		c := *a
		return &c
	}
	return sa
}

// NewSocket returns a closed socket; Dial opens it.
func NewSocket() *Socket { return &Socket{fd: -1} }

// Fd is the socket's descriptor, -1 when closed.
func (s *Socket) Fd() int { return s.fd }

// Dial opens a socket and starts connecting it to sa. connected says the connect finished at
// once; otherwise it finishes when the socket becomes writable, and Connected says how.
func (s *Socket) Dial(sa syscall.Sockaddr) (connected bool, err error) {
	s.Close()
	family := syscall.AF_INET
	if _, ok := sa.(*syscall.SockaddrInet6); ok {
		family = syscall.AF_INET6
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return false, os.NewSyscallError("socket", err)
	}
	// As Go's own TCP connections: a request goes out at once, not held back for more.
	if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
		syscall.Close(fd)
		return false, os.NewSyscallError("setsockopt", err)
	}
	// The kernel stamps each answer with the time it arrived (ReadStamped), so a driver that
	// reads it later still knows when it came.
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1); err != nil {
		syscall.Close(fd)
		return false, os.NewSyscallError("setsockopt", err)
	}
	s.fd = fd
	switch err := syscall.Connect(fd, ownCopy(sa)); err {
	case nil:
		return true, nil
	case syscall.EINPROGRESS, syscall.EINTR:
		return false, nil
	default:
		s.Close()
		return false, os.NewSyscallError("connect", err)
	}
}

// Connected says how a connect that did not finish at once ended, once the socket is writable.
func (s *Socket) Connected() error {
	errno, err := syscall.GetsockoptInt(s.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
	if err != nil {
		return os.NewSyscallError("getsockopt", err)
	}
	if errno != 0 {
		return os.NewSyscallError("connect", syscall.Errno(errno))
	}
	return nil
}

// Write writes what the socket takes of b now: n bytes, EAGAIN when it takes none.
func (s *Socket) Write(b []byte) (int, syscall.Errno) { return rawSend(uintptr(s.fd), b) }

// Read reads what is there into b: 0 at the end of the stream, EAGAIN when nothing waits.
func (s *Socket) Read(b []byte) (int, syscall.Errno) {
	for {
		n, errno := rawRecv(uintptr(s.fd), b)
		if errno != syscall.EINTR {
			return n, errno
		}
	}
}

// ReadStamped reads what is there into b, as Read does, and says when the kernel received the
// last of it: arrived is CLOCK_REALTIME in nanoseconds (time.Now().UnixNano()'s clock), 0 when
// the kernel gave no stamp (the end of the stream, an error). One recvmsg.
func (s *Socket) ReadStamped(b []byte) (n int, arrived int64, errno syscall.Errno) {
	iov := syscall.Iovec{Base: &b[0]}
	iov.SetLen(len(b))
	msg := syscall.Msghdr{Iov: &iov, Iovlen: 1, Control: &s.control[0]}
	msg.SetControllen(len(s.control))
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_RECVMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&msg)), 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return 0, 0, e
		}
		n = int(r)
		break
	}
	control := s.control[:msg.Controllen]
	for len(control) >= syscall.CmsgLen(0) {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&control[0]))
		size := int(h.Len)
		if size < syscall.CmsgLen(0) || size > len(control) {
			break
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && size >= syscall.CmsgLen(int(unsafe.Sizeof(syscall.Timespec{}))) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&control[syscall.CmsgLen(0)]))
			arrived = ts.Nano()
		}
		control = control[min(len(control), syscall.CmsgSpace(size-syscall.CmsgLen(0))):]
	}
	return n, arrived, 0
}

// Close closes the socket, if open.
func (s *Socket) Close() {
	if s.fd >= 0 {
		syscall.Close(s.fd)
		s.fd = -1
	}
}
