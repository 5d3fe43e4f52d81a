package opa

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/engine/opa/opacli"
)

// Program is how to run OPA's command line: the OPA linked into authzbench ("<self> opa ..."),
// the slim authzbench-opa beside it, or an external opa binary to benchmark another OPA version.
type Program struct {
	Path   string   // executable
	Prefix []string // arguments before OPA's own, ["opa"] for authzbench itself
}

// Linked runs the OPA linked into this executable.
func Linked() (Program, error) {
	self, err := os.Executable()
	if err != nil {
		return Program{}, fmt.Errorf("find own executable to run OPA: %w", err)
	}
	return Program{Path: self, Prefix: []string{opacli.Arg}}, nil
}

// Beside runs opacli.Command where it lies beside this executable (built with it: go build
// -o DIR ./cmd/authzbench ./cmd/authzbench-opa); ok is false where there is none.
func Beside() (p Program, ok bool) {
	self, err := os.Executable()
	if err != nil {
		return Program{}, false
	}
	return BesideExecutable(self)
}

// BesideExecutable is Beside for the executable exe: an executable regular file
// opacli.Command in exe's folder.
func BesideExecutable(exe string) (p Program, ok bool) {
	path := filepath.Join(filepath.Dir(exe), opacli.Command)
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return Program{}, false
	}
	return Program{Path: path}, true
}

// External runs the opa binary at path, after checking that it exists and answers `version`
// as OPA does: a binary that does not is bad input, found before any load.
func External(path string) (Program, error) {
	p, err := exec.LookPath(path)
	if err != nil {
		return Program{}, fmt.Errorf("%s: %w", path, err)
	}
	o := Program{Path: p}
	if _, err := o.Version(context.Background()); err != nil {
		return Program{}, fmt.Errorf("%s is not an OPA command line: %w", path, err)
	}
	return o, nil
}

// Args returns the full argument list for an OPA invocation.
func (o Program) Args(args ...string) []string {
	return append(append([]string{}, o.Prefix...), args...)
}

// Command returns an exec.Cmd running OPA with args.
func (o Program) Command(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, o.Path, o.Args(args...)...)
}

// String is the command line as a person would type it.
func (o Program) String() string { return strings.Join(append([]string{o.Path}, o.Prefix...), " ") }

// Version asks the OPA command for its version.
func (o Program) Version(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := o.Command(ctx, "version").Output()
	if err != nil {
		return "", fmt.Errorf("%s version: %w", o, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "Version:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s version: no Version line in %q", o, out)
}
