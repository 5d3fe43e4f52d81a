package bench

import (
	"net"
	"strconv"
)

func itoa(i int) string { return strconv.Itoa(i) }

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }
