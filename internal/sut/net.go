package sut

import (
	"fmt"
	"net"
	"strconv"
)

// FreeAddr returns a loopback address with a port nobody listens on right now.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// CheckFree fails with a clear error when something already listens on the loopback port, or
// when port is no TCP port at all.
func CheckFree(port int) (string, error) {
	if port < 1 || port > 65535 {
		return "", fmt.Errorf("%d: not a TCP port; want 1 to 65535, or none for a free one", port)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("%d is already in use on 127.0.0.1 (choose another, or none for a free one): %w", port, err)
	}
	l.Close()
	return addr, nil
}
