//go:build !linux

package httpload

import "syscall"

// Socket: only Linux drivers own their sockets; elsewhere they go through net.Conn.
type Socket struct{}

// SocketsSupported is false: a driver uses Conn.
const SocketsSupported = false

func ResolveTCP(string) (syscall.Sockaddr, error)              { return nil, syscall.ENOSYS }
func NewSocket() *Socket                                       { return &Socket{} }
func (*Socket) Fd() int                                        { return -1 }
func (*Socket) Dial(syscall.Sockaddr) (bool, error)            { return false, syscall.ENOSYS }
func (*Socket) Connected() error                               { return syscall.ENOSYS }
func (*Socket) Write([]byte) (int, syscall.Errno)              { return 0, syscall.ENOSYS }
func (*Socket) Read([]byte) (int, syscall.Errno)               { return 0, syscall.ENOSYS }
func (*Socket) ReadStamped([]byte) (int, int64, syscall.Errno) { return 0, 0, syscall.ENOSYS }
func (*Socket) Close()                                         {}
