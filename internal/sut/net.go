package sut

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
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
		return "", fmt.Errorf("--port %d: not a TCP port; want 1 to 65535, or omit it to use a free one", port)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("port %d is already in use on 127.0.0.1 (choose another with --port, or omit it to use a free one): %w", port, err)
	}
	l.Close()
	return addr, nil
}

// WaitHealthy polls url until it answers 200, the process exits, or the timeout passes.
func WaitHealthy(ctx context.Context, url string, p *Process, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		last = err
		select {
		case <-p.Exited():
			return p.startError()
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s not healthy at %s after %s (last: %v); last output:\n%s", p.Name, url, timeout, last, p.Tail())
			}
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
