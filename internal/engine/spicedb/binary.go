package spicedb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ServerProgram is the name of authzbench's own SpiceDB server, SpiceDB's command line with
// loopback defaults (cmd/authzbench-spicedb): a program of its own, since SpiceDB's server
// links every datastore SpiceDB supports.
const ServerProgram = "authzbench-spicedb"

// ServerCommand is a SpiceDB server binary to start: SpiceDB's own release binary, or
// authzbench-spicedb. Both take `serve` and SpiceDB's flags.
type ServerCommand struct {
	Path    string
	Version string // what its version command says: "v1.56.2"
	// Found says how it was found, for messages: "--spicedb-bin", "beside authzbench", "on PATH".
	Found string
}

// ErrNoServer is what FindServer's error wraps when no SpiceDB server binary was given or found.
var ErrNoServer = errors.New("no SpiceDB server binary")

// NoServerError is ErrNoServer with where FindServer looked.
type NoServerError struct {
	Beside string // the directory of the authzbench executable
}

func (e *NoServerError) Error() string {
	return fmt.Sprintf("no %s beside authzbench (in %s) or on PATH", ServerProgram, e.Beside)
}

func (e *NoServerError) Is(target error) bool { return target == ErrNoServer }

// FindServer finds the SpiceDB server to start: bin when given (a path, or a name on PATH),
// else authzbench-spicedb beside the running executable, else on PATH. The binary found is
// asked its version, so that a missing or wrong one is refused before any load.
func FindServer(ctx context.Context, bin string) (ServerCommand, error) {
	self, err := os.Executable()
	if err != nil {
		self = ""
	}
	return findServer(ctx, bin, filepath.Dir(self))
}

func findServer(ctx context.Context, bin, besideDir string) (ServerCommand, error) {
	if bin != "" {
		path, err := exec.LookPath(bin)
		if err != nil {
			return ServerCommand{}, fmt.Errorf("%s: %w", bin, err)
		}
		return askVersion(ctx, ServerCommand{Path: path, Found: "--spicedb-bin"})
	}
	if besideDir != "" {
		path := filepath.Join(besideDir, ServerProgram)
		if info, err := os.Stat(path); err == nil && !info.IsDir() {
			return askVersion(ctx, ServerCommand{Path: path, Found: "beside authzbench"})
		}
	}
	if path, err := exec.LookPath(ServerProgram); err == nil {
		return askVersion(ctx, ServerCommand{Path: path, Found: "on PATH"})
	}
	return ServerCommand{}, &NoServerError{Beside: besideDir}
}

// askVersion runs the binary's version command, which SpiceDB's release binary and
// authzbench-spicedb answer alike: "spicedb v1.56.2".
func askVersion(ctx context.Context, c ServerCommand) (ServerCommand, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.Path, "version").Output()
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	which := c.Path // as the user gave it, or where it was found
	if c.Found != "--spicedb-bin" {
		which += " (found " + c.Found + ")"
	}
	if err != nil {
		return ServerCommand{}, fmt.Errorf("%s is not a SpiceDB server binary: %s version: %w", which, c.Path, err)
	}
	v, ok := strings.CutPrefix(line, "spicedb ")
	if !ok || strings.TrimSpace(v) == "" {
		if line == "" {
			line = "no output"
		}
		return ServerCommand{}, fmt.Errorf("%s is not a SpiceDB server binary: %s version printed %q, not \"spicedb <version>\"", which, c.Path, line)
	}
	c.Version = strings.TrimSpace(v)
	return c, nil
}

// Command is the server's serve command with args.
func (c ServerCommand) Command(args ...string) *exec.Cmd {
	return exec.Command(c.Path, append([]string{"serve"}, args...)...)
}
