// Package buildinfo says which authzbench this is: its version, the commit it was built from,
// whether the checkout had changes, and how the commit was found.
package buildinfo

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Version and Commit are set at link time by release builds:
//
//	go build -ldflags "-X github.com/authzbench/authzbench/internal/buildinfo.Version=v0.1.0 \
//	  -X github.com/authzbench/authzbench/internal/buildinfo.Commit=$(git rev-parse HEAD)"
//
// Otherwise they come from the Go toolchain's VCS stamp, or from the checkout itself.
var (
	Version = ""
	Commit  = ""
)

// Source says where the commit came from.
type Source string

const (
	// Linked: -ldflags -X set Commit.
	Linked Source = "-ldflags"
	// Stamped: the Go toolchain recorded it (vcs.revision), as `go build` does in a checkout
	// unless GOFLAGS=-buildvcs=false.
	Stamped Source = "vcs stamp"
	// Checkout: read at run time from the git checkout this binary was compiled in.
	Checkout Source = "checkout at run time"
	// Nowhere: none of the above; the commit is "unknown".
	Nowhere Source = "none"
)

// Info is what Read found.
type Info struct {
	Version string
	// Commit is the full hash, with "-dirty" added when the checkout had changes.
	Commit string
	// Modified is "true" or "false" when known, "unknown" otherwise.
	Modified string
	Source   Source
}

// Get returns the version and commit, "devel" and "unknown" when nothing recorded them.
func Get() (version, commit string) {
	i := Read()
	return i.Version, i.Commit
}

// Read finds the version and commit: from -ldflags, else the toolchain's VCS stamp, else the
// checkout the source was compiled from.
func Read() Info {
	info := Info{Version: Version, Commit: Commit, Modified: "unknown", Source: Nowhere}
	if Commit != "" {
		info.Source = Linked
		if strings.HasSuffix(Commit, "-dirty") {
			info.Modified = "true"
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		if info.Commit == "" {
			var revision, modified string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					revision = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if revision != "" {
				info.Commit, info.Source = revision, Stamped
				if modified != "" {
					info.Modified = modified
				}
			}
		}
	}
	if info.Commit == "" {
		info = fromCheckout(info)
	}
	if info.Commit != "" && info.Modified == "true" && !strings.HasSuffix(info.Commit, "-dirty") {
		info.Commit += "-dirty"
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	return info
}

// fromCheckout reads the commit of the git checkout this file was compiled from, for builds
// without a VCS stamp (GOFLAGS=-buildvcs=false, as here, or `go run`, which never stamps). The
// compiler records this file's absolute path, so a binary built in a checkout and run on the
// same machine can find it again; -trimpath or a binary copied elsewhere cannot, and says
// "unknown".
//
// The limitation: the checkout is read when authzbench runs, not when it was built. A binary
// built with `go build`, followed by a checkout of another commit (or new edits), reports the
// checkout's commit as it is now, not the one it was built from. `go run` builds and runs at
// once, so there the two agree; release builds should use -ldflags, which wins over this.
func fromCheckout(info Info) Info {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return info
	}
	root, gitDir := findGit(filepath.Dir(file))
	if gitDir == "" {
		return info
	}
	commit := headCommit(gitDir)
	if commit == "" {
		return info
	}
	info.Commit, info.Source, info.Modified = commit, Checkout, modified(root)
	return info
}

// findGit walks up from dir to the checkout's root and its git directory: .git itself, or
// the directory a worktree's .git file points at.
func findGit(dir string) (root, gitDir string) {
	for {
		p := filepath.Join(dir, ".git")
		if st, err := os.Stat(p); err == nil {
			if st.IsDir() {
				return dir, p
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return "", ""
			}
			target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
			if !ok {
				return "", ""
			}
			target = strings.TrimSpace(target)
			if !filepath.IsAbs(target) {
				target = filepath.Join(dir, target)
			}
			return dir, target
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ""
		}
		dir = parent
	}
}

// headCommit resolves HEAD without the git binary: a detached hash, or a branch found as a
// loose ref or in packed-refs. A worktree keeps its HEAD in its own git directory and its refs
// in the common one.
func headCommit(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	ref, isRef := strings.CutPrefix(head, "ref:")
	if !isRef {
		return hashOrEmpty(head)
	}
	ref = strings.TrimSpace(ref)
	common := gitDir
	if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
	}
	for _, dir := range []string{gitDir, common} {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(ref))); err == nil {
			return hashOrEmpty(strings.TrimSpace(string(b)))
		}
	}
	f, err := os.Open(filepath.Join(common, "packed-refs"))
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if hash, name, ok := strings.Cut(s.Text(), " "); ok && name == ref {
			return hashOrEmpty(hash)
		}
	}
	return ""
}

// hashOrEmpty accepts a full SHA-1 or SHA-256 object name.
func hashOrEmpty(s string) string {
	if len(s) != 40 && len(s) != 64 {
		return ""
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return ""
		}
	}
	return s
}

// modified asks git whether the checkout differs from its commit in anything the build reads:
// a file added, changed, deleted or renamed, tracked or not, where Go compiles or embeds from
// (cmd/, internal/, go.mod, go.sum, or any .go file). A change elsewhere, such as a result file
// just written to docs/results/, a page of docs being edited while a measurement runs, or a
// user's inputs beside the checkout, changes no build, and marking the run dirty for it would
// make its commit look unreproducible when it is not. "unknown" without a git binary or when it
// fails.
func modified(root string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain").Output()
	if err != nil {
		return "unknown"
	}
	if changesBuild(string(out)) {
		return "true"
	}
	return "false"
}

// changesBuild reads `git status --porcelain` output.
func changesBuild(status string) bool {
	for _, line := range strings.Split(status, "\n") {
		if len(line) < 4 {
			continue
		}
		// A rename names both sides ("R  old -> new"); either may be part of the build.
		for _, path := range strings.Split(line[3:], " -> ") {
			if readByBuild(strings.Trim(path, `"`)) {
				return true
			}
		}
	}
	return false
}

func readByBuild(path string) bool {
	return strings.HasPrefix(path, "cmd/") || strings.HasPrefix(path, "internal/") ||
		path == "go.mod" || path == "go.sum" || strings.HasSuffix(path, ".go")
}

// ModuleVersion is the version of the module at path linked into this binary (its
// replacement's, when replaced), "" when the binary carries no such module, as test binaries
// carry none. Engines that have no version constant of their own (cedar-go's, and most linked
// engines') are read so.
func ModuleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return DepVersion(bi.Deps, path)
}

// DepVersion is the version of the module at path among deps (its replacement's, if replaced),
// "" when it is not there.
func DepVersion(deps []*debug.Module, path string) string {
	for _, m := range deps {
		if m.Path != path {
			continue
		}
		if m.Replace != nil && m.Replace.Version != "" {
			return m.Replace.Version
		}
		return m.Version
	}
	return ""
}
