package openfga

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// ServerCommand is how to start an OpenFGA server: `authzbench openfga run` (the server
// assembled here, over the OpenFGA linked in) or OpenFGA's own binary's `run`, to measure the
// server exactly as OpenFGA ships it, or another version.
type ServerCommand struct {
	Path    string
	Prefix  []string // arguments before `run`: ["openfga"] for authzbench itself
	Version string   // the OpenFGA version it serves, as the environment records it
}

// LinkedServer is `authzbench openfga run`, this executable.
func LinkedServer() (ServerCommand, error) {
	self, err := os.Executable()
	if err != nil {
		return ServerCommand{}, fmt.Errorf("find own executable to run OpenFGA: %w", err)
	}
	return ServerCommand{Path: self, Prefix: []string{Arg}, Version: Version()}, nil
}

// BinaryServer is the OpenFGA binary at path, after checking that it exists and answers
// `version` as OpenFGA does: a binary that does not is bad input, found before any load.
func BinaryServer(ctx context.Context, path string) (ServerCommand, error) {
	p, err := exec.LookPath(path)
	if err != nil {
		return ServerCommand{}, fmt.Errorf("%s: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// OpenFGA prints its version through Go's log package, on stderr.
	out, err := exec.CommandContext(ctx, p, "version").CombinedOutput()
	if err != nil {
		return ServerCommand{}, fmt.Errorf("%s is not an OpenFGA server binary: %s version: %w: %s", path, path, err, firstLine(out))
	}
	v, ok := versionIn(string(out))
	if !ok {
		return ServerCommand{}, fmt.Errorf("%s is not an OpenFGA server binary: %s version printed no \"OpenFGA version `...`\" line: %s", path, path, firstLine(out))
	}
	return ServerCommand{Path: p, Version: v}, nil
}

// versionLine is what OpenFGA's version command prints (and `authzbench openfga version`):
// "OpenFGA version `v1.22.1` build from `<commit>` on `<date>`".
var versionLine = regexp.MustCompile("OpenFGA version `([^`]+)`")

func versionIn(out string) (string, bool) {
	m := versionLine.FindStringSubmatch(out)
	if m == nil {
		return "", false
	}
	return m[1], true
}

func firstLine(out []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if line == "" {
		return "no output"
	}
	return line
}

// Command is the server's run command with args.
func (c ServerCommand) Command(args ...string) *exec.Cmd {
	return exec.Command(c.Path, append(append(append([]string{}, c.Prefix...), "run"), args...)...)
}
