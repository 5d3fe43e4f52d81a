package sut

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"

	"github.com/authzbench/authzbench/internal/pacing"
)

// TrivialArg is the first argument that makes authzbench (or a test binary) serve the trivial
// server on the address after it: "<self> __trivial-server 127.0.0.1:PORT". The trivial/server
// target starts it so.
const TrivialArg = "__trivial-server"

// trivialServers are the servers that do nothing, by the argument that starts each: the HTTP
// one here, and any other protocol's registered by its own package (RegisterTrivial), so that
// sut needs none of their dependencies.
var trivialServers = map[string]func(net.Listener) error{TrivialArg: ServeTrivial}

// RegisterTrivial adds a trivial server started as "<self> ARG ADDR". Call it from an init.
func RegisterTrivial(arg string, serve func(net.Listener) error) { trivialServers[arg] = serve }

// DispatchTrivialIfAsked serves a trivial server when started as "<self> ARG ADDR" with ARG one
// of the registered arguments (TrivialArg for HTTP), and never returns then. Call it first thing
// in main and in TestMain.
func DispatchTrivialIfAsked() {
	if len(os.Args) != 3 {
		return
	}
	serve, ok := trivialServers[os.Args[1]]
	if !ok {
		return
	}
	l, err := net.Listen("tcp", os.Args[2])
	if err == nil {
		err = serve(l)
	}
	fmt.Fprintln(os.Stderr, "authzbench: trivial server:", err)
	os.Exit(1)
}

// trivialResponse is an OPA-shaped allow, so the opa/server target can drive the trivial server.
var trivialResponse = []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"result\":true}")

// ServeTrivial answers every HTTP/1.1 request on l with a fixed allow, doing as little as a
// server can: read the request line and headers, skip the body, write the canned answer. It is
// what `authzbench calibrate` drives, so the figures show the generator's ceiling, not a
// server's.
func ServeTrivial(l net.Listener) error { return serveTrivial(l, nil) }

// ServeTrivialRecording is ServeTrivial that also records into rec when each request arrives:
// when its first byte can be read, before it is parsed, so the time is the network's and not
// the parser's. Once l is closed it closes its connections and waits for them, so rec can be
// read when it returns.
func ServeTrivialRecording(l net.Listener, rec *pacing.Recorder) error { return serveTrivial(l, rec) }

func serveTrivial(l net.Listener, rec *pacing.Recorder) error {
	var (
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
		wg    sync.WaitGroup
	)
	for {
		c, err := l.Accept()
		if err != nil {
			mu.Lock()
			for c := range conns {
				c.Close()
			}
			mu.Unlock()
			wg.Wait()
			return err
		}
		mu.Lock()
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Go(func() {
			serveConn(c, rec)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		})
	}
}

func serveConn(c net.Conn, rec *pacing.Recorder) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 16<<10)
	for {
		if rec != nil {
			// Peek returns as soon as one byte of the request is there (at once when it was
			// read with the one before it).
			if _, err := r.Peek(1); err != nil {
				return
			}
			rec.Record()
		}
		length, keep, err := readRequest(r)
		if err != nil {
			return
		}
		if _, err := r.Discard(length); err != nil {
			return
		}
		if _, err := c.Write(trivialResponse); err != nil || !keep {
			return
		}
	}
}

// readRequest reads a request line and headers, returning the body length and whether the
// client keeps the connection.
func readRequest(r *bufio.Reader) (length int, keepAlive bool, err error) {
	keepAlive = true
	first := true
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if first {
			first = false
			if len(line) == 0 {
				return 0, false, io.ErrUnexpectedEOF
			}
			continue
		}
		if len(line) == 0 {
			return length, keepAlive, nil
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, false, io.ErrUnexpectedEOF
			}
		case bytes.EqualFold(name, []byte("Connection")):
			keepAlive = !bytes.EqualFold(value, []byte("close"))
		}
	}
}
