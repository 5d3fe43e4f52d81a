package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	hashA = "0123456789abcdef0123456789abcdef01234567"
	hashB = "89abcdef0123456789abcdef0123456789abcdef"
)

// write creates files under dir: path -> content.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The commit is read from .git without the git binary, in every layout git writes.
func TestCheckoutCommit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string // under the checkout root; "../main" is a sibling checkout
		want  string
	}{
		{"branch as a loose ref", map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": hashA + "\n"}, hashA},
		{"branch in packed-refs", map[string]string{".git/HEAD": "ref: refs/heads/main\n",
			".git/packed-refs": "# pack-refs with: peeled fully-peeled sorted\n" + hashB + " refs/heads/other\n" + hashA + " refs/heads/main\n"}, hashA},
		{"loose ref wins over a stale packed one", map[string]string{".git/HEAD": "ref: refs/heads/main\n",
			".git/refs/heads/main": hashB + "\n", ".git/packed-refs": hashA + " refs/heads/main\n"}, hashB},
		{"detached HEAD", map[string]string{".git/HEAD": hashB + "\n"}, hashB},
		{"worktree: HEAD in its own git directory, refs in the common one", map[string]string{
			".git":                                "gitdir: ../main/.git/worktrees/wt\n",
			"../main/.git/worktrees/wt/HEAD":      "ref: refs/heads/feature\n",
			"../main/.git/worktrees/wt/commondir": "../..\n",
			"../main/.git/refs/heads/feature":     hashB + "\n"}, hashB},
		{"a branch with no commit yet", map[string]string{".git/HEAD": "ref: refs/heads/main\n"}, ""},
		{"not a hash", map[string]string{".git/HEAD": "garbage\n"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "checkout")
			write(t, root, tc.files)
			sub := filepath.Join(root, "internal", "buildinfo")
			os.MkdirAll(sub, 0o755)
			gotRoot, gitDir := findGit(sub)
			if gotRoot != root || gitDir == "" {
				t.Fatalf("findGit(%s) = %q, %q; want root %s", sub, gotRoot, gitDir, root)
			}
			if got := headCommit(gitDir); got != tc.want {
				t.Errorf("commit %q, want %q", got, tc.want)
			}
		})
	}
}

// -ldflags wins; without it, a test binary (never VCS-stamped) reads this checkout. Both say
// where the commit came from.
func TestRead(t *testing.T) {
	t.Run("-ldflags", func(t *testing.T) {
		defer func(c string) { Commit = c }(Commit)
		Commit = hashA + "-dirty"
		if i := Read(); i.Commit != hashA+"-dirty" || i.Source != Linked || i.Modified != "true" {
			t.Errorf("%+v", i)
		}
	})
	t.Run("this checkout", func(t *testing.T) {
		i := Read()
		want, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			// No git binary or no checkout (a source tarball): the commit may still be read,
			// but whether it has changes cannot be known.
			if i.Source == Checkout && i.Modified != "unknown" {
				t.Errorf("without git: %+v, want modified unknown", i)
			}
			if i.Source != Checkout && i.Commit != "unknown" {
				t.Errorf("no checkout: %+v, want commit unknown", i)
			}
			return
		}
		if i.Source != Checkout || strings.TrimSuffix(i.Commit, "-dirty") != strings.TrimSpace(string(want)) {
			t.Errorf("%+v; want commit %s read from the checkout", i, want)
		}
		status, _ := exec.Command("git", "status", "--porcelain").Output()
		if dirty := changesBuild(string(status)); i.Modified != map[bool]string{true: "true", false: "false"}[dirty] ||
			strings.HasSuffix(i.Commit, "-dirty") != dirty {
			t.Errorf("%+v; git status says dirty=%t", i, dirty)
		}
	})
}

func TestChangesBuild(t *testing.T) {
	for _, tc := range []struct {
		status string
		want   bool
	}{
		{"", false},
		{"?? docs/results/quickstart-2026-11-23.json\n", false},
		{"?? inputs.jsonl\n?? results/\n", false},
		{" M README.md\n", false},            // docs are not built
		{" M docs/cross-engine.md\n", false}, // edited while a measurement runs
		{" M internal/load/open.go\n", true},
		{" M tools/gen.go\n", true}, // Go anywhere may be built
		{"?? docs/x.md\n M go.mod\n", true},
		{"?? internal/load/new.go\n", true},
		{"?? cmd/authzbench/x.go\n", true},
		{"?? go.sum\n", true},
		{"D  internal/verify/verify.go\n", true},
		{"R  a.go -> b.go\n", true},
		{"R  docs/a.md -> internal/workload/policies/a.rego\n", true},
		{"R  docs/a.md -> docs/b.md\n", false},
	} {
		if got := changesBuild(tc.status); got != tc.want {
			t.Errorf("changesBuild(%q) = %t, want %t", tc.status, got, tc.want)
		}
	}
}
